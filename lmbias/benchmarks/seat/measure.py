"""SEAT's statistics (May et al. 2019; Caliskan et al. 2017's WEAT on sentence embeddings), as
bias-bench's ``weat.py`` (from W4ngatang/sent-bias) computes them, vectorised.

For target sets X, Y and attribute sets A, B of embeddings:

* s(w, A, B) = mean_{a in A} cos(w, a) - mean_{b in B} cos(w, b);
* effect size d = (mean_{x in X} s(x, A, B) - mean_{y in Y} s(y, A, B)) / std_{w in X ∪ Y} s(w, A, B),
  the standard deviation with ddof=1; 0 for an unbiased encoder, positive when X is nearer A (and Y
  nearer B) than the other way round;
* the one-sided permutation p-value of the statistic sum_{x in X} s(x, A, B): the share of the
  equal-size partitions (X_i, Y_i) of X ∪ Y with sum_{x in X_i} s(x) >= the observed sum, a tie
  counting as more extreme (conservative). When there are at most ``n_samples`` partitions
  (binom(2n, n)) every one is counted (exact); otherwise ``n_samples - 1`` random ones drawn with
  ``numpy.random.default_rng(seed)`` plus the observed one (bias-bench's count starts at 1 of 1),
  so the p-value is never 0. bias-bench draws with ``np.random.shuffle`` one partition at a time;
  the draws here differ (blocks of permutations), so a sampled p-value matches bias-bench's within
  sampling error, not digit for digit.

A tie is an equality up to rounding: within 1e-12 of the sum of |s(w)| over X ∪ Y (sums of the same
numbers in another order can differ in the last bits; bias-bench compares floats exactly).
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np

from ...checks import check_scalar
from ...errors import InputError, InputTypeError

BLOCK = 1 << 22  # values per block of partitions (about 32 MiB of indices)
TIE = 1e-12  # relative tolerance of a tie, see the module docstring


def _embeddings(values, name: str) -> np.ndarray:
    """``values`` as a float64 matrix with one finite, non-zero row per example."""
    if values is None or isinstance(values, (str, bytes)):
        raise InputTypeError(f"{name} must be a matrix of embeddings (one row per example), got {type(values).__name__}")
    try:
        matrix = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputTypeError(f"{name} must be a matrix of numbers (one row per example, all of one length)") from None
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise InputError(f"{name} has shape {matrix.shape}; expected one embedding per example: (examples >= 1, dimensions >= 1)")
    bad = np.flatnonzero(~np.isfinite(matrix).all(axis=1) | ~matrix.any(axis=1))
    if bad.size:
        raise InputError(f"{name}[{bad[0]}] is not a finite, non-zero vector; a cosine needs one")
    return matrix


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def associations(targets, attr1, attr2) -> np.ndarray:
    """s(w, A, B) for each row w of ``targets``: its mean cosine with ``attr1`` (A) minus its mean cosine with ``attr2`` (B).

    >>> associations([[1.0, 0.0], [0.0, 1.0]], attr1=[[1.0, 0.0]], attr2=[[0.0, 2.0]]).tolist()
    [1.0, -1.0]
    """
    targets, attr1, attr2 = (_unit(_embeddings(m, n)) for m, n in ((targets, "targets"), (attr1, "attr1"), (attr2, "attr2")))
    if not targets.shape[1] == attr1.shape[1] == attr2.shape[1]:
        raise InputError(f"the embeddings have {targets.shape[1]}, {attr1.shape[1]} and {attr2.shape[1]} dimensions; expected one size")
    return (targets @ attr1.T).mean(axis=1) - (targets @ attr2.T).mean(axis=1)


def effect_size(s: np.ndarray, n: int) -> float | None:
    """d from the associations ``s`` of X (the first ``n``) and Y (the rest); None when every s is
    the same (the standard deviation is 0: no effect size is defined)."""
    spread = np.std(s, ddof=1)
    if spread <= TIE * np.abs(s).max():
        return None
    return float((s[:n].mean() - s[n:].mean()) / spread)


def _partitions(n: int) -> tuple[int, int]:
    """Combinations of ``n`` of ``2n`` indices per block."""
    return max(1, BLOCK // (2 * n)), comb(2 * n, n)


def p_value(s: np.ndarray, n: int, *, n_samples: int = 100_000, seed: int = 0) -> tuple[float, str, int]:
    """The permutation p-value of sum_{x in X} s(x) (see the module docstring) from the associations
    ``s`` of X (the first ``n``) and Y (the rest); returns (p, "exact" or "sampled", partitions counted)."""
    observed = s[:n].sum()
    tie = TIE * np.abs(s).sum()
    block, total = _partitions(n)
    if total <= n_samples:
        combinations = itertools.combinations(range(2 * n), n)
        extreme = 0
        while chunk := list(itertools.islice(combinations, block)):
            extreme += int((s[np.array(chunk)].sum(axis=1) >= observed - tie).sum())
        return extreme / total, "exact", total
    rng = np.random.default_rng(seed)
    extreme, drawn = 1, 1  # the observed partition, as bias-bench counts it
    while drawn < n_samples:
        size = min(block, n_samples - drawn)
        order = rng.permuted(np.tile(np.arange(2 * n), (size, 1)), axis=1)
        extreme += int((s[order[:, :n]].sum(axis=1) >= observed - tie).sum())
        drawn += size
    return extreme / drawn, "sampled", drawn


def seat_test(targ1, targ2, attr1, attr2, *, n_samples: int = 100_000, seed: int = 0) -> dict:
    """One SEAT test from the embeddings of its four sets (matrices, one row per distinct example).

    Args:
        targ1, targ2: the target concepts X and Y (as many rows each: the permutation test needs it).
        attr1, attr2: the attributes A and B.
        n_samples: the exact test runs when there are at most this many partitions, else this many
            partitions are counted (bias-bench's default 100,000).
        seed: seeds the sampled partitions.

    Returns:
        ``{"effect_size" (None when every association is the same), "p_value", "permutation" ("exact"
        or "sampled"), "partitions" (counted), "n": {set: rows}}``.

    Example (X = {e1, e1}, Y = {e2, e2}, A = {e1}, B = {e2}: s(x) = 1, s(y) = -1, so d = 2 / std(1, 1,
    -1, -1) = 2 / 1.1547; of the 6 partitions of X ∪ Y only X itself reaches the observed sum 2)::

        >>> result = seat_test([[1, 0], [1, 0]], [[0, 1], [0, 1]], [[1, 0]], [[0, 1]])
        >>> round(result["effect_size"], 4), round(result["p_value"], 4), result["permutation"]
        (1.7321, 0.1667, 'exact')
    """
    check_scalar(n_samples, "n_samples", minimum=1)
    check_scalar(seed, "seed", minimum=0)
    x, y = _embeddings(targ1, "targ1"), _embeddings(targ2, "targ2")
    if len(x) != len(y):
        raise InputError(f"targ1 has {len(x)} examples but targ2 has {len(y)}; SEAT's permutation test needs as many of each")
    a, b = _embeddings(attr1, "attr1"), _embeddings(attr2, "attr2")
    s = associations(np.concatenate([x, y]), a, b)
    p, how, counted = p_value(s, len(x), n_samples=n_samples, seed=seed)
    return {"effect_size": effect_size(s, len(x)), "p_value": p, "permutation": how, "partitions": counted,
            "n": {"targ1": len(x), "targ2": len(y), "attr1": len(a), "attr2": len(b)}}


def summarize(tests: dict[str, dict], bias_types: dict[str, tuple]) -> dict:
    """The mean |effect size| per bias type (over its tests in ``tests`` with an effect size) and over
    every test in ``tests``: ``{"bias_types": {kind: {"mean_abs_effect_size", "tests"}}, "overall": {...}}``
    (a bias type none of whose tests ran is left out)."""

    def mean_abs(names):
        values = [abs(tests[name]["effect_size"]) for name in names if tests[name]["effect_size"] is not None]
        return {"mean_abs_effect_size": float(np.mean(values)) if values else None, "tests": len(values)}

    return {"bias_types": {kind: mean_abs([t for t in names if t in tests]) for kind, names in bias_types.items()
                           if any(t in tests for t in names)},
            "overall": mean_abs(list(tests))}
