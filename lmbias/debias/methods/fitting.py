"""What the projection methods share: the labelled sentence representations they are fitted on,
bias-bench's data split, and the linear probe that checks what a projection left."""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ...lm.representations import mean_hidden_states
from ..projection_data import labelled_sentences


def require(module: str, package: str, method: str) -> None:
    """Raise a one-line :class:`~lmbias.errors.InputError` when ``module`` (from ``package``) is not installed."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise InputError(f"--method {method} needs {package}: pip install 'lmbias[debias]'")


def class_features(preparation) -> tuple[np.ndarray, np.ndarray, list[str], list[int]]:
    """``(x, y, class names, count per class)``: the mean final hidden states of the corpus's labelled
    sentences (:func:`~lmbias.debias.projection_data.labelled_sentences`) for ``--bias-type``."""
    settings = preparation.settings
    sentences, labels, names = labelled_sentences(preparation.texts, settings["bias_type"], per_class=settings["fit_sentences"],
                                                  seed=settings["seed"], data_dir=preparation.data_dir)
    x = mean_hidden_states(preparation.model, preparation.tokenizer, sentences, batch_size=settings["batch_size"],
                           max_length=settings["max_length"], label=f"debias: encoding {len(sentences):,} sentences")
    y = np.asarray(labels)
    return x.astype(np.float64), y, names, np.bincount(y, minlength=len(names)).tolist()


def split_70_30(x: np.ndarray, y: np.ndarray) -> tuple:
    """bias-bench's split: 30 % test, then 30 % of the rest dev (``random_state=0`` both times);
    returns ``((train_x, train_y), (dev_x, dev_y), (test_x, test_y))``."""
    from sklearn.model_selection import train_test_split

    rest_x, test_x, rest_y, test_y = train_test_split(x, y, test_size=0.3, random_state=0)
    train_x, dev_x, train_y, dev_y = train_test_split(rest_x, rest_y, test_size=0.3, random_state=0)
    return (train_x, train_y), (dev_x, dev_y), (test_x, test_y)


def probe_accuracy(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray) -> float:
    """Test accuracy of a fresh linear probe (logistic regression, standardised inputs) for the class."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    probe.fit(train_x, train_y)
    return round(float(probe.score(test_x, test_y)), 4)
