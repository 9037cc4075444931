"""Deliberate errors are LmbiasErrors (one line on the command line, exit status 2) that still derive
from the builtin error a caller expects; the push writes its files with the one atomic write."""

import os

import pytest

from lmbias.cli import main
from lmbias.errors import LmbiasError, UnknownNameError
from lmbias.hub.push import Plan, write_plan
from lmbias.resources import locate


def test_a_missing_dataset_card_is_one_line_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["export-dataset", "crows_pairs", "--out", str(out), "--cards", str(tmp_path / "cards")]) == 2
    err = capsys.readouterr().err
    assert err == (f"lmbias: error: dataset card {tmp_path / 'cards' / 'crows_pairs' / 'README.md'} not found; pass cards_dir "
                   "(--cards DIR) pointing at a folder with crows_pairs/README.md\n")
    assert not out.exists()  # refused before anything was written


def test_an_unknown_resource_is_an_lmbias_error_and_a_key_error_in_one_plain_line():
    with pytest.raises(UnknownNameError) as info:
        locate("crows-pairs")
    assert isinstance(info.value, LmbiasError) and isinstance(info.value, KeyError)  # what main() prints as one line
    message = str(info.value)  # not quoted, as KeyError's own str() would
    assert message.startswith("unknown resource 'crows-pairs'; valid: [") and "'crows_pairs'" in message
    assert "\n" not in message


def test_a_push_file_that_cannot_be_written_leaves_no_temporary_file(tmp_path):
    """The old hand-made write left ``README.md.tmp`` behind when the rename failed."""
    (tmp_path / "README.md").mkdir()  # a folder where the card goes: the rename fails
    with pytest.raises(OSError):
        write_plan(Plan(repo_id="org/model", files={"README.md": b"card"}), tmp_path)
    assert os.listdir(tmp_path) == ["README.md"] and os.listdir(tmp_path / "README.md") == []
    (tmp_path / "README.md").rmdir()
    write_plan(Plan(repo_id="org/model", files={"README.md": b"card"}, dataset_files={"data/x.json": b"{}"}), tmp_path)
    assert (tmp_path / "README.md").read_bytes() == b"card"
    assert (tmp_path / "results-dataset" / "data" / "x.json").read_bytes() == b"{}"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["README.md", "data", "results-dataset", "x.json"]
