"""Counterfactual sentiment bias (Huang et al. 2020): W1, I.F. (Eq. 3), G.F. (Eq. 4), by hand and against scipy."""

import itertools

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

import lmbias
from lmbias.benchmarks.counterfactual.measure import counterfactual_fairness, disparity, group_fairness, individual_fairness


def random_design(rng, n_templates=4, values=("a", "b", "c", "d", "e"), ties=True):
    """Scores of a complete (template, value) grid with unequal cell sizes; subgroups g0 / g1."""
    scores, attribute_values, template_ids, subgroups = [], [], [], []
    for t in range(n_templates):
        for k, value in enumerate(values):
            size = int(rng.integers(1, 40))
            cell = rng.beta(2 + k, 3, size)
            scores += list(np.round(cell, 2) if ties else cell)
            attribute_values += [value] * size
            template_ids += [f"t{t}"] * size
            subgroups += [f"g{k % 2}"] * size
    return np.array(scores), attribute_values, template_ids, subgroups


def naive(scores, attribute_values, template_ids, subgroups):
    """The paper's formulas as a loop of scipy.stats.wasserstein_distance calls."""
    scores, values, templates, groups = map(np.asarray, (scores, attribute_values, template_ids, subgroups))
    value_names, template_names = list(dict.fromkeys(values.tolist())), list(dict.fromkeys(templates.tolist()))
    pairs = {}
    per_template = {}
    for t in template_names:
        here = [wasserstein_distance(scores[(templates == t) & (values == a)], scores[(templates == t) & (values == b)])
                for a, b in itertools.combinations(value_names, 2)]
        per_template[t] = np.mean(here)
        for (a, b), w in zip(itertools.combinations(value_names, 2), here):
            pairs.setdefault((a, b), []).append(w)
    subgroup_w1 = {g: wasserstein_distance(scores[groups == g], scores) for g in dict.fromkeys(groups.tolist())}
    return {
        "individual_fairness": np.mean([w for ws in pairs.values() for w in ws]),
        "pairs": {pair: np.mean(ws) for pair, ws in pairs.items()},
        "templates": per_template,
        "group_fairness": np.mean(list(subgroup_w1.values())),
        "subgroups": subgroup_w1,
    }


def test_disparity_averaged_over_uniform_tau_is_w1():
    rng = np.random.default_rng(1)
    for _ in range(20):
        a, b = rng.random(rng.integers(1, 30)), rng.beta(2, 2, rng.integers(1, 30))
        # exact: the disparity is constant between consecutive points of {0, samples, 1}
        knots = np.unique(np.concatenate([[0.0, 1.0], a, b]))
        exact = float(disparity(a, b, (knots[:-1] + knots[1:]) / 2) @ np.diff(knots))
        assert exact == pytest.approx(wasserstein_distance(a, b), abs=1e-12)
        # and a plain average over a fine uniform grid of thresholds
        grid = (np.arange(200_000) + 0.5) / 200_000
        assert disparity(a, b, grid).mean() == pytest.approx(wasserstein_distance(a, b), abs=2e-4)


def test_disparity_by_hand():
    assert disparity([0.25, 0.75], [0.0, 0.25], 0.5) == 0.5
    assert disparity([0.25, 0.75], [0.0, 0.25], 0.25) == 0.5  # strict: a score equal to tau is not above it
    assert disparity([0.25, 0.75], [0.0, 0.25], 0.75) == 0.0


def test_individual_fairness_of_two_shifted_values_is_the_shift():
    x = np.array([0.1, 0.2, 0.4, 0.45, 0.6])
    r = individual_fairness(np.concatenate([x, x + 0.3]), attribute_values=["a"] * 5 + ["b"] * 5, template_ids=[7] * 10)
    assert r["individual_fairness"] == pytest.approx(0.3, abs=1e-12)
    assert r["templates"] == {7: pytest.approx(0.3, abs=1e-12)}
    assert [(p["value_a"], p["value_b"]) for p in r["pairs"]] == [("a", "b")]


def test_individual_fairness_follows_eq3_normalisation_by_hand():
    # template 1: a={0}, b={0.5}, c={1} -> W1: ab 0.5, ac 1, bc 0.5; template 2: all at 0.5 except c={0.25} -> 0, 0.25, 0.25
    scores = [0.0, 0.5, 1.0, 0.5, 0.5, 0.25]
    values, templates = ["a", "b", "c"] * 2, [1, 1, 1, 2, 2, 2]
    r = individual_fairness(scores, attribute_values=values, template_ids=templates)
    m, n_values = 2, 3
    eq3 = 2 / (m * n_values * (n_values - 1)) * (0.5 + 1.0 + 0.5 + 0.0 + 0.25 + 0.25)
    assert r["individual_fairness"] == pytest.approx(eq3, abs=1e-15) == pytest.approx(2.5 / 6)
    assert r["templates"] == {1: pytest.approx(2 / 3), 2: pytest.approx(1 / 6)}
    assert {(p["value_a"], p["value_b"]): p["w1"] for p in r["pairs"]} == {
        ("a", "b"): pytest.approx(0.25), ("a", "c"): pytest.approx(0.625), ("b", "c"): pytest.approx(0.375)
    }


def test_group_fairness_by_hand():
    # two equal-size subgroups whose scores are shifted by d = 0.2: each is d / 2 from the pooled scores
    x = np.array([0.1, 0.3, 0.35, 0.5])
    r = group_fairness(np.concatenate([x, x + 0.2]), subgroups=["m"] * 4 + ["f"] * 4)
    assert r["group_fairness"] == pytest.approx(0.1, abs=1e-12)
    assert r["subgroups"] == {"m": pytest.approx(0.1, abs=1e-12), "f": pytest.approx(0.1, abs=1e-12)}
    # unequal sizes: a={0}, b={1, 1, 1}; pooled CDF is 1/4 on [0, 1): W1(a, *) = 3/4, W1(b, *) = 1/4
    r = group_fairness([0.0, 1.0, 1.0, 1.0], subgroups=["a", "b", "b", "b"])
    assert r == {"group_fairness": 0.5, "subgroups": {"a": 0.75, "b": 0.25}}


def test_results_do_not_depend_on_sample_order():
    rng = np.random.default_rng(2)
    scores, values, templates, groups = random_design(rng)
    first = counterfactual_fairness(scores, attribute_values=values, template_ids=templates, subgroups=groups, tau=0.4)
    perm = rng.permutation(len(scores))
    shuffled = [np.asarray(column)[perm] for column in (scores, values, templates, groups)]
    second = counterfactual_fairness(shuffled[0], attribute_values=shuffled[1], template_ids=shuffled[2], subgroups=shuffled[3], tau=0.4)
    for key in ("individual_fairness", "group_fairness", "disparity_at_tau"):
        assert second[key] == pytest.approx(first[key], abs=1e-14)
    assert second["templates"] == pytest.approx(first["templates"], abs=1e-14)
    assert second["subgroups"] == pytest.approx(first["subgroups"], abs=1e-14)
    as_dict = lambda r: {frozenset((p["value_a"], p["value_b"])): p["w1"] for p in r["pairs"]}  # noqa: E731
    assert as_dict(second) == pytest.approx(as_dict(first), abs=1e-14)


@pytest.mark.parametrize("ties", [False, True])
def test_vectorised_equals_a_naive_scipy_loop(ties):
    rng = np.random.default_rng(3)
    scores, values, templates, groups = random_design(rng, ties=ties)
    fast = counterfactual_fairness(scores, attribute_values=values, template_ids=templates, subgroups=groups)
    slow = naive(scores, values, templates, groups)
    assert fast["individual_fairness"] == pytest.approx(slow["individual_fairness"], abs=1e-12)
    assert fast["group_fairness"] == pytest.approx(slow["group_fairness"], abs=1e-12)
    assert {(p["value_a"], p["value_b"]): p["w1"] for p in fast["pairs"]} == pytest.approx(slow["pairs"], abs=1e-12)
    assert fast["templates"] == pytest.approx(slow["templates"], abs=1e-12)
    assert fast["subgroups"] == pytest.approx(slow["subgroups"], abs=1e-12)
    individual = individual_fairness(scores, attribute_values=values, template_ids=templates)
    assert individual["individual_fairness"] == fast["individual_fairness"]
    assert group_fairness(scores, subgroups=groups)["group_fairness"] == pytest.approx(fast["group_fairness"], abs=1e-15)


def test_disparity_at_tau_is_the_mean_over_templates_and_pairs():
    rng = np.random.default_rng(4)
    scores, values, templates, groups = random_design(rng, n_templates=3, values=("x", "y", "z"))
    values, templates = np.array(values), np.array(templates)
    expected = np.mean([
        disparity(scores[(templates == t) & (values == a)], scores[(templates == t) & (values == b)], 0.45)
        for t in ("t0", "t1", "t2") for a, b in itertools.combinations("xyz", 2)
    ])  # fmt: skip
    result = counterfactual_fairness(scores, attribute_values=values, template_ids=templates, tau=0.45)
    assert result["disparity_at_tau"] == pytest.approx(expected, abs=1e-15)


def test_subgroups_default_to_the_attribute_values():
    rng = np.random.default_rng(5)
    scores, values, templates, _ = random_design(rng, n_templates=2)
    r = counterfactual_fairness(scores, attribute_values=values, template_ids=templates)
    assert r["subgroups"] == pytest.approx(group_fairness(scores, subgroups=values)["subgroups"], abs=1e-15)


def test_bootstrap_intervals_are_seeded_and_contain_the_estimate():
    rng = np.random.default_rng(6)
    scores, values, templates, groups = random_design(rng, n_templates=3, ties=False)
    kwargs = dict(tau=0.5, bootstrap=200, confidence=0.95)
    design = dict(attribute_values=values, template_ids=templates, subgroups=groups)
    first = counterfactual_fairness(scores, **design, seed=1, **kwargs)
    assert counterfactual_fairness(scores, **design, seed=1, **kwargs)["ci"] == first["ci"]
    assert counterfactual_fairness(scores, **design, seed=2, **kwargs)["ci"] != first["ci"]
    assert set(first["ci"]) == {"individual_fairness", "group_fairness", "disparity_at_tau"}
    for key, (low, high) in first["ci"].items():
        assert low < first[key] < high
    narrower = counterfactual_fairness(scores, **design, seed=1, bootstrap=200, confidence=0.5)["ci"]
    assert set(narrower) == {"individual_fairness", "group_fairness"}
    width = lambda ci: ci[1] - ci[0]  # noqa: E731
    assert width(narrower["individual_fairness"]) < width(first["ci"]["individual_fairness"])


def test_the_paper_layout_runs_with_the_template_dataset():
    rows = lmbias.load_rows("counterfactual_templates", "name")
    rng = np.random.default_rng(7)
    n = 20
    r = counterfactual_fairness(
        rng.random(len(rows) * n),
        attribute_values=np.repeat([row["token"] for row in rows], n),
        template_ids=np.repeat([row["template_id"] for row in rows], n),
        subgroups=np.repeat([row["subgroup"] for row in rows], n),
    )
    assert len(r["pairs"]) == 34 * 33 // 2 and list(r["templates"]) == list(range(1, 11))
    assert set(r["subgroups"]) == {"male", "female"}
    assert 0 < r["group_fairness"] < r["individual_fairness"] < 0.5


GOOD = ([0.1, 0.2, 0.5, 0.6], ["a", "a", "b", "b"], [1, 1, 1, 1])


@pytest.mark.parametrize(
    "scores, values, templates, kwargs, error, match",
    [
        ([0.1, float("nan"), 0.5, 0.6], *GOOD[1:], {}, ValueError, r"scores\[1\] is nan"),
        ([0.1, 0.2, 1.5, 0.6], *GOOD[1:], {}, ValueError, r"scores\[2\] is 1.5; .*\[0, 1\]"),
        ([-0.1, 0.2, 0.5, 0.6], *GOOD[1:], {}, ValueError, r"scores\[0\]"),
        ([], [], [], {}, ValueError, "scores is empty"),
        (None, *GOOD[1:], {}, TypeError, "scores must be"),
        (GOOD[0], ["a", "a", "b"], GOOD[2], {}, ValueError, "attribute_values has 3 entries but there are 4 scores"),
        (GOOD[0], GOOD[1], [1, 1, 1], {}, ValueError, "template_ids has 3 entries"),
        (GOOD[0], *GOOD[1:], {"subgroups": ["m", "f"]}, ValueError, "subgroups has 2 entries"),
        (GOOD[0], ["a", None, "b", "b"], GOOD[2], {}, ValueError, r"attribute_values\[1\] is missing"),
        (GOOD[0], "abab", GOOD[2], {}, TypeError, "attribute_values must be a list"),
        (GOOD[0], ["a", "a", "a", "b"], [1, 1, 2, 2], {}, ValueError, "template_ids: template 1 has only one attribute value"),
        ([0.1] * 6, list("abcabb"), [1, 1, 1, 2, 2, 2], {}, ValueError, "attribute_values: 'c' has no samples in template 2"),
        (GOOD[0], *GOOD[1:], {"subgroups": ["m"] * 4}, ValueError, "subgroups has a single value"),
        (GOOD[0], *GOOD[1:], {"tau": 1.5}, ValueError, "tau must be"),
        (GOOD[0], *GOOD[1:], {"bootstrap": -1}, ValueError, "bootstrap must be"),
        (GOOD[0], *GOOD[1:], {"confidence": 1.0}, ValueError, "confidence must be"),
    ],
)
def test_bad_input_is_a_clear_error_naming_the_argument(scores, values, templates, kwargs, error, match):
    with pytest.raises(error, match=match):
        counterfactual_fairness(scores, attribute_values=values, template_ids=templates, **kwargs)


def test_disparity_rejects_empty_or_nonfinite_samples():
    with pytest.raises(ValueError, match="a must be a non-empty"):
        disparity([], [0.5], 0.5)
    with pytest.raises(ValueError, match=r"b\[1\] is not finite"):
        disparity([0.5], [0.1, float("nan")], 0.5)


def test_evaluate_module_takes_int_or_string_templates_and_subgroups(monkeypatch):
    import evaluate

    monkeypatch.chdir(lmbias.__path__[0] + "/..")
    module = evaluate.load("metrics/counterfactual_sentiment_bias")
    scores, values = [0.0, 0.25, 0.5, 0.75, 0.25, 0.5], ["a", "a", "b", "b", "c", "c"]
    groups = ["m", "m", "f", "f", "f", "f"]
    r = module.compute(predictions=scores, attribute_values=values, template_ids=[3] * 6, subgroups=groups)
    expected = counterfactual_fairness(scores, attribute_values=values, template_ids=[3] * 6, subgroups=groups)
    assert r == expected and list(r["templates"]) == [3]
    r = module.compute(predictions=scores, attribute_values=values, template_ids=["x"] * 6, tau=0.3)
    assert list(r["templates"]) == ["x"] and r["disparity_at_tau"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match=r"predictions\[2\] is 2.0"):
        module.compute(predictions=[0.0, 0.25, 2.0, 0.75, 0.25, 0.5], attribute_values=values, template_ids=[3] * 6)
