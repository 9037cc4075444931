"""lmbias.results: reading run directories back and the headline metric records (hand-computed values)."""

import json

import pytest

from lmbias.results import SCHEMA_VERSION, RunError, dataset_of, load_run, load_runs, metric_records


def write(folder, results):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def bold_scores(negative_a, negative_b, skipped=None):
    sentiment = {"gender": {"per_group": {"A": {"n": 10, "negative": negative_a, "neutral": 1 - negative_a, "positive": 0.0},
                                          "B": {"n": 30, "negative": negative_b, "neutral": 1 - negative_b, "positive": 0.0}},
                            "test": None}}
    # 10 texts at 0.5 male / 0.1 female and 30 at 0.2 male / 0.3 female: 5 + 6 = 11 male, 1 + 9 = 10 female
    polarity = {"profession": {"per_group": {"p": {"n": 10, "male": 0.5, "female": 0.1, "neutral": 0.4},
                                             "q": {"n": 30, "male": 0.2, "female": 0.3, "neutral": 0.5}}, "test": None}}
    return {"metrics": {"sentiment": {"label_names": ["negative", "neutral", "positive"], "domains": sentiment},
                        "gender_polarity": {"label_names": ["female", "male", "neutral"], "methods": {"max": {"domains": polarity}}}},
            "skipped": skipped or {}, "options": {}}


def bold_results(**changes):
    results = {"schema_version": SCHEMA_VERSION, "benchmark": "bold", "model": {"name": "m"},
               "data": {"dataset": "bold", "revision": "abc"},
               "results": {"model": bold_scores(0.1, 0.4, {"toxicity": "no classifier"}), "wikipedia": bold_scores(0.2, 0.2)}}
    results.update(changes)
    return results


def test_bold_records_are_the_gaps_and_the_pooled_ratio(tmp_path):
    run = load_run(write(tmp_path / "bold", bold_results()))
    records = {(r["source"], r["metric"], r["domain"]): r for r in metric_records(run)}
    assert records["model", "negative_sentiment_gap", "gender"]["value"] == pytest.approx(30.0)  # 40% - 10%, in points
    assert records["wikipedia", "negative_sentiment_gap", "gender"]["value"] == pytest.approx(0.0)
    assert records["model", "gender_polarity_ratio", "profession"]["value"] == pytest.approx(11 / 10)
    assert records["model", "negative_sentiment_gap", "gender"]["ideal"] == 0.0
    assert not any(r["metric"] == "toxicity_gap" for r in records.values())  # skipped, so no record
    assert run.missing == ["model toxicity: no classifier"] and not run.complete
    # a revision no registered source has: the source is not claimed (no Hub id either)
    assert dataset_of(run) == {"type": "bold (source not recorded)", "name": "BOLD", "split": None, "revision": None}


def test_stereoset_crows_and_counterfactual_records(tmp_path):
    block = {"lms": 90.0, "ss": 60.0, "icat": 72.0, "count": 4}
    stereoset = write(tmp_path / "ss", {"schema_version": 1, "benchmark": "stereoset", "model": {"name": "m"},
                                        "data": {"split": "dev"},
                                        "results": {"intrasentence": {"gender": block, "overall": block}, "overall": block}})
    run = load_run(stereoset)
    assert [(r["task"], r["domain"], r["metric"], r["value"]) for r in metric_records(run)][-3:] == [
        ("both", "overall", "lms", 90.0), ("both", "overall", "ss", 60.0), ("both", "overall", "icat", 72.0)]
    assert run.missing == ["intersentence: not run"]
    assert dataset_of(run)["split"] == "dev"  # the split's name where the data came from (not the Hub's "validation")

    crows = load_run(write(tmp_path / "crows", {"schema_version": 1, "benchmark": "crows_pairs", "model": {"name": "m"},
                                                "results": {"overall": {"metric_score": 55.0, "count": 3},
                                                            "bias_types": {"age": {"metric_score": None, "count": 0}}}}))
    assert [(r["domain"], r["value"], r["ideal"]) for r in metric_records(crows)] == [("overall", 55.0, 50.0), ("age", None, 50.0)]

    fairness = {"individual_fairness": 0.2, "group_fairness": 0.05, "ci": {"individual_fairness": [0.1, 0.3]}}
    counterfactual = load_run(write(tmp_path / "cf", {"schema_version": 1, "benchmark": "counterfactual", "model": {"name": "m"},
                                                      "results": {"attributes": {"name": {"classifiers": {"vader": fairness}}},
                                                                  "skipped": {"hf": "offline"}}}))
    assert [(r["metric"], r["classifier"], r["value"], r["ci"]) for r in metric_records(counterfactual)] == [
        ("individual_fairness", "vader", 0.2, [0.1, 0.3]), ("group_fairness", "vader", 0.05, None)]
    assert counterfactual.missing == ["hf: offline"]


def test_unfinished_run_has_no_records_and_says_what_is_missing(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"config": {"model": "gpt2", "preset": "counterfactual", "prompts": 3,
                                                               "num_return_sequences": 2}}))
    (folder / "shard-0.jsonl").write_text('{"batch": 0, "items": [{"id": "x"}, {"id": "y"}]}\n{"batch": 1, "items": []}\n')
    run = load_run(folder)
    assert (run.benchmark, run.model, run.results, metric_records(run)) == ("counterfactual", "gpt2", None, [])
    assert "(2 of 6 generations written)" in run.missing[0]  # the items, not the shard lines


def test_an_unfinished_likelihood_run_says_what_its_saved_batches_hold(tmp_path):
    """Its batches resume, so it never says that nothing is kept; a chat run's label says so."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"benchmark": "crows_pairs", "config": {
        "model": "gpt2", "model_type": "auto", "rows": 40, "chat": True, "system_prompt": None}}))
    (folder / "shard-0.jsonl").write_text('{"batch": 0, "items": [{"id": 1}, {"id": 2}, {"id": 3}]}\n{"batch": 1, "ite')
    run = load_run(folder)
    assert (run.benchmark, run.model) == ("crows_pairs", "gpt2 [chat]")
    assert "(3 of 40 items scored); rerun the same command to resume it" in run.missing[0]


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "does not exist"),
        ("", "holds no benchmark run: no results.json, and no config.json or shard-.*jsonl of an unfinished run"),
        ("{not json", "is not valid JSON"),
        (json.dumps({"benchmark": "glue"}), "is not an lmbias results file"),
        (json.dumps(bold_results(schema_version=None)), "predates schema versions"),
        (json.dumps(bold_results(schema_version=SCHEMA_VERSION + 1)), "written by a newer lmbias"),
    ],
)
def test_unreadable_runs_are_clear_errors(tmp_path, content, message):
    folder = tmp_path / "run"
    if content is not None:
        folder.mkdir()
        if content:
            (folder / "results.json").write_text(content)
    with pytest.raises(RunError, match=message):
        load_run(folder)


def test_load_runs_needs_a_list(tmp_path):
    for bad in ([], None, str(tmp_path)):
        with pytest.raises(ValueError, match="non-empty list of run directories"):
            load_runs(bad)
