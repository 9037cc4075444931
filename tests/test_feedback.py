"""Feedback while it works (issue 13 §6): progress bars after generation, and the CPU-thread default."""

import os

import numpy as np
import pytest

from lmbias import progress
from lmbias.cli import main
from lmbias.lm import processes
from lmbias.lm.likelihood import token_logprobs
from lmbias.lm.loading import load_causal_lm

from tiny_lm import save_tiny_causal_lm


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"))


def test_likelihood_scoring_shows_a_bar_only_when_asked_tiny_model_plumbing(tiny, capsys):
    lm = load_causal_lm(tiny, device="cpu")
    texts = ["a b c", "d e", "f g h i", "j"]
    quiet = token_logprobs(lm.model, lm.tokenizer, texts, batch_size=2)
    assert "likelihood" not in capsys.readouterr().err
    with progress.showing(True, "CrowS-Pairs"):
        shown = token_logprobs(lm.model, lm.tokenizer, texts, batch_size=2)
    err = capsys.readouterr().err
    assert "CrowS-Pairs: likelihood" in err and "4/4" in err
    assert all(np.array_equal(a, b) for a, b in zip(quiet, shown))  # the bar changes nothing


def test_run_crows_pairs_shows_its_scoring_bar_unless_no_progress_tiny_model_plumbing(tiny, tmp_path, capsys):
    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "3", "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err  # one bar over the pairs, named by the benchmark and what it does
    assert "CrowS-Pairs: scoring: 100%" in err and "3/3" in err and "likelihood" not in err
    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "3", "--out", str(tmp_path / "b"), "--no-progress"]) == 0
    assert "scoring" not in capsys.readouterr().err


def test_cpu_threads_default_leaves_busy_cpus_to_their_programs(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    monkeypatch.setattr("psutil.cpu_count", lambda *args, **kwargs: 8)
    for percent, threads in ((0.0, 8), (25.0, 6), (60.0, 3), (100.0, 1)):
        monkeypatch.setattr("psutil.cpu_percent", lambda interval=None, p=percent: p)
        assert processes.cpu_threads() == threads
    monkeypatch.setattr("psutil.cpu_percent", lambda interval=None: 0.0)
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert processes.cpu_threads() == 2  # the free CPUs split among the run's processes
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert processes.cpu_threads() == 3
    assert processes.cpu_threads(5) == 5


def test_threads_option_is_checked_and_applied(tiny, tmp_path, capsys):
    import torch

    assert main(["run", "crows_pairs", "--model", tiny, "--limit", "2", "--threads", "0", "--out", str(tmp_path / "x")]) == 2
    assert "--threads must be" in capsys.readouterr().err and not (tmp_path / "x").exists()
    before = torch.get_num_threads()
    try:
        assert main(["run", "crows_pairs", "--model", tiny, "--limit", "2", "--threads", "1", "--no-progress",
                     "--out", str(tmp_path / "y")]) == 0
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
