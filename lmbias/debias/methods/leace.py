"""``--method leace``: LEAst-squares Concept Erasure (Belrose et al. 2023, the ``concept-erasure``
package): the closed-form affine eraser ``x -> x - P (x - mean)`` after which no linear classifier
predicts the attribute class better than a constant, with the least change to x in the mean-squared
sense. Fitted on the same labelled sentence representations as INLP (class one-hot vectors as the
concept) and applied to every final hidden state. ``record`` keeps a fresh probe's test accuracy
before and after (bias-bench's split)."""

from __future__ import annotations

import numpy as np

from ..attribute_words import BIAS_TYPES
from . import DebiasMethod, Projection
from .fitting import class_features, probe_accuracy, require, split_70_30


def leace_map(x: np.ndarray, y: np.ndarray, classes: int) -> tuple:
    """``(matrix, offset)`` with ``x @ matrix.T + offset`` the LEACE eraser fitted on ``x`` and class labels ``y``."""
    import torch
    from concept_erasure import LeaceFitter

    features = torch.tensor(x, dtype=torch.float64)
    concept = torch.nn.functional.one_hot(torch.tensor(y), classes).to(torch.float64)
    eraser = LeaceFitter.fit(features, concept).eraser
    matrix = torch.eye(x.shape[1], dtype=torch.float64) - eraser.proj_left @ eraser.proj_right
    return matrix, (torch.eye(x.shape[1], dtype=torch.float64) - matrix) @ eraser.bias


def _transform(preparation) -> Projection:
    require("sklearn", "scikit-learn", "leace")
    require("concept_erasure", "concept-erasure", "leace")
    x, y, names, counts = class_features(preparation)
    (train_x, train_y), _, (test_x, test_y) = split_70_30(x, y)
    matrix, offset = leace_map(train_x, train_y, len(names))
    erase = lambda v: v @ matrix.numpy().T + offset.numpy()  # noqa: E731
    record = {"classes": dict(zip(names, counts)),
              "probe_test_accuracy": {"before": probe_accuracy(train_x, train_y, test_x, test_y),
                                      "after": probe_accuracy(erase(train_x), train_y, erase(test_x), test_y),
                                      "majority_class": float(np.bincount(test_y).max() / len(test_y))}}
    return Projection(matrix.float(), offset.float(), record)


METHOD = DebiasMethod(
    name="leace",
    description="LEACE (Belrose et al. 2023): the closed-form least-squares eraser of the attribute from the final hidden states",
    transform=_transform,
    bias_types=BIAS_TYPES,
)
