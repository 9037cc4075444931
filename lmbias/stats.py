"""Per-group proportions and the significance tests BOLD uses.

BOLD compares, for one label at a time (e.g. "negative sentiment"), the proportion of texts with
that label across groups: a two-proportion (binomial) z-test for two groups (§6.1.2, "p-value in
binomial proportion test") and a chi-square test of homogeneity for more (§6.1.3). We report both
that per-label test and an overall chi-square test on the groups x labels table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .checks import check_groups
from .errors import InputError, InputTypeError


def contingency(labels: Sequence[str], *, groups: Sequence[str], label_names: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Group names (in first-seen order) and the groups x labels count table."""
    group_names = list(dict.fromkeys(groups))
    group_index = {g: i for i, g in enumerate(group_names)}
    label_index = {label: j for j, label in enumerate(label_names)}
    unknown = set(labels) - set(label_index)
    if unknown:
        raise InputError(f"labels {sorted(unknown)} are not among label_names {list(label_names)}")
    table = np.zeros((len(group_names), len(label_names)), dtype=np.int64)
    np.add.at(table, ([group_index[g] for g in groups], [label_index[label] for label in labels]), 1)
    return group_names, table


def group_proportions(labels: Sequence[str], *, groups: Sequence[str], label_names: Sequence[str]) -> dict:
    """For each group: ``n`` and the proportion of each label.

    >>> group_proportions(["pos", "neg", "pos"], groups=["a", "a", "b"], label_names=["neg", "pos"])
    {'a': {'n': 2, 'neg': 0.5, 'pos': 0.5}, 'b': {'n': 1, 'neg': 0.0, 'pos': 1.0}}
    """
    group_names, table = contingency(labels, groups=groups, label_names=label_names)
    totals = table.sum(axis=1)
    return {
        group: {"n": int(totals[i]), **{label: float(table[i, j] / totals[i]) for j, label in enumerate(label_names)}}
        for i, group in enumerate(group_names)
    }


def two_proportion_test(count_a: int, n_a: int, count_b: int, n_b: int) -> dict:
    """Pooled two-proportion z-test (two-sided). Equal proportions of 0 or 1 give z = 0, p = 1.

    >>> round(two_proportion_test(30, 100, 20, 100)["p_value"], 4)
    0.1025
    """
    if n_a <= 0 or n_b <= 0:
        raise InputError(f"both groups need at least one text, got n_a={n_a}, n_b={n_b}")
    pooled = (count_a + count_b) / (n_a + n_b)
    variance = pooled * (1 - pooled) * (1 / n_a + 1 / n_b)
    if variance == 0:
        return {"statistic": 0.0, "p_value": 1.0}
    from scipy import stats as scipy_stats

    z = (count_a / n_a - count_b / n_b) / np.sqrt(variance)
    return {"statistic": float(z), "p_value": float(2 * scipy_stats.norm.sf(abs(z)))}


def chi_square_test(table: np.ndarray) -> dict:
    """Chi-square test of homogeneity on a count table; all-zero columns are dropped first.

    With fewer than two non-empty columns nothing can differ: statistic 0, p-value 1.
    """
    table = np.asarray(table)
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2 or table.shape[0] < 2:
        return {"statistic": 0.0, "p_value": 1.0, "dof": 0}
    from scipy import stats as scipy_stats

    statistic, p_value, dof, _ = scipy_stats.chi2_contingency(table, correction=False)
    return {"statistic": float(statistic), "p_value": float(p_value), "dof": int(dof)}


def proportion_tests(labels: Sequence[str], *, groups: Sequence[str], label_names: Sequence[str]) -> dict | None:
    """The paper's tests: per label, does its proportion differ across groups; and overall.

    Two groups: a two-proportion z-test per label. More: a chi-square test per label on the
    groups x (label, not label) table. ``overall`` is the chi-square test on groups x labels.
    Returns None for a single group (nothing to compare).
    """
    group_names, table = contingency(labels, groups=groups, label_names=label_names)
    if len(group_names) < 2:
        return None
    totals = table.sum(axis=1)
    per_label = {}
    for j, label in enumerate(label_names):
        if len(group_names) == 2:
            per_label[label] = two_proportion_test(int(table[0, j]), int(totals[0]), int(table[1, j]), int(totals[1]))
        else:
            per_label[label] = chi_square_test(np.stack([table[:, j], totals - table[:, j]], axis=1))
    method = "two-proportion z-test" if len(group_names) == 2 else "chi-square test of homogeneity"
    return {"method": method, "groups": group_names, "per_label": per_label, "overall": chi_square_test(table)}


def proportion_differences(
    labels: Sequence[str], *, groups: Sequence[str], label_names: Sequence[str], group_a: str, group_b: str
) -> dict[str, float]:
    """Proportion of each label in ``group_a`` minus that in ``group_b``, in percentage points (BOLD Tables 4, 6)."""
    proportions = group_proportions(labels, groups=groups, label_names=label_names)
    for group in (group_a, group_b):
        if group not in proportions:
            raise InputError(f"group {group!r} has no texts; groups present: {sorted(proportions)}")
    return {label: 100 * (proportions[group_a][label] - proportions[group_b][label]) for label in label_names}


def label_result(scores, *, labels: Sequence[str], label_names: Sequence[str], groups=None) -> dict:
    """The result every BOLD metric returns: per-text ``scores`` and ``labels``; with ``groups``
    also ``per_group`` (n and label proportions) and ``test`` (:func:`proportion_tests`)."""
    labels = [str(label) for label in labels]
    result = {"scores": np.asarray(scores).tolist(), "labels": labels}
    groups = check_groups(groups, len(labels))
    if groups is not None:
        result["per_group"] = group_proportions(labels, groups=groups, label_names=label_names)
        result["test"] = proportion_tests(labels, groups=groups, label_names=label_names)
    return result


def _category_sets(labels: Sequence[Sequence[str]], groups: Sequence[str], categories: Sequence[str]) -> tuple[list[set], list[str]]:
    labels = [set(text_labels) for text_labels in labels]
    unknown = set().union(*labels) - set(categories) if labels else set()
    if unknown:
        raise InputError(f"labels has unknown categories {sorted(unknown)}; known: {list(categories)}")
    groups = check_groups(groups, len(labels))
    if groups is None:
        raise InputTypeError("groups must be a list with one group label per text, got None")
    return labels, groups


def _in_or_out(labels: Sequence[set], category: str) -> list[str]:
    return ["in" if category in text_labels else "out" for text_labels in labels]


def category_statistics(
    labels: Sequence[Sequence[str]], *, groups: Sequence[str], categories: Sequence[str]
) -> tuple[dict, dict | None]:
    """``(per_group, test)`` for per-text lists of ``categories`` (a text may be in several or none).

    ``per_group``: ``{group: {"n", category: proportion}}``. ``test``: per category, the paper's
    test of "category vs not" across groups (:func:`proportion_tests`: two-proportion z-test for
    two groups, chi-square for more) as ``{"method", "groups", "per_label"}``; None for one group.
    """
    labels, groups = _category_sets(labels, groups, categories)
    per_group: dict = {}
    per_label = {}
    test = None
    for category in categories:
        binary = _in_or_out(labels, category)
        for group, entry in group_proportions(binary, groups=groups, label_names=["in", "out"]).items():
            per_group.setdefault(group, {"n": entry["n"]})[category] = entry["in"]
        test = proportion_tests(binary, groups=groups, label_names=["in", "out"])
        if test is not None:
            per_label[category] = test["per_label"]["in"]
    if test is not None:
        test = {"method": test["method"], "groups": test["groups"], "per_label": per_label}
    return per_group, test


def category_differences(
    labels: Sequence[Sequence[str]], *, groups: Sequence[str], categories: Sequence[str], group_a: str, group_b: str
) -> dict[str, float]:
    """Per category, the proportion of ``group_a``'s texts in it minus ``group_b``'s, in percentage
    points (BOLD Table 4: male - female; Table 6: Christianity - Islam).

    >>> category_differences([["joy"], [], ["joy", "anger"], ["anger"]], groups=["a", "a", "b", "b"],
    ...                      categories=["joy", "anger"], group_a="a", group_b="b")["anger"]
    -100.0
    """
    labels, groups = _category_sets(labels, groups, categories)
    return {
        category: proportion_differences(
            _in_or_out(labels, category), groups=groups, label_names=["in", "out"], group_a=group_a, group_b=group_b
        )["in"]
        for category in categories
    }


def pareto_front(bias: Sequence[float], ability: Sequence[float]) -> list[bool]:
    """Which points no other point dominates, for a trade-off where lower ``bias`` and higher
    ``ability`` are better: a point is dominated when another is at least as good on both and
    better on one.

    >>> pareto_front([1.0, 2.0, 0.5, 3.0], [80.0, 90.0, 70.0, 85.0])
    [True, True, True, False]
    """
    points = list(zip(bias, ability))
    return [not any(b <= bias_i and a >= ability_i and (b < bias_i or a > ability_i) for b, a in points)
            for bias_i, ability_i in points]


def cohen_kappa(first: Sequence, second: Sequence) -> float | None:
    """Cohen's kappa of two binary judgements of the same items: (p_o - p_e) / (1 - p_e), with p_o the share of items
    judged alike and p_e = P_1(yes) P_2(yes) + P_1(no) P_2(no) the agreement expected by chance; None where there is no
    item or p_e = 1 (both constant and equal).

    >>> round(cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]), 3)
    0.5
    """
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if first.shape != second.shape or first.ndim != 1:
        raise InputError(f"first and second must be two flat sequences of one length, got {first.shape} and {second.shape}")
    if not len(first):
        return None
    observed = float(np.mean(first == second))
    p1, p2 = float(first.mean()), float(second.mean())
    chance = p1 * p2 + (1 - p1) * (1 - p2)
    return None if chance >= 1 else (observed - chance) / (1 - chance)


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """McNemar's exact two-sided p-value of paired binary outcomes: the binomial test at 1/2 of the discordant items
    (``only_first``: items whose outcome holds in the first only; ``only_second``: in the second only); 1 with none
    (scipy.stats.binomtest)."""
    from scipy import stats

    n = int(only_first) + int(only_second)
    return float(stats.binomtest(int(only_first), n, 0.5).pvalue) if n else 1.0
