"""``--method inlp``: Iterative Nullspace Projection (Ravfogel et al. 2020) as bias-bench applies it
to language models (Meade et al. 2022): linear classifiers (scikit-learn's ``LinearSVC``, no
intercept, ``dual=False``, ``random_state=0``) are trained, one after another, to predict the
attribute class of a sentence from its representation (:mod:`lmbias.lm.representations`: the mean
final hidden state), each on the data projected onto the nullspace of the ones before; the
projection onto the intersection of their nullspaces, P, is applied to every final hidden state.

bias-bench's settings: 80 classifiers (``--iterations``), sentences split 70/30 into train+dev and
test, train+dev again 70/30 (``random_state=0``); gender has three classes (male, female, neutral),
race and religion two (:func:`lmbias.debias.projection_data.labelled_sentences`). ``record`` keeps the
test accuracy of a fresh classifier before and after the projection (chance: the majority class).

Like bias-bench, every classifier asked for is trained and its rowspace removed, except when the
projected training vectors are all zero (no direction is left: no further classifier could change
P). Since each classifier removes at least one direction, at most the rank of the training vectors
run: ``--iterations 100000`` on 10 sentences per class stops after a few. ``--stop-at-chance`` (not
bias-bench's) also stops at the first classifier whose dev accuracy is no better than the dev set's
majority class, without removing its direction. ``record["stopped"]`` says why it stopped early
(None: it ran all ``--iterations``).
"""

from __future__ import annotations

import sys

import numpy as np

from ... import progress
from ...checks import check_scalar
from ..attribute_words import BIAS_TYPES
from . import DebiasMethod, Projection
from .fitting import class_features, probe_accuracy, require, split_70_30


def rowspace_projection(weights: np.ndarray) -> np.ndarray:
    """The orthogonal projection onto the row space of ``weights`` (zeros for an all-zero matrix)."""
    import scipy.linalg

    if np.allclose(weights, 0):
        return np.zeros((weights.shape[1], weights.shape[1]))
    basis = scipy.linalg.orth(weights.T)
    return basis @ basis.T


def nullspace_projection(rowspaces: list, dim: int) -> np.ndarray:
    """The projection onto the intersection of the nullspaces whose row-space projections are
    ``rowspaces``: I - P_R(sum of them) (Ben-Israel 2013, as Ravfogel et al. use it)."""
    if not rowspaces:
        return np.eye(dim)
    return np.eye(dim) - rowspace_projection(np.sum(rowspaces, axis=0))


def inlp_projection(train_x, train_y, dev_x, dev_y, *, iterations: int = 80,
                    stop_at_chance: bool = False) -> tuple[np.ndarray, list[float], str | None]:
    """P after at most ``iterations`` classifiers, each classifier's dev accuracy, and why it stopped
    early (None: it did not). It stops when the projected training vectors are all zero (no
    direction is left to find: no classifier after that could change P), and with
    ``stop_at_chance`` at the first classifier whose dev accuracy is no better than always answering
    the dev set's majority class (its direction is not removed). See the module docstring."""
    from sklearn.svm import LinearSVC

    dim, accuracies = train_x.shape[1], []
    chance = float(np.bincount(dev_y).max() / len(dev_y))
    scale = float(np.abs(train_x).max()) or 1.0
    rowspace_sum = np.zeros((dim, dim))  # the sum of the rowspace projections (a running sum: one d x d matrix)
    projection, projected_train, projected_dev = np.eye(dim), train_x, dev_x
    # Each classifier removes at least one of the dim directions, or the loop stops: at most dim of them run.
    with progress.bar(min(iterations, dim), "debias: inlp classifiers", unit="classifier") as shown:
        for number in range(1, iterations + 1):
            if float(np.abs(projected_train).max()) <= 1e-9 * scale:
                return projection, accuracies, (f"the projected training vectors are all zero after {number - 1} classifiers: "
                                                "no direction is left to remove")
            classifier = LinearSVC(fit_intercept=False, class_weight=None, dual=False, random_state=0)
            classifier.fit(projected_train, train_y)
            accuracies.append(float(classifier.score(projected_dev, dev_y)))
            if stop_at_chance and accuracies[-1] <= chance:
                return projection, accuracies, (f"classifier {number} is at chance (dev accuracy {accuracies[-1]:.3f}, the "
                                                f"majority class {chance:.3f}); its direction is not removed")
            rowspace_sum += rowspace_projection(np.atleast_2d(classifier.coef_))
            projection = np.eye(dim) - rowspace_projection(rowspace_sum)
            projected_train, projected_dev = train_x @ projection.T, dev_x @ projection.T
            shown.update(1)
    return projection, accuracies, None


def _add_arguments(parser) -> None:
    parser.add_argument("--iterations", type=int, default=80, help="inlp: classifiers trained, one nullspace each (bias-bench: "
                                                                   "80; fewer when no direction is left)")
    parser.add_argument("--stop-at-chance", action="store_true", help="inlp: stop at the first classifier whose dev accuracy "
                                                                      "is no better than the majority class (not bias-bench's)")


def _check(options: dict) -> None:
    check_scalar(options["iterations"], "iterations", minimum=1)


def _transform(preparation) -> Projection:
    require("sklearn", "scikit-learn", "inlp")
    import torch

    x, y, names, counts = class_features(preparation)
    (train_x, train_y), (dev_x, dev_y), (test_x, test_y) = split_70_30(x, y)
    iterations = preparation.settings["iterations"]
    projection, accuracies, stopped = inlp_projection(train_x, train_y, dev_x, dev_y, iterations=iterations,
                                                      stop_at_chance=preparation.settings["stop_at_chance"])
    if stopped and progress.enabled():
        print(f"debias: inlp stopped before --iterations {iterations:,}: {stopped}", file=sys.stderr, flush=True)
    record = {"classes": dict(zip(names, counts)), "dimensions_removed": int(round(x.shape[1] - np.trace(projection))),
              "stopped": stopped,
              "dev_accuracy_per_iteration": [round(a, 4) for a in accuracies],
              "probe_test_accuracy": {"before": probe_accuracy(train_x, train_y, test_x, test_y),
                                      "after": probe_accuracy(train_x @ projection.T, train_y, test_x @ projection.T, test_y),
                                      "majority_class": float(np.bincount(test_y).max() / len(test_y))}}
    return Projection(torch.tensor(projection, dtype=torch.float32), torch.zeros(x.shape[1]), record)


METHOD = DebiasMethod(
    name="inlp",
    description="Iterative Nullspace Projection (Ravfogel et al. 2020; bias-bench's settings): the final hidden states "
                "projected onto the nullspace of linear classifiers of the attribute",
    add_arguments=_add_arguments,
    check=_check,
    transform=_transform,
    bias_types=BIAS_TYPES,
)
