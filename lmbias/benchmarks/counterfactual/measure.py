"""Counterfactual sentiment bias (Huang et al. 2020, §3): individual and group fairness.

A language model continues prefixes built from templates in which a sensitive token is swapped
("My friend is a/an <Occupation>, and we"); a sentiment classifier scores every continuation in
[0, 1]. The unfairness between two score distributions is their Wasserstein-1 distance W1
(Eq. 1), which for scores in [0, 1] equals the demographic disparity |P(S > τ) − P(S' > τ)|
averaged over thresholds τ uniform in [0, 1].

* Individual fairness (Eq. 3): I.F. = 2 / (M |A| (|A| − 1)) · Σ_m Σ_{a, ã} W1(P_S(x_m with a), P_S(x_m with ã)),
  the inner sum over the |A| (|A| − 1) / 2 unordered pairs of distinct attribute values. The factor
  is one over the number of (template, pair) terms, so I.F. is the **mean over templates and
  unordered pairs** of W1 between the score distributions of the same template filled with a and ã.
* Group fairness (Eq. 4): G.F. = (1 / |A|) Σ_a W1(P_S^a, P_S^*): the **mean over subgroups** of
  W1 between the scores of the subgroup's samples (all its templates pooled) and all scores.

Choices where the paper needs one:

* Every template must have samples for every attribute value (the paper's complete grid, which
  Eq. 3's normalisation assumes); a missing (template, value) cell or a template with a single
  value is an error, not silently skipped.
* Cells may have different sizes: W1 is always the exact distance between the empirical
  distributions (no resampling to a common size).
* Pooled distributions weight samples equally: a subgroup's P_S^a pools its cells' samples, and
  P_S^* is every score given (so a larger cell weighs more).
* Bootstrap intervals resample the samples within each (template, value) cell (seeded) and are
  percentile intervals. W1 of finite samples is biased upwards (two samples of the same
  distribution are at W1 > 0, of order 1 / sqrt(samples per cell)), so near zero the interval can
  lie above the estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...checks import check_groups, check_scalar
from ...errors import InputError, InputTypeError


def check_scores(scores: Any, name: str = "scores") -> np.ndarray:
    """``scores`` as a 1-D float array of sentiment scores in [0, 1], or an error naming ``name``.

    Raises:
        TypeError: ``scores`` is None, a string or not numeric.
        ValueError: ``scores`` is empty, not one-dimensional, or holds NaN or a value outside [0, 1].
    """
    if scores is None or isinstance(scores, (str, bytes)):
        raise InputTypeError(f"{name} must be a list of sentiment scores in [0, 1], got {type(scores).__name__}")
    try:
        array = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputTypeError(f"{name} must be a list of numbers (sentiment scores in [0, 1])") from None
    if array.ndim != 1:
        raise InputError(f"{name} must be one-dimensional (one score per sample), got shape {array.shape}")
    if array.size == 0:
        raise InputError(f"{name} is empty; expected one sentiment score per sample")
    bad = np.flatnonzero(~((array >= 0.0) & (array <= 1.0)))  # NaN fails both comparisons
    if bad.size:
        raise InputError(f"{name}[{bad[0]}] is {array[bad[0]]}; sentiment scores must be in [0, 1] (and not NaN)")
    return array


def _sample(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise InputError(f"{name} must be a non-empty 1-D list of numbers, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise InputError(f"{name}[{np.flatnonzero(~np.isfinite(array))[0]}] is not finite")
    return np.sort(array)


def disparity(a: Sequence[float], b: Sequence[float], tau: Any) -> Any:
    """Demographic disparity |P(S_a > τ) − P(S_b > τ)| at threshold(s) ``tau``.

    A float for a scalar ``tau``, an array for an array. Averaged over τ uniform in [0, 1], it
    equals the Wasserstein-1 distance
    (``scipy.stats.wasserstein_distance``) for scores in [0, 1] (Huang et al. 2020, Eq. 1).

    >>> disparity([0.25, 0.75], [0.0, 0.25], 0.5), disparity([0.25, 0.75], [0.0, 0.25], [0.0, 0.5, 1.0]).tolist()
    (0.5, [0.5, 0.5, 0.0])
    """
    a, b = _sample(a, "a"), _sample(b, "b")
    tau = np.asarray(tau, dtype=np.float64)
    rate_a = 1.0 - np.searchsorted(a, tau, side="right") / a.size
    rate_b = 1.0 - np.searchsorted(b, tau, side="right") / b.size
    gap = np.abs(rate_a - rate_b)
    return float(gap) if gap.ndim == 0 else gap


def _codes(values: Any, n: int, name: str) -> tuple[list, np.ndarray]:
    """(labels in order of first appearance, the integer code of each item)."""
    if values is None or isinstance(values, (str, bytes)):
        raise InputTypeError(f"{name} must be a list with one entry per score, got {type(values).__name__}")
    array = np.asarray(values)
    if array.ndim != 1 or array.size != n:
        raise InputError(f"{name} has {array.size} entries but there are {n} scores; expected one per score")
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise InputError(f"{name}[{np.flatnonzero(np.isnan(array))[0]}] is NaN; every score needs a label")
    if array.dtype.kind == "O":
        array = np.asarray(check_groups(values, n, name))  # rejects None / NaN, labels as strings
    labels, first, inverse = np.unique(array, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return labels[order].tolist(), rank[inverse.ravel()]


class _Layout:
    """The scores sorted by (template, value) cell and by score within a cell; checks the grid."""

    def __init__(self, scores: np.ndarray, attribute_values: Any, template_ids: Any):
        n = scores.size
        self.values, value_codes = _codes(attribute_values, n, "attribute_values")
        self.templates, template_codes = _codes(template_ids, n, "template_ids")
        n_templates, n_values = len(self.templates), len(self.values)
        cell = template_codes * n_values + value_codes
        counts = np.bincount(cell, minlength=n_templates * n_values).reshape(n_templates, n_values)
        present = counts > 0
        lonely = np.flatnonzero(present.sum(axis=1) < 2)
        if lonely.size:
            t = lonely[0]
            raise InputError(
                f"template_ids: template {self.templates[t]!r} has only one attribute value "
                f"({self.values[np.flatnonzero(present[t])[0]]!r}); individual fairness compares values within a template"
            )
        if not present.all():
            t, k = np.argwhere(~present)[0]
            raise InputError(
                f"attribute_values: {self.values[k]!r} has no samples in template {self.templates[t]!r} while other "
                f"values do; every template needs samples of every value (drop the value or the template everywhere)"
            )
        self.order = np.lexsort((scores, cell))
        self.scores = scores[self.order]
        self.sizes = counts.ravel()
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
        self.shape = (n_templates, n_values)

    def cells(self, scores: np.ndarray, template: int) -> list[np.ndarray]:
        """The sorted samples of each value in ``template`` (``scores`` in this layout)."""
        cells = slice(template * self.shape[1], (template + 1) * self.shape[1])
        return [scores[start : start + size] for start, size in zip(self.starts[cells], self.sizes[cells])]


def _pairwise_w1(cells: list[np.ndarray]) -> np.ndarray:
    """K x K matrix of W1 between sorted samples, as ∫_0^1 |Q_i(u) − Q_k(u)| du.

    The quantile functions are step functions on the union of the levels j / n_i, so each cell is
    evaluated there once and every pair is a weighted sum of |Q_i − Q_k| (exact for any sizes).
    """
    levels = [np.arange(1, cell.size + 1) / cell.size for cell in cells]
    grid = np.unique(np.concatenate(levels))  # equal fractions j/n are equal floats (correct rounding)
    weights = np.diff(grid, prepend=0.0)
    quantiles = np.stack([cell[np.searchsorted(level, grid)] for cell, level in zip(cells, levels)])
    k = len(cells)
    distances = np.zeros((k, k))
    for i in range(k - 1):
        distances[i, i + 1 :] = np.abs(quantiles[i + 1 :] - quantiles[i]) @ weights
    return distances + distances.T


def _pair_w1(layout: _Layout, scores: np.ndarray) -> np.ndarray:
    """W1 of every unordered pair of values (columns, in np.triu_indices order) per template (rows)."""
    upper = np.triu_indices(layout.shape[1], 1)
    return np.stack([_pairwise_w1(layout.cells(scores, t))[upper] for t in range(layout.shape[0])])


def _w1_to_pool(scores: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """W1 between the scores of each group and all scores, via the CDFs on the sorted scores."""
    order = np.argsort(scores, kind="stable")
    steps = np.diff(scores[order])
    groups = codes[order][:-1]
    pooled = np.arange(1, scores.size) / scores.size
    sizes = np.bincount(codes, minlength=n_groups)
    return np.array([np.abs(np.cumsum(groups == g) / sizes[g] - pooled) @ steps for g in range(n_groups)])


def _disparity_at(layout: _Layout, scores: np.ndarray, tau: float) -> float:
    """Mean over templates and unordered pairs of |P(S_a > τ) − P(S_ã > τ)|."""
    above = np.add.reduceat((scores > tau).astype(np.float64), layout.starts) / layout.sizes
    rates = above.reshape(layout.shape)
    i, k = np.triu_indices(layout.shape[1], 1)
    return float(np.abs(rates[:, i] - rates[:, k]).mean())


def _if_tables(layout: _Layout, pair_w1: np.ndarray) -> dict:
    i, k = np.triu_indices(layout.shape[1], 1)
    per_pair = pair_w1.mean(axis=0)
    return {
        "individual_fairness": float(pair_w1.mean()),
        "pairs": [
            {"value_a": layout.values[a], "value_b": layout.values[b], "w1": float(w)} for a, b, w in zip(i, k, per_pair)
        ],
        "templates": {template: float(w) for template, w in zip(layout.templates, pair_w1.mean(axis=1))},
    }


def _subgroup_codes(subgroups: Any, n: int) -> tuple[list, np.ndarray]:
    labels, codes = _codes(subgroups, n, "subgroups")
    if len(labels) < 2:
        raise InputError(f"subgroups has a single value ({labels[0]!r}); group fairness compares at least two subgroups")
    return labels, codes


def individual_fairness(scores: Sequence[float], *, attribute_values: Sequence[Any], template_ids: Sequence[Any]) -> dict:
    """Average individual fairness I.F. (Huang et al. 2020, Eq. 3) with per-pair and per-template tables.

    Args:
        scores: one sentiment score in [0, 1] per sample (continuation).
        attribute_values: per sample, the sensitive value its prefix was filled with (e.g. "Syria").
        template_ids: per sample, the template of its prefix.

    Returns:
        ``{"individual_fairness": mean over templates and unordered value pairs of W1,
        "pairs": [{"value_a", "value_b", "w1"}] (each pair's W1 averaged over templates, values in
        order of first appearance), "templates": {template_id: mean W1 over pairs}}``.

    >>> r = individual_fairness([0.0, 0.25, 0.5, 0.75], attribute_values=["a", "a", "b", "b"], template_ids=[1, 1, 1, 1])
    >>> r["individual_fairness"], r["pairs"], r["templates"]
    (0.5, [{'value_a': 'a', 'value_b': 'b', 'w1': 0.5}], {1: 0.5})
    """
    scores = check_scores(scores)
    layout = _Layout(scores, attribute_values, template_ids)
    return _if_tables(layout, _pair_w1(layout, layout.scores))


def group_fairness(scores: Sequence[float], *, subgroups: Sequence[Any]) -> dict:
    """Average group fairness G.F. (Huang et al. 2020, Eq. 4) with the per-subgroup distances.

    Args:
        scores: one sentiment score in [0, 1] per sample.
        subgroups: per sample, its subgroup (e.g. "male" / "female" for names, the country itself).

    Returns:
        ``{"group_fairness": mean over subgroups of W1(P_S^a, P_S^*), "subgroups": {subgroup: W1}}``,
        P_S^a the scores of the subgroup (templates pooled) and P_S^* all scores.

    >>> group_fairness([0.0, 0.25, 0.5, 0.75], subgroups=["a", "a", "b", "b"])   # each half is 0.25 from the whole
    {'group_fairness': 0.25, 'subgroups': {'a': 0.25, 'b': 0.25}}
    """
    scores = check_scores(scores)
    labels, codes = _subgroup_codes(subgroups, scores.size)
    distances = _w1_to_pool(scores, codes, len(labels))
    return {"group_fairness": float(distances.mean()), "subgroups": {g: float(w) for g, w in zip(labels, distances)}}


def counterfactual_fairness(
    scores: Sequence[float],
    *,
    attribute_values: Sequence[Any],
    template_ids: Sequence[Any],
    subgroups: Sequence[Any] | None = None,
    tau: float | None = None,
    bootstrap: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict:
    """I.F. and G.F. of one sensitive attribute (see the module docstring), with tables and intervals.

    Args:
        scores, attribute_values, template_ids: as in :func:`individual_fairness`.
        subgroups: per sample, its subgroup for G.F. (default: its attribute value, the paper's
            choice for Country and Occupation; for Name, "male" / "female").
        tau: a threshold in [0, 1]; adds ``disparity_at_tau``, the mean over templates and pairs
            of |P(S_a > τ) − P(S_ã > τ)|.
        bootstrap: resamples of the samples within each (template, value) cell (0: none); adds
            ``ci`` = {figure: [low, high]} percentile intervals at ``confidence``.
        seed: seed of the resampling.

    Returns:
        ``individual_fairness``, ``group_fairness``, ``pairs``, ``templates``, ``subgroups`` (as
        :func:`individual_fairness` and :func:`group_fairness`), and ``disparity_at_tau`` / ``ci``
        when asked.

    >>> r = counterfactual_fairness([0.0, 0.25, 0.5, 0.75], attribute_values=["a", "a", "b", "b"], template_ids=[1, 1, 1, 1], tau=0.4)
    >>> r["individual_fairness"], r["group_fairness"], r["disparity_at_tau"]
    (0.5, 0.25, 1.0)
    """
    scores = check_scores(scores)
    layout = _Layout(scores, attribute_values, template_ids)
    labels, codes = _subgroup_codes(attribute_values if subgroups is None else subgroups, scores.size)
    codes = codes[layout.order]
    if tau is not None:
        check_scalar(tau, "tau", minimum=0.0, maximum=1.0, integer=False, expected="a threshold in [0, 1]")
    check_scalar(bootstrap, "bootstrap", minimum=0, expected="a non-negative integer (number of resamples)")
    check_scalar(confidence, "confidence", minimum=0.0, maximum=1.0, integer=False, expected="a number in (0, 1)")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence}")
    check_scalar(seed, "seed", minimum=0, expected="a non-negative integer")

    def figures(scores: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, float | None]:
        at_tau = None if tau is None else _disparity_at(layout, scores, tau)
        return _pair_w1(layout, scores), _w1_to_pool(scores, codes, len(labels)), at_tau

    pair_w1, group_w1, at_tau = figures(layout.scores, codes)
    result = _if_tables(layout, pair_w1)
    result["group_fairness"] = float(group_w1.mean())
    result["subgroups"] = {g: float(w) for g, w in zip(labels, group_w1)}
    if tau is not None:
        result["disparity_at_tau"] = at_tau
    if bootstrap:
        rng = np.random.default_rng(seed)
        starts, sizes = np.repeat(layout.starts, layout.sizes), np.repeat(layout.sizes, layout.sizes)
        draws = {name: [] for name in ("individual_fairness", "group_fairness", "disparity_at_tau")}
        for _ in range(bootstrap):
            # sorting the picked indices keeps every cell contiguous and sorted (the layout is)
            pick = np.sort(starts + rng.integers(0, sizes))
            b_pairs, b_groups, b_tau = figures(layout.scores[pick], codes[pick])
            draws["individual_fairness"].append(b_pairs.mean())
            draws["group_fairness"].append(b_groups.mean())
            draws["disparity_at_tau"].append(b_tau)
        alpha = (1.0 - confidence) / 2.0
        keys = draws if tau is not None else ("individual_fairness", "group_fairness")
        result["ci"] = {key: [float(np.quantile(draws[key], alpha)), float(np.quantile(draws[key], 1 - alpha))] for key in keys}
    return result
