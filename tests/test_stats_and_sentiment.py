"""Group statistics (hand-computed) and the VADER sentiment scorer."""

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from lmbias import stats
from lmbias.checks import check_groups, check_texts
from lmbias.scorers import vader


def test_two_proportion_z_test_by_hand():
    # p1 = 0.3, p2 = 0.2, pooled 0.25: z = 0.1 / sqrt(0.25 * 0.75 * 0.02) = 1.63299
    result = stats.two_proportion_test(30, 100, 20, 100)
    assert result["statistic"] == pytest.approx(0.1 / math.sqrt(0.25 * 0.75 * 0.02))
    assert result["p_value"] == pytest.approx(2 * scipy_stats.norm.sf(1.6329931618554523))
    assert stats.two_proportion_test(0, 10, 0, 5) == {"statistic": 0.0, "p_value": 1.0}
    with pytest.raises(ValueError, match="at least one text"):
        stats.two_proportion_test(0, 0, 1, 2)


def test_chi_square_per_label_and_overall_by_hand():
    labels = ["neg"] * 10 + ["pos"] * 10 + ["neg"] * 2 + ["pos"] * 18 + ["neg"] * 6 + ["pos"] * 14
    groups = ["a"] * 20 + ["b"] * 20 + ["c"] * 20
    result = stats.proportion_tests(labels, groups=groups, label_names=["neg", "pos"])
    assert result["method"] == "chi-square test of homogeneity" and result["groups"] == ["a", "b", "c"]
    # neg counts 10/2/6 of 20 each; expected 6 each: chi2 = (16 + 16 + 0)/6 + (16 + 16 + 0)/14
    expected = 32 / 6 + 32 / 14
    assert result["per_label"]["neg"]["statistic"] == pytest.approx(expected)
    assert result["overall"]["statistic"] == pytest.approx(expected)
    assert result["overall"]["dof"] == 2
    assert result["per_label"]["neg"]["p_value"] == pytest.approx(scipy_stats.chi2.sf(expected, 2))


def test_group_proportions_differences_and_single_group():
    labels, groups = ["x", "y", "y", "y"], ["g1", "g1", "g2", "g2"]
    assert stats.group_proportions(labels, groups=groups, label_names=["x", "y"]) == {
        "g1": {"n": 2, "x": 0.5, "y": 0.5},
        "g2": {"n": 2, "x": 0.0, "y": 1.0},
    }
    differences = stats.proportion_differences(labels, groups=groups, label_names=["x", "y"], group_a="g1", group_b="g2")
    assert differences == {"x": 50.0, "y": -50.0}
    with pytest.raises(ValueError, match="group 'g3' has no texts"):
        stats.proportion_differences(labels, groups=groups, label_names=["x", "y"], group_a="g1", group_b="g3")
    assert stats.proportion_tests(["x"], groups=["only"], label_names=["x", "y"]) is None
    with pytest.raises(ValueError, match=r"labels \['z'\] are not among label_names"):
        stats.group_proportions(["z"], groups=["g"], label_names=["x"])


def test_input_checks_name_the_argument():
    with pytest.raises(TypeError, match=r"predictions\[1\] is NaN"):
        check_texts(["a", float("nan")])
    with pytest.raises(TypeError, match="predictions must be a list of strings, got str"):
        check_texts("a single text")
    with pytest.raises(ValueError, match="predictions is empty"):
        check_texts([])
    with pytest.raises(ValueError, match=r"groups\[0\] is missing"):
        check_groups([None], 1)
    with pytest.raises(TypeError, match="single string"):
        check_groups("ab", 2)


def test_vader_compound_values_and_bold_thresholds():
    texts = ["What a wonderful, happy day!", "This is a table.", "A cruel, awful war.", ""]
    compound = vader.vader_compound(texts, n_jobs=1)
    assert compound.tolist() == [0.8268, 0.0, -0.8934, 0.0]
    assert vader.sentiment_labels(compound).tolist() == ["positive", "neutral", "negative", "neutral"]
    assert vader.sentiment_labels(np.array([0.5, -0.5, 0.49, -0.49])).tolist() == ["positive", "negative", "neutral", "neutral"]
    loose = vader.sentiment_labels(np.array([0.06, -0.06]), negative_threshold=-0.05, positive_threshold=0.05)
    assert loose.tolist() == ["positive", "negative"]
    with pytest.raises(ValueError, match="must be below"):
        vader.sentiment_labels(compound, negative_threshold=0.5, positive_threshold=0.5)


def test_vader_in_worker_processes_equals_one_process():
    texts = ["I love this.", "I hate that.", "Neutral words here.", "Great!"] * 250
    assert np.array_equal(vader.vader_compound(texts, n_jobs=2, min_texts_per_job=100), vader.vader_compound(texts, n_jobs=1))
    with pytest.raises(ValueError, match="n_jobs must be >= 1"):
        vader.vader_compound(texts, n_jobs=0)
