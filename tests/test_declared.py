"""A benchmark declared once (:mod:`lmbias.benchmarks.declared`): its options feed the command line,
the Python call's checks, the configuration and the folder's identity (issue 38). The coreference
pair (Winogender, WinoBias) is declared so."""

import argparse
import json

import pytest

from lmbias.benchmarks.declared import Option, run_task
from lmbias.benchmarks.winobias import BENCHMARK as WINOBIAS
from lmbias.benchmarks.winogender import BENCHMARK as WINOGENDER
from lmbias.cli import main
from lmbias.errors import InputError, LmbiasError


def test_an_option_is_checked_converted_and_parsed_from_its_one_declaration():
    types = Option("types", "sentence types", default=(1, 2), type=int, choices=(1, 2), many=True, narrows=True)
    parser = argparse.ArgumentParser(allow_abbrev=False)
    types.add_to(parser)
    assert parser.parse_args([]).types == [1, 2] and parser.parse_args(["--types", "2"]).types == [2]
    assert types.check((2,)) == [2] and types.narrowed([2]) and not types.narrowed([2, 1])
    with pytest.raises(LmbiasError, match=r"types must be a list of values from \[1, 2\], got str"):
        types.check("1")
    limit = Option("limit", "N", type=int, minimum=1, expected="an integer >= 1", narrows=True)
    assert limit.check(None) is None and limit.given(8) == "--limit 8" and limit.narrowed(8) and not limit.narrowed(None)
    with pytest.raises(InputError, match="limit must be an integer >= 1"):
        limit.check(0)


@pytest.mark.parametrize("given, message", [
    ({"genders": "male"}, "genders must be a list of values from ['male', 'female', 'neutral'], got str"),
    ({"genders": ["male", "male"]}, "genders"),
    ({"limit": 0}, "limit must be an integer >= 1"),
    ({"limt": 3}, "winogender has no option 'limt'; its options: genders, limit"),
    ({"protocol": "score"}, "protocol must be one of ['likelihood', 'generate']"),
    ({"prompt_template": "Pick {options}"}, "--prompt-template applies to --protocol generate"),
])
def test_the_python_call_refuses_in_one_line_before_anything_is_written(tmp_path, given, message):
    with pytest.raises(LmbiasError, match=message.replace("[", r"\[").replace("]", r"\]")):
        run_task(WINOGENDER, out=tmp_path / "r", **given)
    assert not (tmp_path / "r").exists()


def test_the_command_line_is_the_declaration():
    parser = argparse.ArgumentParser(allow_abbrev=False)
    WINOBIAS.add_arguments(parser)
    flags = [action.option_strings[-1] for action in parser._actions if action.option_strings][1:]
    assert flags == ["--split", "--types", "--limit", "--bootstrap", "--protocol", "--prompt-template"]
    assert vars(parser.parse_args([])) == {"split": "test", "types": [1, 2], "limit": None, "bootstrap": 1000,
                                           "protocol": "likelihood", "prompt_template": None}


def test_plumbing_only_options_that_change_the_answers_bind_the_folder(tmp_path, data_dir, embedded_model_cache, capsys):
    out = tmp_path / "wb"
    command = ["run", "winobias", "--limit", "1", "--bootstrap", "10", "--out", str(out), "--no-progress", "--threads", "2"]
    assert main(command) == 0
    identity = json.loads((out / "config.json").read_text())["config"]
    assert {key: identity[key] for key in ("protocol", "split", "types", "limit", "batch_size")} == {
        "protocol": "likelihood", "split": "test", "types": [1, 2], "limit": 1, "batch_size": 32}
    assert "bootstrap" not in identity
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["bootstrap"] == 10 and results["partial"]["sentences"] == "4 of 1,584 (--limit 1)"
    # another bootstrap: the same answers, new intervals; another --types: refused, naming it
    assert main([*command[:5], "20", *command[6:]]) == 0
    assert json.loads((out / "results.json").read_text())["config"]["bootstrap"] == 20
    assert json.loads((out / "results.json").read_text())["timing"]["items_scored"] == 0
    assert main([*command, "--types", "1"]) == 2
    assert "types: recorded [1, 2], now [1]" in capsys.readouterr().err


def test_a_repeated_option_reads_each_value_given():
    parser = argparse.ArgumentParser(allow_abbrev=False)
    Option("compare", "pairs", repeated=True, metavar="DOMAIN:A:B").add_to(parser)
    assert parser.parse_args(["--compare", "gender:a:b", "--compare", "race:c:d"]).compare == ["gender:a:b", "race:c:d"]
    assert parser.parse_args([]).compare is None
