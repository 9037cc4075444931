"""The benchmark registry is the only seam: a toy benchmark declared here, and nowhere else, shows up
in ``lmbias run --help``, its results.json, the report, the leaderboard and a push dry-run."""

import json

import pytest

from lmbias import benchmarks
from lmbias.benchmarks import Benchmark, HubDataset, MetricSpec
from lmbias.cli import main
from lmbias.render import html
from lmbias.run_result import RunResult, write_run

FLIPS = {"gender": "HHTH", "race": "TTHT"}  # the toy "dataset": coin flips per domain


def _records(results):
    for domain, share in results["results"]["heads"].items():
        yield TOY.record("heads_share", share, domain=domain, count=len(FLIPS[domain]))
    yield TOY.record("heads_share", results["results"]["overall"], domain="overall", count=8)


def _run(options):
    heads = {domain: 100.0 * flips.count("H") / len(flips) for domain, flips in FLIPS.items()}
    return write_run(options.out, RunResult(
        benchmark="toy", model={"name": options.model or "toy-model", "source": "test"},
        data={"dataset": "toy", "counts": {"flips": 8}}, config={"seed": options.seed, "fair": options.fair},
        results={"heads": heads, "overall": sum(heads.values()) / len(heads)},
        skipped={"tails_streaks": "not implemented in the toy"},
    ))


def _summary(results, out):
    return f"toy: {results['results']['overall']:.1f}% heads; results in {out}/results.json"


def _section(runs, labels, figures, options):
    rows = [[label, f"{run.results['results']['overall']:.1f}"] for run, label in zip(runs, labels)]
    return [html.tag("h2", "Toy coin flips"), html.table(["model", "heads (%)"], rows)]


TOY = Benchmark(
    name="toy", display_name="Toy coins", description="toy benchmark: share of heads", dataset="toy",
    hub_dataset=HubDataset("lmbias/toy-coins", "Toy coins", "test"),
    metrics=(MetricSpec("heads_share", "Heads share", "%", 50.0, None, 1, "share of flips that came up heads"),),
    run=_run, records=_records, summary=_summary, report_section=_section, run_options=("model", "seed"),
    add_arguments=lambda parser: parser.add_argument("--fair", action="store_true", help="a fair coin"),
    overall_note="Toy coins: all flips.",
)


@pytest.fixture()
def toy():
    benchmarks.register(TOY)
    yield TOY
    benchmarks.unregister("toy")


def test_a_benchmark_declared_in_a_test_appears_everywhere(toy, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "toy benchmark: share of heads" in capsys.readouterr().out

    run_dir = tmp_path / "toy-run"
    assert main(["run", "toy", "--model", "coin-7b", "--fair", "--out", str(run_dir)]) == 0
    assert "toy: 50.0% heads" in capsys.readouterr().out  # gender 3 of 4 heads, race 1 of 4: (75 + 25) / 2
    results = json.loads((run_dir / "results.json").read_text())
    assert results["schema_version"] == 2 and results["benchmark"] == "toy" and results["config"]["fair"] is True
    assert results["model"] == {"name": "coin-7b", "source": "test", "revision": None, "dtype": None}
    assert [(r["domain"], r["value"], r["ideal"]) for r in results["records"]] == [
        ("gender", 75.0, 50.0), ("race", 25.0, 50.0), ("overall", 50.0, 50.0)]

    assert main(["report", str(run_dir), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.html").read_text()
    assert "Toy coin flips" in report and "tails_streaks: not implemented in the toy" in report

    assert main(["leaderboard", str(run_dir), "--out", str(tmp_path / "site")]) == 0
    site = json.loads((tmp_path / "site" / "leaderboard.json").read_text())
    assert {"id": "toy:heads_share", "name": "Heads share"}.items() <= next(c for c in site["columns"] if c["benchmark"] == "toy").items()
    assert [(r["view"], r["value"]) for r in site["records"]] == [("gender", 75.0), ("race", 25.0), ("overall", 50.0)]
    assert "Toy coins: all flips." in (tmp_path / "site" / "index.html").read_text()

    dry = tmp_path / "dry"
    assert main(["push", str(run_dir), "--repo-id", "org/coin-7b", "--dry-run", "--out", str(dry)]) == 0
    card = (dry / "README.md").read_text()
    assert "Toy coins" in card and "heads_share" in card and "lmbias/toy-coins" not in card  # not read from the Hub: no Hub id
    assert "toy: not measured: tails_streaks" in capsys.readouterr().out


def test_unregistered_benchmark_is_gone(tmp_path, capsys):
    assert "toy" not in benchmarks.names()
    with pytest.raises(SystemExit):
        main(["run", "toy"])
    assert "invalid choice: 'toy'" in capsys.readouterr().err


def test_each_benchmark_names_its_split_as_its_dataset_and_the_hub_do():
    """One split name everywhere: the lmbias dataset (``load_dataset``, the exported Parquet, the card),
    the report and the model-index use the split of the Hub dataset the numbers are reported against."""
    from lmbias.benchmarks import benchmarks
    from lmbias.data import DATASETS

    assert {b.name: (DATASETS[b.dataset].split, b.hub_dataset.split) for b in benchmarks()} == {
        "bold": ("train", "train"), "stereoset": ("validation", "validation"), "crows_pairs": ("test", "test"),
        "counterfactual": ("test", "test")}
