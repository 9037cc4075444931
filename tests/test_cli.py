"""The lmbias command line."""

import json

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
    assert "| bold | profession | test | 10,195 | 18 | group |" in out
    assert "| healthcare & medicine | 1,173 |" in out


def test_export_dataset_command(tmp_path, capsys):
    assert main(["export-dataset", "counterfactual_templates", "--out", str(tmp_path)]) == 0
    assert "counterfactual_templates/occupation: 290 rows" in capsys.readouterr().out
    assert (tmp_path / "occupation" / "test.parquet").is_file() and (tmp_path / "README.md").is_file()


def test_missing_data_is_one_clear_error_with_status_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LMBIAS_DATA_DIR", str(tmp_path))
    assert main(["datasets"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lmbias: error: resource 'bold/prompts/gender'") and "LMBIAS_DATA_DIR" in err


def test_unknown_dataset_is_rejected_by_the_parser(capsys):
    with pytest.raises(SystemExit):
        main(["export-dataset", "bolt", "--out", "x"])
    assert "invalid choice: 'bolt'" in capsys.readouterr().err
