"""The command line as a new user walks it (issue 37): a typo gets a "did you mean", a mistake is one
line with a pointer to --help (never 30 lines of usage first), BBQ categories in any case, one name
for the generative protocol everywhere, option combinations refused before any model is looked at,
the "Partial run" line and the skipped metrics printed once at the end of every run, and each
--limit saying what it counts."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest
from test_results_readers import write_bbq_run

from lmbias.benchmarks import benchmarks, get_benchmark
from lmbias.benchmarks.base import any_case
from lmbias.cli import build_parser, main
from lmbias.results import load_run, protocol_tags

from tiny_lm import save_tiny_causal_lm

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "schema_v1"


def error_line(capsys, argv) -> str:
    """The one line ``lmbias ARGV`` prints for a mistake (exit status 2, nothing on stdout)."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert stopped.value.code == 2 and len(lines) == 1 and not captured.out, captured.err
    return lines[0]


# --- did you mean, one line ---------------------------------------------------------------------------

@pytest.mark.parametrize("argv, expected, meant", [
    (["run", "stereoste"], "lmbias run: error: unknown benchmark or set 'stereoste' (`lmbias run --list` shows them)", "stereoset"),
    (["reprot", "runs/x"], "lmbias: error: argument command: invalid choice: 'reprot' ", "report"),
    (["run", "bbq", "--categories", "Agee"], "lmbias run bbq: error: argument --categories: invalid choice: 'Agee' ", "Age"),
    (["run", "bold", "--per-grup", "3"], "lmbias run bold: error: unrecognized arguments: --per-grup 3; ", "--per-group"),
])
def test_a_typo_gets_a_did_you_mean(capsys, argv, expected, meant):
    line = error_line(capsys, argv)
    command = line.split(": error:")[0]
    assert line.startswith(expected) and line.endswith(f"; did you mean '{meant}'? (see `{command} --help`)"), line


def test_no_did_you_mean_when_nothing_is_close(capsys):
    line = error_line(capsys, ["run", "holistic_bias", "--limit", "3"])  # HolisticBias has --templates / --nouns, no --limit
    assert line == "lmbias run holistic_bias: error: unrecognized arguments: --limit 3 (see `lmbias run holistic_bias --help`)"


@pytest.mark.parametrize("argv", [["run", "bbq", "--categories", "Nope"], ["run", "bbq", "--limit", "ten"],
                                  ["run", "winobias", "--types", "3"], ["run", "winobias", "--split", "train"],
                                  ["run", "bbq"] + ["--decision"]])
def test_bbq_and_winobias_option_errors_are_one_line_without_the_usage(capsys, argv):
    line = error_line(capsys, argv)
    assert line.startswith(f"lmbias run {argv[1]}: error: argument ") and "usage" not in line
    assert line.endswith(f"(see `lmbias run {argv[1]} --help`)")


# --- BBQ categories in any case ---------------------------------------------------------------------

def test_bbq_categories_in_any_case_are_the_canonical_names():
    args = build_parser().parse_args(["run", "bbq", "--categories", "gender_identity", "AGE", "race_x_ses", "Religion"])
    assert args.categories == ["Gender_identity", "Age", "Race_x_SES", "Religion"]


def test_a_category_matching_two_names_case_aside_is_refused(capsys):
    parser = argparse.ArgumentParser(allow_abbrev=False, prog="lmbias run x")
    parser.add_argument("--groups", nargs="+", type=any_case(["Race_x_SES", "Race_x_ses"]), choices=["Race_x_SES", "Race_x_ses"])
    assert parser.parse_args(["--groups", "Race_x_ses"]).groups == ["Race_x_ses"]  # as written: no ambiguity
    with pytest.raises(SystemExit):
        parser.parse_args(["--groups", "race_x_ses"])
    assert "'race_x_ses' is ambiguous: it matches 'Race_x_SES', 'Race_x_ses' case aside" in capsys.readouterr().err


# --- one name for the generative protocol -------------------------------------------------------------

def run_commands() -> dict:
    """``lmbias run``'s parser of each registered benchmark, by name."""
    parser = build_parser()
    runs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    return next(a for a in runs._actions if isinstance(a, argparse._SubParsersAction)).choices


def _protocol_benchmarks() -> list:
    return [(name, command) for name, command in run_commands().items() if "--protocol" in command._option_string_actions]


def test_the_protocol_a_label_shows_is_the_value_the_option_takes(capsys):
    chosen = _protocol_benchmarks()
    # --protocol is there exactly where the declaration names more than one protocol
    assert {name for name, _ in chosen} == {b.name for b in benchmarks() if len(b.protocols) > 1}
    assert "bbq" in dict(chosen)
    tags = protocol_tags({}, {"protocol": "generate"})
    assert tags == ["generate"]
    for _, command in chosen:
        assert command.parse_args(["--protocol", tags[0]]).protocol == "generate"
    line = error_line(capsys, ["run", "bbq", "--protocol", "generative"])
    assert "invalid choice: 'generative' (choose from 'likelihood', 'generate'); did you mean 'generate'?" in line


def test_a_generative_run_is_labelled_with_the_option_value(tmp_path):
    folder = write_bbq_run(tmp_path / "bbq")
    results = json.loads((folder / "results.json").read_text())
    results["config"]["protocol"] = "generate"
    results["model"]["chat"] = {"template_sha256": "server", "system_prompt": None}
    (folder / "results.json").write_text(json.dumps(results))
    assert load_run(folder).model == "m [chat, generate]"


# --- option combinations before any model ------------------------------------------------------------

def refusals() -> list:
    """``(benchmark, arguments, message)``: what each registered benchmark's ``lmbias run`` refuses before any model is
    looked at: the combinations it declares (``Benchmark.examples.refused``) and ``--chat`` with each of its protocols
    that scores raw text, where it does not score in the chat template (``chat_scoring``)."""
    found = []
    for benchmark in benchmarks():
        protocols = benchmark.protocols if not benchmark.chat_scoring and "chat" in benchmark.run_options else ()
        for name in [asked.protocol.name for asked in protocols if asked.protocol.scores_raw_text]:
            chosen = ("--protocol", name) if len(benchmark.protocols) > 1 else ()
            found.append((benchmark.name, (*chosen, "--chat"),
                          f"--chat: {benchmark.name}'s likelihood scoring runs on raw text; run it with --protocol generate"))
        found += [(benchmark.name, tuple(arguments), message) for arguments, message in benchmark.examples.refused]
    return found


def assert_refused_before_the_model(tmp_path, capsys, benchmark: str, arguments, message: str) -> None:
    """``lmbias run BENCHMARK ARGUMENTS`` with a model that does not exist: one line holding ``message``, exit status 2,
    nothing written; had the model been checked or loaded first, the error would name it."""
    out = tmp_path / "run"
    assert main(["run", benchmark, *arguments, "--model", str(tmp_path / "no-such-model"), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [captured.err.strip()] and message in captured.err, captured.err
    assert "no-such-model" not in captured.err and not out.exists()


@pytest.mark.parametrize("benchmark, arguments, message", refusals(), ids=[" ".join((b, *a)) for b, a, _ in refusals()])
def test_a_wrong_combination_is_refused_before_the_model_is_looked_at(tmp_path, capsys, data_dir, benchmark, arguments, message):
    assert_refused_before_the_model(tmp_path, capsys, benchmark, arguments, message)


def test_every_benchmark_with_chat_says_how_its_combinations_are_checked():
    """Each benchmark whose run takes --chat has a refused combination above (a new one declares its own)."""
    covered = {name for name, _, _ in refusals()}
    with_chat = {b.name for b in benchmarks() if "chat" in b.run_options}
    assert with_chat <= covered, with_chat - covered
    assert {"bbq", "winogender", "bold", "toxigen"} <= covered  # derived (--chat on likelihood) and declared ones


# --- the end of a run: partial and skipped, once, for every benchmark ----------------------------------------

def _fixture_results(benchmark: str, tmp_path: Path) -> dict:
    folder = tmp_path / benchmark
    if benchmark == "bbq":
        write_bbq_run(folder)
    else:
        folder.mkdir()
        (folder / "results.json").write_text((FIXTURES / benchmark / "results.json").read_text())
    return load_run(folder).results


@pytest.mark.parametrize("benchmark", ["bbq", "bold", "counterfactual", "crows_pairs", "stereoset"])
def test_the_partial_line_ends_every_summary_once(tmp_path, benchmark):
    results = {**_fixture_results(benchmark, tmp_path), "partial": {"items": "4 of 58,492 (--limit 1)"}, "skipped": {}}
    text = get_benchmark(benchmark).closing_summary(results, "runs/x")
    assert text.count("Partial run") == 1 and text.splitlines()[-1] == "Partial run: items 4 of 58,492 (--limit 1)."
    assert "Partial run" not in get_benchmark(benchmark).closing_summary({**results, "partial": {}}, "runs/x")


def test_no_benchmark_summary_prints_the_partial_line_itself(tmp_path):
    """The line is the command line's, once for every benchmark: a summary of its own would print it twice."""
    for benchmark in ("bbq", "bold", "counterfactual", "crows_pairs", "stereoset"):
        results = {**_fixture_results(benchmark, tmp_path), "partial": {"items": "4 of 10 (--limit 1)"}}
        assert "Partial run" not in get_benchmark(benchmark).summary(results, "runs/x")
    import inspect

    for benchmark in benchmarks():  # the default summary is a partial of records_summary
        assert "partial_note" not in inspect.getsource(getattr(benchmark.summary, "func", benchmark.summary)), benchmark.name


def test_the_skipped_reasons_are_not_printed_again_at_the_end(tmp_path):
    reason = ("classifier 'unitary/toxic-bert' cannot be loaded: not in the Hub cache; fix: pass --toxicity-model DIR "
              "(a classifier folder saved with save_pretrained)")
    results = _fixture_results("bold", tmp_path)
    results = {**results, "skipped": {"model toxicity": reason, "wikipedia toxicity": reason}, "partial": {}}
    results["results"]["model"]["skipped"] = {"toxicity": reason}
    text = get_benchmark("bold").closing_summary(results, "runs/b")
    assert text.splitlines()[-1] == ("Skipped: model toxicity, wikipedia toxicity (each reason and its fix: results.json's "
                                     "'skipped', in runs/b)")
    assert "--toxicity-model" not in text


def test_a_partial_bbq_run_says_so_at_the_end(tmp_path, data_dir, capsys):
    """BBQ printed no Partial run line before; here with categories given in lower case."""
    model = save_tiny_causal_lm(tmp_path / "tiny")
    out = tmp_path / "run"
    assert main(["run", "bbq", "--model", model, "--categories", "age", "--limit", "1", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1] == "Partial run: items 4 of 58,492 (--limit 1 --categories Age)."
    assert json.loads((out / "results.json").read_text())["config"]["categories"] == ["Age"]


# --- what --limit counts --------------------------------------------------------------------------------

def test_each_limit_says_what_it_counts():
    """Every benchmark's --limit N says what N counts ("N counts prompts ..."); a declared one narrows the run, so
    that a run with it is labelled partial."""
    commands = run_commands()
    with_limit = {name: command._option_string_actions["--limit"] for name, command in commands.items()
                  if "--limit" in command._option_string_actions}
    assert {"bbq", "bold", "crows_pairs", "real_toxicity_prompts"} <= set(with_limit)
    for name, action in with_limit.items():
        assert re.match(r"N counts \w", action.help) and action.metavar == "N", (name, action.help)
        assert next(option for option in get_benchmark(name).options if option.name == "limit").narrows, name
    assert with_limit["crows_pairs"].help.startswith("N counts sentence pairs (of 1,508)")
    assert commands["bold"]._option_string_actions["--per-group"].help.startswith("K counts prompts per group")


def test_perplexity_takes_no_progress_as_run_and_debias_do():
    assert build_parser().parse_args(["perplexity", "--no-progress"]).progress is False
    assert build_parser().parse_args(["perplexity"]).progress is True
