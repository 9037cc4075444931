"""The benchmark registry is the only seam: an out-of-tree benchmark package (tests/fixtures/plugins,
found through its distribution's entry points once that folder is on ``sys.path``, as a third party's
would be) shows up in ``lmbias run --help``, its results.json, the report, the leaderboard, a push
dry-run and ``lmbias datasets``; and benchmarks registered at run time come and go."""

import json
from pathlib import Path

import pytest

from lmbias import benchmarks
from lmbias.benchmarks import REGISTRY
from lmbias.cli import main
from lmbias.data import DATASETS

PLUGINS = Path(__file__).parent / "fixtures" / "plugins"


@pytest.fixture()
def toy(monkeypatch):
    """The out-of-tree package on sys.path, and the registries read again (then restored)."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    REGISTRY.reload()
    DATASETS.reload()
    yield REGISTRY["toy"]
    monkeypatch.undo()
    REGISTRY.reload()
    DATASETS.reload()


def test_an_out_of_tree_benchmark_package_appears_everywhere(toy, tmp_path, capsys):
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


def test_an_out_of_tree_package_is_found_by_its_entry_points_only(toy, capsys):
    assert toy.measure.__module__ == "lmbias_toy_coins" and "lmbias_toy_coins" not in REGISTRY.group  # its own package
    assert "toy" in benchmarks.names() and "toy_coins" in DATASETS
    assert main(["datasets"]) == 0
    assert "| toy_coins | gender | test | 4 | 1 | domain |" in capsys.readouterr().out


def test_a_benchmark_registered_at_run_time_comes_and_goes(toy):
    from dataclasses import replace

    benchmarks.register(replace(toy, name="toy2", description="toy benchmark 2"))
    assert benchmarks.get_benchmark("toy2").description == "toy benchmark 2"
    benchmarks.unregister("toy2")
    assert "toy2" not in benchmarks.names()


def _declaring_examples(toy, limit_help: str = "N counts flips per domain: the first N of each"):
    """The toy with a --limit its run checks, declaring what the shared tests read: a refused combination and the
    examples of an evaluate module of its own."""
    from dataclasses import replace

    from lmbias.benchmarks.declared import Option

    limit = Option("limit", limit_help, type=int, minimum=1, metavar="N", narrows=True)
    return replace(toy, options=(*toy.options, limit), examples=benchmarks.Examples(
        refused=((("--limit", "0"), "--limit must be >= 1"),),
        modules={"toy_coins": benchmarks.ModuleExample({"predictions": [1, 0, 1, 1, 0]})}))


def test_the_shared_tests_read_a_benchmark_registered_at_run_time(toy, tmp_path, capsys):
    """A new benchmark edits no shared test file: the CLI walk's refusals and --limit check and the evaluate modules'
    examples are read from the registry, so a benchmark registered at run time is in them with what it declares, and
    a declaration that is not true fails there."""
    import test_cli_walk
    import test_metric_streaming

    assert "toy" not in {name for name, _, _ in test_cli_walk.refusals()}
    benchmarks.register(_declaring_examples(toy))
    assert ("toy", ("--limit", "0"), "--limit must be >= 1") in test_cli_walk.refusals()
    test_cli_walk.assert_refused_before_the_model(tmp_path / "refused", capsys, "toy", ("--limit", "0"), "--limit must be >= 1")
    with pytest.raises(AssertionError):  # a combination the toy runs, declared as refused: the check fails
        test_cli_walk.assert_refused_before_the_model(tmp_path / "runs", capsys, "toy", ("--limit", "2"), "--limit must be >= 1")
    assert (tmp_path / "runs" / "run" / "results.json").is_file()
    assert "--limit" in test_cli_walk.run_commands()["toy"]._option_string_actions
    test_cli_walk.test_each_limit_says_what_it_counts()
    assert test_metric_streaming.module_examples()["toy_coins"].inputs == {"predictions": [1, 0, 1, 1, 0]}
    with pytest.raises(AssertionError):  # the toy declares a module that metrics/ does not hold
        test_metric_streaming.test_every_module_is_covered()

    benchmarks.register(_declaring_examples(toy, limit_help="how many flips to read"))
    with pytest.raises(AssertionError, match="how many flips to read"):  # a --limit that does not say what N counts
        test_cli_walk.test_each_limit_says_what_it_counts()


def test_without_the_package_the_benchmark_is_gone(tmp_path, capsys):
    assert "toy" not in benchmarks.names()
    with pytest.raises(SystemExit):
        main(["run", "toy"])
    assert "unknown benchmark or set 'toy'" in capsys.readouterr().err


def test_each_benchmark_names_its_split_as_its_dataset_and_the_hub_do():
    """One split name everywhere: the lmbias dataset (``load_dataset``, the exported Parquet, the card),
    the report and the model-index use the split of the Hub dataset the numbers are reported against."""
    for benchmark in benchmarks.benchmarks():
        assert DATASETS[benchmark.dataset].split == benchmark.hub_dataset.split, benchmark.name
    published = {"bold": "train", "stereoset": "validation", "crows_pairs": "test", "counterfactual": "test"}
    assert all(benchmarks.get_benchmark(name).hub_dataset.split == split for name, split in published.items())
