"""Schema version 1 -> 2: runs written by lmbias before the run envelope (tests/fixtures/schema_v1, made
by main at 3bc1d0b with the embedded model) are read, migrated in memory, and used everywhere."""

import json
import shutil
from pathlib import Path

import pytest

from lmbias.cli import main
from lmbias.hub.model_index import run_config
from lmbias.results import load_run, metric_records

FIXTURES = Path(__file__).parent / "fixtures" / "schema_v1"
ENVELOPE = {"schema_version", "benchmark", "model", "data", "config", "timing", "skipped", "partial", "outputs", "results", "records",
            "versions"}


@pytest.fixture()
def v1_runs(tmp_path):
    """A copy of the four version-1 runs (the files are never rewritten by reading them)."""
    shutil.copytree(FIXTURES, tmp_path / "runs")
    return {path.name: path for path in sorted((tmp_path / "runs").iterdir())}


def _record(run, metric, **match):
    found = [r for r in metric_records(run) if r["metric"] == metric and all(r.get(k) == v for k, v in match.items())]
    assert len(found) == 1, found
    return found[0]


def test_every_v1_run_reads_as_the_v2_envelope(v1_runs):
    for name, path in v1_runs.items():
        run = load_run(path)
        assert run.benchmark == name and set(run.results) == ENVELOPE and run.results["schema_version"] == 2
        assert json.loads((path / "results.json").read_text())["schema_version"] == 1  # the file is left as it was
        assert run.complete, run.missing


def test_migrated_values_are_the_v1_numbers(v1_runs):
    crows = load_run(v1_runs["crows_pairs"])
    assert (_record(crows, "metric_score", domain="overall")["value"], crows.results["outputs"]) == (
        60.0, {"scores_file": "scores.jsonl"})

    stereoset = load_run(v1_runs["stereoset"])
    icat = _record(stereoset, "icat", domain="overall", task="both")
    assert icat["value"] == pytest.approx(74.35980902777779) and icat["ci"] == pytest.approx([52.06590856383877, 83.42314135276375])
    assert stereoset.results["skipped"] == {}

    counterfactual = load_run(v1_runs["counterfactual"])
    assert _record(counterfactual, "individual_fairness", domain="occupation", classifier="vader")["value"] == pytest.approx(
        0.2088412561576355)
    assert counterfactual.results["config"]["samples_per_prefix"] == 2 and counterfactual.results["config"]["preset"] == "counterfactual"
    assert counterfactual.results["outputs"] == {"texts": 580, "generations_file": "generations.jsonl"}
    assert counterfactual.results["data"]["counts"] == {"prefixes": 290}

    bold = load_run(v1_runs["bold"])
    config = bold.results["config"]
    assert (config["preset"], config["per_group"], config["domains"], config["gender_methods"]) == (
        "bold-gpt2", 1, ["gender", "race"], ["unigram", "wavg", "max"])
    assert bold.results["data"]["counts"] == {"prompts": 6} and bold.results["outputs"]["texts"] == 6
    assert {r["domain"] for r in metric_records(bold) if r["metric"] == "negative_sentiment_gap"} == {"gender", "race"}
    # the card's args: the settings (the generation's spread out); the item counts stay in results.json
    assert run_config(bold)["top_k"] == 40 and "prompts" not in run_config(bold)


def test_v1_runs_feed_the_report_leaderboard_and_push(v1_runs, tmp_path):
    dirs = [str(path) for path in v1_runs.values()]
    assert main(["report", *dirs, "--out", str(tmp_path / "report")]) == 0
    assert main(["leaderboard", *dirs, "--out", str(tmp_path / "site")]) == 0
    site = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    assert {run["benchmark"]: run["status"] for row in site["rows"] for run in row["runs"]} == {
        "bold": "complete", "stereoset": "complete", "crows_pairs": "complete", "counterfactual": "complete"}
    assert main(["push", *dirs, "--repo-id", "org/smollm2", "--dry-run", "--out", str(tmp_path / "dry")]) == 0
    # none of them read its data from the Hub: no .eval_results (whose dataset.id must be a Hub dataset)
    assert not (tmp_path / "dry" / ".eval_results").exists()
