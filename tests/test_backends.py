"""The backend options (issue 15 §1, bad input): every mistake is one line before anything is written.
The vLLM engine itself is tested in tests/test_vllm_backend.py, in the vLLM environment."""

import importlib.util

import pytest

from lmbias.cli import main
from lmbias.lm.backends import check_backend

from tiny_lm import save_tiny_causal_lm


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"))


@pytest.mark.parametrize("extra, message", [
    (["--tensor-parallel-size", "2"], "--tensor-parallel-size applies to --backend vllm, not hf"),
    (["--backend", "vllm", "--device-map", "auto"], "--device-map is for --backend hf"),
    (["--backend", "vllm", "--num-processes", "2"], "--backend vllm runs its own workers"),
    (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"], "the server cannot be reached"),
    (["--concurrency", "4"], "--concurrency applies to --backend openai, not hf"),
])
def test_backend_option_mistakes_are_one_line_and_write_nothing(tiny, tmp_path, capsys, extra, message):
    assert main(["run", "bold", "--model", tiny, "--per-group", "1", "--metrics", "sentiment", "--out", str(tmp_path / "r"),
                 *extra]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lmbias: error: ")]
    assert len(errors) == 1 and message in errors[0], errors
    assert not (tmp_path / "r").exists()


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="checks the message where vLLM is not installed")
def test_vllm_not_installed_is_one_line(tiny, tmp_path, capsys):
    assert main(["run", "counterfactual", "--model", tiny, "--backend", "vllm", "--samples", "1", "--out", str(tmp_path / "r")]) == 2
    assert "--backend vllm needs vLLM in this environment" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_engine_options_are_checked():
    assert check_backend("hf") == {}
    with pytest.raises(ValueError, match=r"backend must be one of \['hf', 'vllm', 'openai'\], got 'tgi'"):
        check_backend("tgi")
    with pytest.raises(ValueError, match="--base-url applies to --backend openai, not vllm"):
        check_backend("vllm", {"base_url": "http://127.0.0.1:8000/v1"})
    with pytest.raises(ValueError, match="--backend openai needs --model"):
        check_backend("openai", {"base_url": "http://127.0.0.1:8000/v1"})
    with pytest.raises(ValueError, match="--backend openai needs --base-url"):
        check_backend("openai", {}, model="m")
    with pytest.raises(ValueError, match="engine options \\['tp'\\] are unknown"):
        check_backend("vllm", {"tp": 2})
    if importlib.util.find_spec("vllm") is not None:
        with pytest.raises(ValueError, match="--gpu-memory-utilization must be"):
            check_backend("vllm", {"gpu_memory_utilization": 1.5})


def test_likelihood_benchmarks_do_not_take_a_backend_they_cannot_use(capsys):
    with pytest.raises(SystemExit):
        main(["run", "stereoset", "--backend", "vllm"])
    assert "unrecognized arguments: --backend vllm" in capsys.readouterr().err
