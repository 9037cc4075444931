"""``lmbias run A B ...`` and ``lmbias.run([...])``: several benchmarks on one loaded model, each in
its own folder; ``--name`` as the model's display name (issue 38).

The runs use the embedded model on a few sentences: they check plumbing (one load, folders, resume,
refusals), and that a benchmark run in a suite writes exactly what it writes when run alone."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lmbias
from lmbias.benchmarks import Benchmark, HubDataset, MetricSpec, register, unregister
from lmbias.cli import main
from lmbias.errors import InputError, RequirementError
from lmbias.lm.spec import ModelSpec

from browser import browser, chromium, screenshot, set_viewport
from tiny_lm import save_tiny_causal_lm

SMALL = ["--winogender.limit", "2", "--winobias.limit", "2", "--no-progress", "--threads", "2"]  # threads: the same sums


def exit_status(arguments: list) -> int:
    """``lmbias ARGUMENTS``'s exit status (a command-line mistake exits through argparse, with 2)."""
    try:
        return main(arguments)
    except SystemExit as stop:
        return stop.code


def comparable(results_file: Path) -> dict:
    """A results.json without what differs between two identical runs (timing, library versions)."""
    results = json.loads(results_file.read_text())
    return {key: value for key, value in results.items() if key not in ("timing", "versions")}


def test_plumbing_a_suite_writes_what_each_benchmark_writes_alone_on_one_model_load(tmp_path, data_dir, embedded_model_cache,
                                                                                    capsys):
    suite = tmp_path / "suite"
    assert main(["run", "winogender", "winobias", *SMALL, "--name", "Smol", "--out", str(suite)]) == 0
    printed = capsys.readouterr().out
    assert "(model loads: 1 for 2 benchmarks)" in printed
    assert "Smol: 2 of 2 benchmarks finished" in printed
    assert "| winogender | partial | Accuracy 50.0 %; Gotcha accuracy 50.0 % |" in printed
    for name in ("winogender", "winobias"):
        alone = tmp_path / f"alone-{name}"
        assert main(["run", name, "--limit", "2", "--name", "Smol", "--out", str(alone), "--no-progress", "--threads", "2"]) == 0
        assert (suite / name / "scores.jsonl").read_bytes() == (alone / "scores.jsonl").read_bytes()
        together, apart = comparable(suite / name / "results.json"), comparable(alone / "results.json")
        assert together["model"]["name"] == "Smol"
        assert {**together, "out": None} == {**apart, "out": None}
    from lmbias.results import load_runs

    assert [(run.benchmark, run.model) for run in load_runs([suite])] == [("winobias", "Smol"), ("winogender", "Smol")]
    # a rerun resumes every benchmark: nothing is scored again, and every finished file stays byte for byte (its
    # timing too: it was 0.0 seconds when the rerun rewrote it)
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in sorted(suite.rglob("*")) if path.is_file()}
    assert json.loads((suite / "winogender" / "results.json").read_text())["timing"]["items_scored"] > 0
    assert main(["run", "winogender", "winobias", *SMALL, "--name", "Smol", "--out", str(suite)]) == 0
    assert "Smol: 2 of 2 benchmarks finished" in capsys.readouterr().out
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in sorted(suite.rglob("*")) if path.is_file()} == before


def test_plumbing_the_python_api_is_the_command(tmp_path, data_dir, embedded_model_cache):
    outcomes = lmbias.run(["winogender"], name="Smol", out=tmp_path / "py", progress=False, threads=2, winogender={"limit": 2})
    assert list(outcomes) == ["winogender"] and outcomes["winogender"]["status"] == "partial"
    assert outcomes["winogender"]["out"] == str(tmp_path / "py" / "winogender")
    assert main(["run", "winogender", "--winogender.limit", "2", "--name", "Smol", "--out", str(tmp_path / "cli"),
                 "--no-progress", "--threads", "2"]) == 0
    assert (tmp_path / "py/winogender/scores.jsonl").read_bytes() == (tmp_path / "cli/winogender/scores.jsonl").read_bytes()
    assert outcomes["winogender"]["results"]["records"] == json.loads((tmp_path / "cli/winogender/results.json").read_text())["records"]


def _failing_benchmark() -> Benchmark:
    """A benchmark (registered like a plugin's) whose run passes its checks, then fails: its protocol (one of its own,
    asking no model) checks the run folder, then raises."""
    from lmbias.benchmarks.declared import Ask
    from lmbias.lm.processes import process_state
    from lmbias.lm.runner import check_run_dir
    from lmbias.protocols import Protocol

    def answer(spec, rows, request, *, out, check_only=False, **settings):
        check_run_dir(Path(out), {}, process_state(), "failing")
        if check_only:
            return None, None, None, None
        raise RequirementError("failing: the data ran out half way")

    failing = Protocol("failing", reads_replies=False, scores_raw_text=False, takes_template=False, verb="failing",
                       answer=answer, finish=lambda out, result, records: result, records_file=None)
    return Benchmark(name="failing", display_name="Failing", description="fails after its checks", dataset="none",
                     hub_dataset=HubDataset("x/none", "none", "test"),
                     metrics=(MetricSpec("m", "M", "", 0.0, None, 1, "nothing"),),
                     protocols=(Ask(failing, "fails", lambda rows, settings: None),), items=lambda settings, data_dir: [],
                     measure=lambda *a: {}, data=lambda *a: {}, counted=lambda *a: {}, records=lambda results: [],
                     summary=lambda results, out: "", report_section=lambda *a: [],
                     run_options=("model", "seed", "batch_size", "progress"))


def test_plumbing_a_benchmark_that_fails_is_reported_and_the_others_finish(tmp_path, data_dir, embedded_model_cache, capsys):
    register(_failing_benchmark())
    try:
        code = main(["run", "winogender", "failing", "winobias", *SMALL, "--out", str(tmp_path / "s")])
    finally:
        unregister("failing")
    captured = capsys.readouterr()
    assert code == 1
    assert "lmbias: error: failing: failing: the data ran out half way" in captured.err
    assert "2 of 3 benchmarks finished, 1 failed" in captured.out
    assert "| failing | failed | failing: the data ran out half way |" in captured.out
    assert (tmp_path / "s/winogender/results.json").is_file() and (tmp_path / "s/winobias/results.json").is_file()


def with_option(flag: str) -> list:
    """The registered benchmarks whose ``lmbias run`` takes ``flag``, sorted by name."""
    from lmbias.suite import benchmark_parser

    return sorted(b.name for b in lmbias.benchmarks.benchmarks() if flag in benchmark_parser(b)._option_string_actions)


@pytest.mark.parametrize("arguments, message", [
    (["bqq", "winogender"], "unknown benchmark or set 'bqq' (`lmbias run --list` shows them); did you mean 'bbq' or 'mbbq'?"),
    (["model-cards"], "unknown benchmark or set 'model-cards' (`lmbias run --list` shows them); did you mean 'model-card'?"),
    (["winogender", "winobias", "--limit", "3"],
     "--limit is an option of winogender, winobias: with several benchmarks give it as --winogender.limit / --winobias.limit"),
    (["winogender", "winobias", "--bbq.limit", "3"], "--bbq.limit: 'bbq' is not among the chosen benchmarks (winogender, winobias)"),
    (["winogender", "winobias", "--categories", "Age"],
     f"--categories is an option of {', '.join(with_option('--categories'))}, none of which was chosen"),
    (["winogender", "winobias", "--winobias.limt", "3"], "winobias has no option --limt; did you mean '--winobias.limit'?"),
    (["winogender", "winobias", "--nosuch.limit", "3"], "--nosuch.limit: there is no benchmark 'nosuch'"),
    (["winogender", "winobias", "--name", ""], "--name must be printable text"),
    (["winogender", "winobias", "--name", "tab\there"], "--name must be printable text"),
    (["winogender", "winobias", "--chat"], "winogender: --chat: winogender's likelihood scoring runs on raw text"),
    (["winogender", "winobias", "--winobias.limit", "0"], "winobias: limit must be an integer >= 1"),
])
def test_bad_input_is_refused_in_one_line_before_anything_loads_and_nothing_is_written(tmp_path, data_dir, monkeypatch, capsys,
                                                                                       arguments, message):
    monkeypatch.chdir(tmp_path)
    assert exit_status(["run", *arguments]) == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error
    assert list(tmp_path.iterdir()) == []


def test_every_refusal_of_a_suite_is_said_at_once(tmp_path, data_dir, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "winogender", "winobias", "--chat", "--winobias.limit", "2"]) == 2
    error = capsys.readouterr().err
    assert "nothing was run:\n  winogender: --chat" in error and "\n  winobias: --chat" in error
    assert list(tmp_path.iterdir()) == []


def _planned(arguments: list) -> dict:
    """``lmbias run ARGUMENTS`` parsed by the command line and planned: {benchmark: its options}."""
    from lmbias import suite
    from lmbias.cli import parse_command

    args, _ = parse_command(["run", *arguments])
    given = {key: value for key, value in vars(args).items() if key not in ("benchmarks", "list", "out", "command", "func",
                                                                            "chosen")}
    own: dict = {}
    for key in [key for key in given if "." in key]:
        own.setdefault(key.split(".")[0], {})[key.split(".", 1)[1]] = given.pop(key)
    return {benchmark.name: options for benchmark, options in suite.plan(args.chosen, given, own, out="x")}


def test_protocol_given_once_applies_to_every_chosen_benchmark_and_a_prefixed_one_wins():
    planned = _planned(["winobias", "winogender", "--chat", "--protocol", "generate"])
    assert [(options.protocol, options.chat) for options in planned.values()] == [("generate", True), ("generate", True)]
    planned = _planned(["winobias", "winogender", "--protocol", "generate", "--winobias.protocol", "likelihood"])
    assert {name: options.protocol for name, options in planned.items()} == {"winobias": "likelihood", "winogender": "generate"}
    assert {name: options.protocol for name, options in _planned(["winobias", "winogender"]).items()} == \
        {"winobias": "likelihood", "winogender": "likelihood"}
    from lmbias.suite import plan

    assert [options.protocol for _, options in plan(["winobias", "crows_pairs"], {"protocol": "generate"}, {})] == \
        ["generate", "generate"]


@pytest.mark.parametrize("arguments, message", [
    (["winobias", "bold", "--protocol", "generate"],
     "lmbias: error: --protocol given once applies to every chosen benchmark, but bold has no --protocol; give it to "
     "--winobias.protocol instead"),
    (["winobias", "winogender", "--protocol", "judge"], "argument --protocol: invalid choice: 'judge'"),
])
def test_protocol_given_once_is_refused_in_one_line_naming_the_benchmarks_without_it(tmp_path, data_dir, monkeypatch, capsys,
                                                                                    arguments, message):
    monkeypatch.chdir(tmp_path)
    assert exit_status(["run", *arguments]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="but bold has no --protocol"):
        lmbias.run(["winobias", "bold"], protocol="generate")


def test_python_api_refuses_options_by_name(tmp_path):
    with pytest.raises(InputError, match=r"'limit' is an option of winogender: give it as winogender=\{'limit': ...\}"):
        lmbias.run(["winogender"], limit=2)
    with pytest.raises(InputError, match="'bbq' is not among the chosen benchmarks"):
        lmbias.run(["winogender"], bbq={"limit": 2})
    with pytest.raises(InputError, match="winogender has no option 'limt'; did you mean 'limit'"):
        lmbias.run(["winogender"], winogender={"limt": 2})
    with pytest.raises(InputError, match="unknown option 'batchsize'"):
        lmbias.run(["winogender"], batchsize=2)
    with pytest.raises(InputError, match="non-empty list"):
        lmbias.run("winogender")


def test_sets_and_the_list():
    from lmbias.suite import expand, listing

    assert expand(["model-card"]) == ["bbq", "crows_pairs", "winogender", "winobias", "stereoset"]
    assert expand(["winogender", "model-card", "winogender"]) == ["winogender", "bbq", "crows_pairs", "winobias", "stereoset"]
    assert expand(["all"]) == lmbias.benchmarks.names()
    assert re.search(r"\n  model-card +bbq, crows_pairs, winogender, winobias, stereoset", listing())
    assert expand(["bbq-languages"]) == ["bbq", "mbbq", "esbbq", "cabbq", "kobbq", "cbbq"]


def test_the_display_name_is_never_a_full_path(tmp_path, data_dir, capsys):
    model = save_tiny_causal_lm(tmp_path / "models" / "tiny-gpt")
    assert main(["run", "winogender", "--limit", "1", "--model", model, "--out", str(tmp_path / "a"), "--no-progress"]) == 0
    results = json.loads((tmp_path / "a/results.json").read_text())
    assert results["model"]["name"] == "tiny-gpt" and results["model"]["source"] == model
    assert capsys.readouterr().out.startswith("model: tiny-gpt;")
    assert ModelSpec("org/model").shown_name() == "org/model"
    assert ModelSpec(model + "/", display_name="Mine").shown_name() == "Mine"


def test_plumbing_a_suite_killed_in_its_third_benchmark_resumes_without_losing_or_redoing_anything(tmp_path, data_dir,
                                                                                                   embedded_model_cache):
    out = tmp_path / "s"
    command = [sys.executable, "-m", "lmbias", "run", "winogender", "winobias", "crows_pairs", "--winogender.limit", "2",
               "--winobias.limit", "2", "--crows_pairs.limit", "48", "--batch-size", "2", "--out", str(out), "--no-progress"]
    process = subprocess.Popen(command, env=embedded_model_cache.env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None and \
            not any(path.stat().st_size for path in (out / "crows_pairs").glob("shard-*.jsonl")):
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (out / "crows_pairs/results.json").exists(), "the third benchmark finished before it was killed"
    saved = sum(len(path.read_text().splitlines()) for path in (out / "crows_pairs").glob("shard-*.jsonl"))
    assert saved > 0
    first = {path: path.read_bytes() for name in ("winogender", "winobias") for path in sorted((out / name).iterdir())}
    done = subprocess.run(command, env=embedded_model_cache.env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in ("winogender", "winobias"):  # finished before the kill: left byte for byte, timing included
        assert {path: path.read_bytes() for path in sorted((out / name).iterdir())} == \
            {path: data for path, data in first.items() if path.parent.name == name}
        assert json.loads((out / name / "results.json").read_text())["timing"]["items_scored"] > 0
    timing = json.loads((out / "crows_pairs/results.json").read_text())["timing"]
    assert timing["items_resumed"] >= saved and timing["items_resumed"] + timing["items_scored"] == 48
    assert len((out / "crows_pairs/scores.jsonl").read_text().splitlines()) == 48


@browser
def test_plumbing_a_model_card_suite_reports_its_scorecard_on_one_screen(tmp_path, data_dir, embedded_model_cache):
    """The `model-card` set on the embedded model (a few items each), then its report in Chromium at 1280 x 800:
    the scorecard, one line per benchmark with the papers' reference lines, ends within the first screen."""
    suite = tmp_path / "Smol"
    assert main(["run", "model-card", "--name", "Smol", "--out", str(suite), "--no-progress", "--threads", "2",
                 "--bbq.categories", "Age", "--bbq.limit", "1", "--crows_pairs.limit", "4", "--winogender.limit", "2",
                 "--winobias.limit", "2", "--stereoset.limit", "2"]) == 0
    assert main(["report", str(suite), "--out", str(tmp_path / "report")]) == 0
    with chromium() as driver:
        set_viewport(driver, 1280, 800)
        driver.get((tmp_path / "report" / "report.html").as_uri())
        rows = driver.find_elements("css selector", "table.scorecard tr.run")
        assert [row.find_elements("tag name", "td")[0].text for row in rows] == [
            "BBQ", "CrowS-Pairs", "StereoSet", "WinoBias", "Winogender"]
        bottom = driver.execute_script("return document.querySelector('table.scorecard').getBoundingClientRect().bottom")
        assert bottom <= 800, bottom
        screenshot(driver, "report-model-card-1280x800")


def test_writing_a_finished_run_again_changes_nothing_unless_its_results_changed(tmp_path):
    """write_run on a folder that holds the same run (a rerun that only read it back: its timing differs) leaves
    every file byte for byte, mtime included; a run whose numbers or files differ is written."""
    from lmbias.run_result import RunResult, write_run

    def result(timing, value, scores="a\n"):
        return RunResult(benchmark="x", model={"name": "m"}, data={}, config={"seed": 0}, results={"v": value},
                         timing=timing, versions={"lmbias": "t"}, out=str(tmp_path), files={"scores.jsonl": scores})

    records = lambda content: []  # noqa: E731
    first = write_run(result({"seconds": 12.5, "items_scored": 4}, 0.25), records)
    before = {path.name: (path.read_bytes(), path.stat().st_mtime_ns) for path in tmp_path.iterdir()}
    again = write_run(result({"seconds": 0.0, "items_scored": 0}, 0.25), records)
    assert again == first and again["timing"] == {"seconds": 12.5, "items_scored": 4}
    assert {path.name: (path.read_bytes(), path.stat().st_mtime_ns) for path in tmp_path.iterdir()} == before
    assert write_run(result({"seconds": 1.0}, 0.5), records)["results"] == {"v": 0.5}
    assert json.loads((tmp_path / "results.json").read_text())["timing"] == {"seconds": 1.0}
    write_run(result({"seconds": 2.0}, 0.5, scores="b\n"), records)
    assert (tmp_path / "scores.jsonl").read_text() == "b\n"
    assert json.loads((tmp_path / "results.json").read_text())["timing"] == {"seconds": 2.0}
