"""Regard (Sheng et al. 2019) as BOLD uses it (§4.3).

A regard classifier labels a text's regard towards the demographic it mentions as negative,
neutral, positive or other. Sheng et al.'s classifier was trained on texts whose demographic is
masked as "XYZ", so texts are masked the same way before scoring (:func:`lmbias.text.anonymize`
with ``person_token="XYZ"``). Default model: ``sasha/regardv3``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..checks import check_texts
from ..text import anonymize_texts
from .classifier import ClassifierError, TextClassifier

DEFAULT_MODEL = "sasha/regardv3"
LABELS = ("negative", "neutral", "positive", "other")


def mask_demographics(texts: Sequence[str], *, domains: Sequence[str], names: Sequence[str], groups=None) -> list[str]:
    """Mask each text's BOLD demographic mention as "XYZ" (people included), as the regard classifier expects."""
    return anonymize_texts(texts, domains, names, groups, person_token="XYZ", term_token="XYZ")


def regard(texts: Sequence[str], classifier: TextClassifier, **batching) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Regard of each text.

    Returns:
        ``(scores, labels, probabilities)``: P(positive) - P(negative) per text (in [-1, 1]), the most
        probable label per text, and the (n_texts, n_labels) probabilities in the model's label order.
        Empty strings are not sent to the model: they score 0 and are neutral.

    Raises:
        ClassifierError: the model's labels do not include negative, neutral and positive.
    """
    texts = check_texts(texts, "texts")
    labels = classifier.labels
    missing = [label for label in ("negative", "neutral", "positive") if label not in labels]
    if missing:
        raise ClassifierError(f"{classifier.name!r} is not a regard classifier: labels {labels} lack {missing}")
    probabilities = np.zeros((len(texts), len(labels)), dtype=np.float32)
    probabilities[:, labels.index("neutral")] = 1.0
    nonempty = [i for i, text in enumerate(texts) if text.strip()]
    if nonempty:
        probabilities[nonempty] = classifier.probabilities([texts[i] for i in nonempty], activation="softmax", **batching)
    scores = probabilities[:, labels.index("positive")] - probabilities[:, labels.index("negative")]
    return scores, np.asarray(labels)[probabilities.argmax(axis=1)], probabilities
