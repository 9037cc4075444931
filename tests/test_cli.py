"""The lmbias command line."""

import json
import re

import pytest

from lmbias.cli import main


def test_datasets_summary_json(capsys):
    assert main(["datasets", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = {(r["dataset"], r["config"]): (r["rows"], r["groups"]) for r in summary["datasets"]}
    assert rows[("bold", "all")] == (23_679, 43)
    assert rows[("stereoset", "intrasentence")] == (2_106, 79)
    assert rows[("crows_pairs", "all")] == (1_508, 9)
    assert rows[("counterfactual_templates", "all")] == (730, 41)
    assert summary["bold_profession_merged_groups"]["science & technology"] == 4_153


def test_datasets_summary_markdown(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "| bold | profession | train | 10,195 | 18 | group |" in out
    assert "| healthcare & medicine | 1,173 |" in out


def test_export_dataset_command(tmp_path, capsys):
    assert main(["export-dataset", "counterfactual_templates", "--out", str(tmp_path)]) == 0
    assert "counterfactual_templates/occupation: 290 rows" in capsys.readouterr().out
    assert (tmp_path / "occupation" / "test.parquet").is_file() and (tmp_path / "README.md").is_file()


def test_missing_data_is_one_clear_error_with_status_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LMBIAS_DATA_DIR", str(tmp_path))
    assert main(["datasets"]) == 2
    err = capsys.readouterr().err
    assert re.match(r"lmbias: error: resource '[\w/]+' \(.*\) was not found", err) and "LMBIAS_DATA_DIR" in err


def test_unknown_dataset_is_rejected_by_the_parser(capsys):
    with pytest.raises(SystemExit):
        main(["export-dataset", "bolt", "--out", "x"])
    assert "invalid choice: 'bolt'" in capsys.readouterr().err


def test_every_option_has_help_and_shows_its_default(monkeypatch):
    import argparse

    monkeypatch.setenv("COLUMNS", "250")  # one help line per option, whatever the terminal

    from lmbias.cli import build_parser

    def options(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from options(sub, f"{prefix} {name}")
            elif action.option_strings and action.dest != "help":
                yield prefix, action, parser

    found = list(options(build_parser(), "lmbias"))
    assert [(prefix, a.option_strings) for prefix, a, _ in found if not a.help] == []
    helps = {(prefix, a.option_strings[0]): p.format_help() for prefix, a, p in found}
    assert "(default: 0)" in helps["lmbias run bold", "--seed"] and "(default: runs/bold-MODEL" in helps["lmbias run bold", "--out"]


def test_top_level_help_has_examples_and_every_environment_variable_it_names_is_read(capsys):
    import re
    from pathlib import Path

    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "examples:" in text and "environment:" in text
    named = set(re.findall(r"^  ([A-Z][A-Z_]+)", text.split("environment:")[1], flags=re.M))
    source = "\n".join(path.read_text() for path in (Path(__file__).parents[1] / "lmbias").rglob("*.py"))
    assert len(named) >= 7 and all(f'"{name}"' in source for name in named), named  # no variable lmbias does not read


def test_run_help_names_the_list_the_sets_and_declared_benchmarks(capsys, monkeypatch):
    """`lmbias run --help` is where a newcomer looks: it names `--list`, every set with its members, a
    `.yaml` declaration and --protocol given once (as the suite parser reads them: each example is accepted)."""
    from lmbias.cli import parse_command
    from lmbias.suite import SETS, set_members

    monkeypatch.setenv("COLUMNS", "250")
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    assert "lmbias run --list " in text and "./mine.yaml" in text and "docs/custom-benchmarks.md" in text
    for name, members in SETS.items():
        assert re.search(rf"^  {name} +.*{', '.join(members) if members else 'every registered benchmark'}$", text, flags=re.M)
    assert set_members("model-card") == list(SETS["model-card"])
    assert "apply to every benchmark that takes them, and so does --protocol given once" in " ".join(text.split())
    assert parse_command(["run", "winobias", "winogender", "--protocol", "generate"])[0].protocol == "generate"


def test_report_without_out_refuses_several_runs_in_one_line(tmp_path, monkeypatch, capsys):
    """One run folder's report goes to reports/<its name> (run for real in tests/test_docs_commands.py); several
    have no one name: --out is asked for, in one line, and nothing is written."""
    monkeypatch.chdir(tmp_path)
    assert main(["report", "runs/a", "runs/b"]) == 2
    assert capsys.readouterr().err.strip() == ("lmbias: error: --out is needed with 2 run folders: the report's folder (one "
                                               "run folder's report goes to reports/<its name> by default)")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("benchmark", ["bold", "stereoset", "crows_pairs", "counterfactual"])
def test_run_help_lists_the_benchmarks_own_options_before_the_shared_groups(benchmark, capsys):
    from lmbias.benchmarks import get_benchmark

    with pytest.raises(SystemExit):
        main(["run", benchmark, "--help"])
    text = capsys.readouterr().out
    first_shared = text.index("model and where it runs:")
    assert first_shared < text.index("\nrun:\n")
    own = [a.option_strings[-1] for a in _run_parser(benchmark)._actions
           if a.option_strings and a.container.title == "options" and a.dest != "help"]
    assert len(own) >= 2  # the benchmark's own options and --out
    assert all(text.index(flag) < first_shared for flag in own)
    if "backend" in get_benchmark(benchmark).run_options:
        assert text.index("backend (each backend's own options after --backend):") > first_shared


def _run_parser(benchmark):
    from lmbias.cli import _subparser, build_parser

    return _subparser(build_parser(), "run", benchmark)
