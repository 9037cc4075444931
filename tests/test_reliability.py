"""Nothing finished is overwritten, a run directory has one process, a refused command writes
nothing, interrupts stop cleanly, and one long text cannot hang a scorer (issue 14 §1, §3, §4)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import lmbias
import lmbias.files
from lmbias.cli import main
from lmbias.run_lock import LOCK_FILE
from lmbias.scorers import vader

from tiny_lm import save_tiny_causal_lm

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"))


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


# --- §1 finished work is never overwritten -------------------------------------------------------

def test_every_run_refuses_another_benchmarks_run_or_other_settings_tiny_model_plumbing(tiny, tmp_path, capsys):
    out = tmp_path / "crows"
    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "2", "--no-progress", "--out", str(out)]) == 0
    finished = _files(out)
    capsys.readouterr()
    for command, message in [
        (["run", "stereoset", "--limit", "2"], "holds a crows_pairs run, not stereoset"),
        (["run", "bold", "--per-group", "1", "--metrics", "sentiment"], "holds a crows_pairs run, not bold"),
        (["run", "counterfactual", "--samples", "1", "--attributes", "country"], "holds a crows_pairs run, not counterfactual"),
        (["run", "crows_pairs", "--limit", "3"], "another configuration (limit: recorded 2, now 3)"),
    ]:
        assert main([*command, "--model", tiny, "--no-progress", "--out", str(out)]) == 2
        errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lmbias: error: ")]
        assert len(errors) == 1 and message in errors[0], errors
        assert _files(out) == finished  # results.json, scores.jsonl and config.json untouched
    # the same command again is allowed and gives the same numbers
    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "2", "--no-progress", "--out", str(out)]) == 0
    assert (out / "scores.jsonl").read_bytes() == finished["scores.jsonl"]


def test_default_out_differs_with_the_settings_and_an_explicit_out_still_refuses(tiny, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    slug = lmbias.files.slugify(tiny)
    for limit in ("2", "3"):  # the same command with another --limit: its own folder, no collision
        assert main(["run", "crows_pairs", "--model", tiny, "--limit", limit, "--no-progress"]) == 0
    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "3", "--no-progress", "--threads", "1"]) == 0  # resumes
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [f"crows_pairs-{slug}-limit-2", f"crows_pairs-{slug}-limit-3"]
    for limit in ("2", "3"):
        results = json.loads((tmp_path / "runs" / f"crows_pairs-{slug}-limit-{limit}" / "results.json").read_text())
        assert results["config"]["limit"] == int(limit)
    capsys.readouterr()
    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "4", "--no-progress", "--out", f"runs/crows_pairs-{slug}-limit-3"]) == 2
    assert "another configuration (limit: recorded 3, now 4)" in capsys.readouterr().err


def test_a_refused_resume_names_the_option_that_differs_and_a_bad_option_comes_first(tiny, tmp_path, capsys):
    out = str(tmp_path / "bold")
    assert main(["run", "bold", "--model", tiny, "--per-group", "1", "--metrics", "sentiment", "--no-progress", "--out", out]) == 0
    assert "Share of texts per domain: sentiment (VADER, BOLD thresholds):" in capsys.readouterr().out  # no gender columns
    assert main(["run", "bold", "--model", tiny, "--per-group", "2", "--no-progress", "--out", out]) == 2
    error = capsys.readouterr().err.strip().splitlines()  # the refusal alone: no "will skip toxicity" notices first
    assert len(error) == 1 and "(per_group: recorded 1, now 2)" in error[0] and "prompt_ids_digest" not in error[0]
    assert main(["run", "bold", "--model", tiny, "--batch-size", "0", "--no-progress", "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == ["lmbias: error: --batch-size must be >= 1, got 0"]  # no skip notices first


def test_a_second_process_on_the_same_directory_is_refused_and_a_dead_holders_lock_is_free(tiny, tmp_path, capsys):
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom lmbias.run_lock import locked\n"
         "with locked(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(120)\n", str(out)],
        stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(["run", "crows_pairs", "--model", tiny, "--limit", "2", "--no-progress", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"{out} is in use by PID {holder.pid} on host {socket.gethostname()}" in err
        assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # the refused run wrote nothing
    finally:
        holder.send_signal(signal.SIGKILL)  # dies holding the lock: the OS releases it
        holder.wait()
    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "2", "--no-progress", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "items.jsonl", "results.json", "scores.jsonl"]


@pytest.mark.parametrize("command", [
    ["run", "bold", "--batch-size", "0"],
    ["run", "bold", "--score-batch-size", "0"],
    ["run", "bold", "--per-group", "0"],
    ["run", "crows_pairs", "--batch-size", "0"],
    ["run", "stereoset", "--batch-size", "0"],
    ["run", "stereoset", "--bootstrap", "-1"],
    ["run", "counterfactual", "--samples", "0"],
    ["run", "counterfactual", "--bootstrap", "-1"],
    ["run", "crows_pairs", "--model", "./no-such-model"],
])
def test_a_refused_command_writes_nothing(tiny, tmp_path, capsys, command):
    model = [] if "--model" in command else ["--model", tiny]
    assert main([*command, *model, "--no-progress", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()  # skip notices may come first; the error is one line
    assert err[-1].startswith("lmbias: error: ") and all(line.startswith("lmbias: ") for line in err)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("mistake", [["--batch-size", "0"], ["--model", "./no-such-model"]])
def test_a_mistake_with_num_processes_is_one_line_not_torchruns_traceback(tiny, tmp_path, mistake):
    model = [] if "--model" in mistake else ["--model", tiny]
    command = [sys.executable, "-m", "lmbias", "run", "crows_pairs", "--num-processes", "2", *model, *mistake,
               "--limit", "2", "--no-progress", "--out", str(tmp_path / "run")]
    finished = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 2
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lmbias: error: "), finished.stderr
    assert not (tmp_path / "run").exists()


def test_out_that_is_a_file_or_cannot_be_created_is_one_line(tiny, tmp_path, capsys):
    a_file = tmp_path / "results.json"
    a_file.write_text("{}")
    for out, message in ((a_file, "is a file, not a directory"), ("/proc/lmbias-run", "cannot be created")):
        assert main(["run", "crows_pairs", "--model", tiny, "--limit", "2", "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
    assert a_file.read_text() == "{}"


# --- §3 interrupts and corrupt run files ---------------------------------------------------------

def test_sigint_stops_cleanly_and_the_same_command_resumes(embedded_model, tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, "-m", "lmbias", "run", "bold", "--per-group", "1", "--batch-size", "2", "--max-new-tokens", "8",
               "--metrics", "sentiment", "--no-progress", "--out", str(out)]
    # SIG_DFL in the child: a shell's background job (`make test &`) ignores SIGINT, and a child would inherit that
    process = subprocess.Popen(command, env=embedded_model.env(), stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    shard = out / "shard-0.jsonl"
    deadline = time.time() + 240
    while not (shard.is_file() and shard.read_text().count("\n") >= 2) and time.time() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    err = process.communicate(timeout=120)[1]
    assert process.returncode == 130, err[-2000:]
    assert err.strip().splitlines()[-1].startswith("lmbias: interrupted; the same command resumes from what was saved")
    assert "Traceback" not in err
    assert not (out / LOCK_FILE).exists() and not (out / "results.json").exists()
    done = sum(len(json.loads(line)["items"]) for line in shard.read_text().splitlines())
    finished = subprocess.run(command, env=embedded_model.env(), capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert f"{done} of 43 prompts already done" in finished.stderr
    ids = [json.loads(line)["id"] for line in (out / "generations.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 43


def _saved_batches(out):
    return [json.loads(line)["batch"] for shard in sorted(out.glob("shard-*.jsonl"))
            for line in shard.read_text().splitlines() if line.endswith("}")]


@pytest.mark.parametrize("benchmark", ["crows_pairs", "stereoset"])
def test_a_likelihood_run_killed_at_random_points_resumes_to_the_uninterrupted_result(tmp_path, benchmark):
    import random

    # wide enough that scoring takes seconds, so that the kills land mid-run (plumbing: random weights)
    model = save_tiny_causal_lm(tmp_path / "model", n_embd=256, n_layer=6)
    arguments = ["run", benchmark, "--model", model, "--limit", "120", "--batch-size", "2", "--threads", "1", "--no-progress"]
    assert main([*arguments, "--out", str(tmp_path / "reference")]) == 0
    out = tmp_path / "killed"
    rng = random.Random(benchmark)
    command = [sys.executable, "-m", "lmbias", *arguments, "--out", str(out)]
    mid_run = 0
    for _ in range(4):
        before = len(_saved_batches(out))
        process = subprocess.Popen(command, cwd=REPO_ROOT, stderr=subprocess.DEVNULL)
        more = rng.randint(0, 3)  # 0: a random moment of the start-up (loading), else after that many more saved batches
        deadline = time.time() + (rng.uniform(0.5, 4.0) if more == 0 else 120)
        while time.time() < deadline and process.poll() is None and (more == 0 or len(_saved_batches(out)) < before + more):
            time.sleep(0.002)
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert not (out / "results.json").exists()
        mid_run += len(_saved_batches(out)) > before
        if not (out / "config.json").exists():  # killed while loading: nothing was claimed
            assert not out.exists() or sorted(p.name for p in out.iterdir()) in ([], [LOCK_FILE])
    assert mid_run >= 2
    saved = _saved_batches(out)
    assert len(saved) == len(set(saved))  # nothing scored twice
    finished = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    unit = "pair" if benchmark == "crows_pairs" else "item"
    rows = 120 if benchmark == "crows_pairs" else 240  # StereoSet: --limit per task
    resumed_rows = sum(min(16, rows - 16 * b) for b in saved)  # 16 rows a saved batch: 8 x --batch-size
    assert f"resuming {out}: {resumed_rows:,} of {rows:,} {unit}s already done" in finished.stderr
    assert f"{rows - resumed_rows:,} {unit}s scored in " in finished.stdout
    assert f"{resumed_rows:,} before the run was resumed" in finished.stdout
    reference, resumed = ([json.loads(line) for line in (folder / "scores.jsonl").read_text().splitlines()]
                          for folder in (tmp_path / "reference", out))
    assert [r["id"] for r in resumed] == [r["id"] for r in reference]  # every item once, in order
    for a, b in zip(reference, resumed):
        assert {k: v for k, v in a.items() if isinstance(v, str)} == {k: v for k, v in b.items() if isinstance(v, str)}
        assert all(abs(a[k] - b[k]) <= 1e-6 for k in a if isinstance(a[k], float))
    results = {name: json.loads((tmp_path / name / "results.json").read_text()) for name in ("reference", "killed")}
    assert results["killed"]["results"] == results["reference"]["results"]
    assert results["killed"]["timing"]["items_resumed"] == resumed_rows and not list(out.glob("shard-*.jsonl"))


def test_an_unfinished_run_with_a_damaged_shard_line_is_still_reported(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"benchmark": "bold", "config": {"prompts": 4, "preset": "bold-gpt2"}}))
    (run / "shard-0.jsonl").write_text('{"batch": 0, "items": []}\n[1, 2]\n{"batch": 1, "items": []}\n')
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0  # the damaged line is one batch to redo


# --- §4 one long text cannot hang a scorer -------------------------------------------------------

def test_vader_scores_a_very_long_text_on_its_start():
    assert vader.clip_texts(["short", "one two three", "abcdefghij"], max_chars=8) == (["short", "one two", "abcdefgh"], 2)
    long = "What a wonderful, happy day. " * 4000  # 116,000 characters: about a minute for VADER whole
    start = vader.clip_texts([long])[0][0]
    assert len(start) <= vader.MAX_CHARS and long.startswith(start)
    scores = vader.vader_compound([long, "terrible"], n_jobs=1)
    assert np.array_equal(scores, vader.vader_compound([start, "terrible"], n_jobs=1, max_chars=None))
    with pytest.raises(ValueError, match="max_chars must be >= 1"):
        vader.clip_texts(["x"], max_chars=0)


def test_bold_says_how_many_texts_were_cut():
    from lmbias.benchmarks.bold.task import score_bold

    rows = lmbias.load_rows("bold", "gender")[:2]
    result = score_bold(rows, ["Fine. " * 3000, rows[1]["wikipedia"]], metrics=["sentiment"])
    assert result["metrics"]["sentiment"]["texts_cut"] == "1 texts longer than 10,000 characters were scored on their start"
