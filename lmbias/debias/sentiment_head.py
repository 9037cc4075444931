"""Step 2 of the paper's curriculum (Huang et al. 2020, §4 and Appendix B): a sentiment classifier
f_s on the frozen LM's features, used by the sentiment regulariser of step 3.

f_s is a 3-layer MLP with hidden size 128 (Appendix B) on h̄ (:func:`~lmbias.debias.regularizers.mean_last_two`)
at a text's last token. The paper labelled its corpus with the Google Cloud sentiment API and kept
texts with |score| > 0.7, positive and negative only; lmbias labels with a scorer it has: VADER's
compound score (default) or the Hu & Liu opinion words (2 · p/(p+n) − 1), with the same threshold.

The regulariser's distance (``distance``): ``"hidden"`` (default), the cosine distance of f_s's
last hidden layer (the paper: "the output of f_s can be multi-dimensional (e.g., a hidden layer)"),
or ``"probability"``, the absolute difference of the predicted probability of positive sentiment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..checks import check_choice
from ..errors import InputError

LABELERS = ("vader", "opinion")
DISTANCES = ("hidden", "probability")
HIDDEN = 128


def sentiment_labels(texts: Sequence[str], labeler: str = "vader", threshold: float = 0.7, *, data_dir=None) -> tuple[list[int], list[int]]:
    """``(indices, labels)`` of the texts whose sentiment magnitude exceeds ``threshold`` (1 positive, 0 negative)."""
    check_choice(labeler, LABELERS, "sentiment_labels")
    if labeler == "vader":
        from ..scorers.vader import vader_compound

        scores = vader_compound(list(texts))
    else:
        from ..benchmarks.counterfactual.scorers.sentiment import opinion_lexicon, opinion_scores

        scores = 2 * opinion_scores(list(texts), opinion_lexicon(data_dir)) - 1
    index = [int(i) for i in np.flatnonzero(np.abs(scores) > threshold)]
    return index, [int(scores[i] > 0) for i in index]


def _module(width: int):
    import torch

    class SentimentHead(torch.nn.Module):
        """f_s: width -> 128 -> 128 -> 2 (ReLU)."""

        def __init__(self):
            super().__init__()
            self.hidden = torch.nn.Sequential(torch.nn.Linear(width, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN),
                                              torch.nn.ReLU())
            self.output = torch.nn.Linear(HIDDEN, 2)
            self.distance_kind = "hidden"

        def forward(self, features):
            return self.output(self.hidden(features.float()))

        def positive_probability(self, features):
            """P(positive) per feature row."""
            return self(features).softmax(-1)[..., 1]

        def distance(self, a, b):
            """The regulariser's distance between the outputs for two feature rows (see the module docstring)."""
            if self.distance_kind == "probability":
                return (self.positive_probability(a) - self.positive_probability(b)).abs()
            from .regularizers import cosine_distance

            return cosine_distance(self.hidden(a.float()), self.hidden(b.float()))

    return SentimentHead()


def new_head(width: int, distance: str = "hidden") -> Any:
    """An untrained f_s for features of ``width``."""
    check_choice(distance, DISTANCES, "sentiment_distance")
    head = _module(width)
    head.distance_kind = distance
    return head


def train_head(features: Any, labels: Sequence[int], *, distance: str = "hidden", steps: int = 300, seed: int = 0) -> tuple[Any, dict]:
    """Train f_s on ``features`` (a float tensor, one row per labelled text) with class-balanced
    cross-entropy (Adam, learning rate 1e-3, full batch); 10 % of the rows are held out for its F1.
    Returns the frozen head and ``{"examples", "positive", "negative", "held_out_f1"}``.

    Raises:
        InputError: fewer than 10 examples of either label.
    """
    import torch

    labels = torch.tensor(list(labels))
    positive, negative = int(labels.sum()), int((labels == 0).sum())
    if min(positive, negative) < 10:
        raise InputError(f"the sentiment classifier needs at least 10 positive and 10 negative texts above the threshold; "
                         f"the corpus gave {positive} positive and {negative} negative (lower --label-threshold or add text)")
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    order = torch.randperm(len(labels), generator=generator)
    test, train = order[: len(order) // 10], order[len(order) // 10 :]
    head = new_head(features.shape[-1], distance)
    weights = torch.tensor([len(labels) / (2 * negative), len(labels) / (2 * positive)])
    optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
    features = features.float()
    for _ in range(steps):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(head(features[train]), labels[train], weight=weights).backward()
        optimizer.step()
    head.zero_grad(set_to_none=True)  # frozen from here on: no gradient kept, none accumulates
    head.eval().requires_grad_(False)
    with torch.no_grad():
        predicted = head(features[test]).argmax(-1)
    truth = labels[test]
    true_positive = int(((predicted == 1) & (truth == 1)).sum())
    f1 = 2 * true_positive / max(int((predicted == 1).sum()) + int((truth == 1).sum()), 1)
    return head, {"examples": len(labels), "positive": positive, "negative": negative, "held_out_f1": round(f1, 4)}
