"""The fairness losses of Huang et al. (2020, §4) on a causal LM's hidden features.

``h̄(x_1:i)``, the paper's sentence feature, is the average of the last two layers' hidden states at
position ``i`` (:func:`mean_last_two`). Which positions ``i`` the paper regularises is not stated;
lmbias compares the prefix ends the two texts share after the substitution (:func:`aligned_positions`):
the last token of the replaced span and every token after it, matched from the end, since the
continuation after a prefix is what the fairness metrics measure. ``position="all"`` (default)
averages the distance over those prefix ends, ``position="last"`` takes the text's last token only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

POSITIONS = ("all", "last")


def mean_last_two(hidden_states: Sequence[Any]) -> Any:
    """h̄: the average of the last two layers' hidden states (``output_hidden_states=True``), (batch, length, width)."""
    return (hidden_states[-1] + hidden_states[-2]) / 2


def aligned_positions(ids: Sequence[int], other: Sequence[int], position: str = "all") -> tuple[list[int], list[int]]:
    """The prefix ends compared between a text's token ids and its counterfactual's: the tokens the
    two share at their ends (matched from the end) plus the last token of the replaced span, as
    positions in each; ``position="last"`` keeps only the last token of each.

    >>> aligned_positions([1, 5, 6, 7], [1, 9, 6, 7])
    ([1, 2, 3], [1, 2, 3])
    >>> aligned_positions([1, 5, 6, 7], [1, 8, 9, 6, 7], "last")
    ([3], [4])
    """
    shared = 0
    while shared < min(len(ids), len(other)) - 1 and ids[-1 - shared] == other[-1 - shared]:
        shared += 1
    if position == "last":
        return [len(ids) - 1], [len(other) - 1]
    return list(range(len(ids) - shared - 1, len(ids))), list(range(len(other) - shared - 1, len(other)))


def cosine_distance(a: Any, b: Any) -> Any:
    """1 − cos(a, b) along the last axis (torch tensors)."""
    import torch

    return 1 - torch.nn.functional.cosine_similarity(a.float(), b.float(), dim=-1, eps=1e-8)


def gather_positions(features: Any, positions: Sequence[Sequence[int]]) -> tuple[Any, Any]:
    """``features[j, positions[j]]`` of every item, stacked, and the item index of each row."""
    import torch

    rows = torch.tensor([j for j, where in enumerate(positions) for _ in where], device=features.device)
    columns = torch.tensor([p for where in positions for p in where], device=features.device)
    return features[rows, columns], rows


def pair_distance(features: Any, counterfactual_features: Any, positions: Sequence[tuple[list[int], list[int]]],
                  head: Any = None) -> Any:
    """Per pair, the mean distance between the aligned prefix ends' features (:func:`aligned_positions`):
    cosine distance of h̄ (embedding regularisation), or, with ``head`` (a :class:`~lmbias.debias.sentiment_head.SentimentHead`),
    ``head.distance`` of its outputs (sentiment regularisation). Returns a tensor of shape (pairs,)."""
    import torch

    mine, rows = gather_positions(features, [p for p, _ in positions])
    theirs, _ = gather_positions(counterfactual_features, [q for _, q in positions])
    distances = cosine_distance(mine, theirs) if head is None else head.distance(mine, theirs)
    totals = torch.zeros(len(positions), device=distances.device).index_add_(0, rows, distances)
    return totals / torch.tensor([len(p) for p, _ in positions], device=distances.device)


def batch_distance(output: Any, counterfactual_output: Any, positions: Sequence[tuple[list[int], list[int]]],
                   head: Any = None) -> Any:
    """A batch's L_fairness: :func:`pair_distance` of h̄ of two model outputs (``output_hidden_states=True``),
    averaged over the pairs (a scalar tensor)."""
    return pair_distance(mean_last_two(output.hidden_states), mean_last_two(counterfactual_output.hidden_states), positions,
                         head).mean()
