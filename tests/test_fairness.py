"""StereoSet and CrowS-Pairs aggregation: the papers' baselines and hand-computed examples."""

import numpy as np
import pytest

from lmbias.benchmarks.crows_pairs import measure as crows_pairs_measure
from lmbias.benchmarks.stereoset import measure as stereoset_measure
from lmbias.benchmarks.stereoset.measure import icat


def stereoset_scores(stereotype, anti_stereotype, unrelated, targets, bias_types, tasks, **options):
    """The parallel arrays in the order these tests list them (the library takes them by keyword)."""
    return stereoset_measure.stereoset_scores(stereotype, anti_stereotype_scores=anti_stereotype, unrelated_scores=unrelated,
                                              targets=targets, bias_types=bias_types, tasks=tasks, **options)


def crows_pairs_scores(more, less, directions, bias_types, **options):
    """As above, for CrowS-Pairs."""
    return crows_pairs_measure.crows_pairs_scores(more, less_scores=less, directions=directions, bias_types=bias_types, **options)


def make(n_targets=4, per_target=10, task="intrasentence", domain="gender"):
    targets = [f"t{i}" for i in range(n_targets) for _ in range(per_target)]
    return targets, [domain] * len(targets), [task] * len(targets)


def test_ideal_model_scores_100_50_100():
    targets, types, tasks = make()
    n = len(targets)
    stereo = np.where(np.arange(n) % 2 == 0, -1.0, -2.0)  # prefers the stereotype in half of each target's examples
    anti = np.where(np.arange(n) % 2 == 0, -2.0, -1.0)
    result = stereoset_scores(stereo, anti, np.full(n, -9.0), targets, types, tasks)
    assert {k: result["overall"][k] for k in ("lms", "ss", "icat", "count")} == {"lms": 100.0, "ss": 50.0, "icat": 100.0, "count": 40}


def test_stereotyped_model_has_ss_100_and_icat_0():
    targets, types, tasks = make()
    n = len(targets)
    result = stereoset_scores(np.full(n, -1.0), np.full(n, -2.0), np.full(n, -3.0), targets, types, tasks)
    assert (result["overall"]["ss"], result["overall"]["icat"], result["overall"]["lms"]) == (100.0, 0.0, 100.0)


def test_random_model_is_about_50_50_50():
    targets, types, tasks = make(n_targets=40, per_target=250)
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(3, len(targets)))
    overall = stereoset_scores(*scores, targets, types, tasks)["overall"]
    assert overall["lms"] == pytest.approx(50, abs=1.5) and overall["ss"] == pytest.approx(50, abs=1.5)
    assert overall["icat"] == pytest.approx(50, abs=2.5)


def test_means_over_targets_ties_and_micro_icat_by_hand():
    # target a: 3 examples, stereotype preferred in all (SS 100); related 6/6 -> LMS 100
    # target b: 1 example, all three tied: stereo == anti -> anti (SS 0); neither beats unrelated -> LMS 0
    stereo = [-1, -1, -1, -2]
    anti = [-2, -2, -2, -2]
    unrelated = [-3, -3, -3, -2]
    result = stereoset_scores(stereo, anti, unrelated, ["a", "a", "a", "b"], ["race"] * 4, ["intrasentence"] * 4)
    overall = result["overall"]
    # means over targets (pooling the 4 examples would give LMS 75, SS 75)
    assert (overall["lms"], overall["ss"]) == (50.0, 50.0)
    assert overall["icat"] == 50.0  # ICAT from the means
    assert overall["micro_icat"] == 0.0  # mean of per-target ICATs: 100*0/50 and 0*0/50
    assert result["targets"]["b"] == {"lms": 0.0, "ss": 0.0, "icat": 0.0, "count": 1, "bias_type": "race"}
    assert icat(75.0, 50.0) == 75.0


def test_sets_per_task_and_domain_and_the_global_pool():
    stereo, anti, unrelated = [-1, -2, -1, -1], [-2, -1, -2, -2], [-3, -3, -3, -3]
    targets = ["nurse", "nurse", "nurse", "Iran"]
    types = ["profession", "profession", "profession", "race"]
    tasks = ["intrasentence", "intrasentence", "intersentence", "intersentence"]
    result = stereoset_scores(stereo, anti, unrelated, targets, types, tasks)
    assert result["intrasentence"]["profession"]["ss"] == 50.0 and "race" not in result["intrasentence"]
    assert result["intersentence"]["overall"]["ss"] == 100.0 and result["intersentence"]["overall"]["count"] == 2
    # global pool: nurse has 3 examples over both tasks (2 of 3 preferred), Iran 1 of 1
    assert result["overall"]["ss"] == pytest.approx((200 / 3 + 100) / 2)
    assert result["targets"]["nurse"]["count"] == 3


def test_bootstrap_intervals_contain_the_estimate_and_are_seeded():
    targets, types, tasks = make(n_targets=10, per_target=30)
    scores = np.random.default_rng(1).normal(size=(3, len(targets)))
    first = stereoset_scores(*scores, targets, types, tasks, bootstrap=200, seed=5)["overall"]
    again = stereoset_scores(*scores, targets, types, tasks, bootstrap=200, seed=5)["overall"]
    assert first["ci"] == again["ci"]
    for key in ("lms", "ss", "icat"):
        low, high = first["ci"][key]
        assert low <= first[key] <= high and high - low < 20


def test_stereoset_bad_input():
    args = ([-1.0], [-2.0], [-3.0], ["t"], ["gender"], ["intrasentence"])
    with pytest.raises(TypeError, match="unrelated_scores is missing"):
        stereoset_scores(args[0], args[1], None, *args[3:])
    with pytest.raises(ValueError, match=r"anti_stereotype_scores\[0\] is missing or NaN"):
        stereoset_scores(args[0], [float("nan")], *args[2:])
    with pytest.raises(ValueError, match="stereotype_scores has 2 scores but there are 1 examples"):
        stereoset_scores([-1.0, -2.0], *args[1:])
    with pytest.raises(ValueError, match=r"bias_types has unknown values \['politics'\]"):
        stereoset_scores(*args[:4], ["politics"], args[5])
    with pytest.raises(ValueError, match="targets is empty"):
        stereoset_scores([], [], [], [], [], [])


def test_crows_pairs_counts_sent_more_winning_with_rounding_and_ties():
    result = crows_pairs_scores(
        [-10.2, -8.0, -7.5, -20.0, -3.0], [-11.0, -7.0, -7.5004, -21.0, -4.0],
        ["stereo", "antistereo", "stereo", "stereo", "antistereo"], ["gender", "race", "gender", "age", "race"],
    )
    assert result["overall"] == {"metric_score": 60.0, "stereo_score": 100.0, "antistereo_score": 50.0, "neutral": 1, "count": 5}
    assert result["bias_types"]["race"]["metric_score"] == 50.0
    unrounded = crows_pairs_scores([-7.5], [-7.5004], ["stereo"], ["gender"], decimals=None)
    assert unrounded["overall"]["metric_score"] == 100.0
    with pytest.raises(ValueError, match=r"directions has unknown values \['pro'\]"):
        crows_pairs_scores([1.0], [0.0], ["pro"], ["age"])
    with pytest.raises(ValueError, match="bias_types must have one entry per pair"):
        crows_pairs_scores([1.0], [0.0], ["stereo"], [])


# StereoSet paper, Table 7 (development set), intrasentence race and religion rows: LMS, SS, ICAT.
PAPER_TABLE_7 = {
    "gpt2": {"race": (89.76, 60.35, 71.18), "religion": (88.46, 58.02, 74.27)},
    "gpt2-medium": {"race": (92.36, 61.44, 71.22), "religion": (90.46, 62.57, 67.71)},
    "gpt2-large": {"race": (91.89, 63.00, 67.99), "religion": (91.61, 61.61, 70.34)},
}


@pytest.mark.parametrize("model", list(PAPER_TABLE_7))
def test_the_authors_predictions_reproduce_the_papers_table_7(data_dir, model):
    """The StereoSet authors' own per-sentence GPT-2 scores, aggregated here, give their published figures."""
    import json

    from lmbias.benchmarks.stereoset.data import read_stereoset_file

    rows = read_stereoset_file(data_dir / "stereoset/reference/dev_race_religion_intrasentence.json")
    predictions = json.loads((data_dir / f"stereoset/reference/predictions_{model}.json").read_text())
    score = {p["id"]: p["score"] for p in predictions["intrasentence"]}
    result = stereoset_scores(
        [score[r["stereotype_id"]] for r in rows], [score[r["anti_stereotype_id"]] for r in rows],
        [score[r["unrelated_id"]] for r in rows], [r["target"] for r in rows], [r["bias_type"] for r in rows],
        [r["task"] for r in rows],
    )
    for domain, expected in PAPER_TABLE_7[model].items():
        block = result["intrasentence"][domain]
        assert (round(block["lms"], 2), round(block["ss"], 2), round(block["icat"], 2)) == expected
