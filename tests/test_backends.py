"""The backend options (issue 15 §1, bad input): every mistake is one line before anything is written.
The vLLM engine itself is tested in tests/test_vllm_backend.py, in the vLLM environment."""

import http.server
import importlib.util
import json
import re
import threading

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
    (["--enforce-eager"], "--enforce-eager applies to --backend vllm, not hf"),
    (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--dtype", "float16"],
     "--dtype float16 applies to --backend hf and vllm"),
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


def test_only_options_that_change_numbers_are_a_runs_identity():
    from lmbias.lm.backends import identity_options, recorded_options

    given = {"base_url": "http://h/v1", "tokenizer": "t", "concurrency": 4, "timeout": 30.0, "api_key_env": "K"}
    assert identity_options("openai", given) == {"backend": "openai", "base_url": "http://h/v1", "tokenizer": "t"}
    assert recorded_options("openai", given) == {"backend": "openai", **given}
    engine = {"enforce_eager": True, "kv_cache_gib": 2.0, "gpu_memory_utilization": 0.2, "verbose": True, "max_model_len": 64}
    assert identity_options("vllm", engine) == {"backend": "vllm", "enforce_eager": True, "max_model_len": 64}
    assert "verbose" not in recorded_options("vllm", engine) and identity_options("hf", {}) == {}


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
        with pytest.raises(ValueError, match="enforce_eager must be True or False, got 'yes'"):
            check_backend("vllm", {"enforce_eager": "yes"})


class _CompletionServer:
    """A loopback OpenAI-compatible server (``/v1/models``, ``/v1/completions``) that cannot return a
    prompt's log-probabilities: ``refuse_echo`` answers 400 as OpenAI's API does, else it answers
    without ``logprobs`` as servers that ignore ``echo`` do."""

    def __init__(self, refuse_echo: bool):
        class Handler(http.server.BaseHTTPRequestHandler):
            def _send(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send(200, {"data": [{"id": "served"}]})

            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if refuse_echo and request.get("echo"):
                    self._send(400, {"error": {"message": "echo is not supported with logprobs for this model"}})
                else:
                    self._send(200, {"choices": [{"text": " x", "finish_reason": "length", "logprobs": None}]})

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("refuse_echo, message", [
    (True, "answered 400: .*echo is not supported.*; likelihood scoring needs a server that returns prompt log-probabilities"),
    (False, "did not return the prompt's log-probabilities \\(echo with logprobs\\), which StereoSet and CrowS-Pairs need"),
])
def test_a_server_without_prompt_logprobs_is_one_line(tiny, tmp_path, capsys, refuse_echo, message):
    server = _CompletionServer(refuse_echo)
    try:
        assert main(["run", "crows_pairs", "--backend", "openai", "--model", "served", "--base-url", server.url,
                     "--tokenizer", tiny, "--limit", "2", "--no-progress", "--out", str(tmp_path / "r")]) == 2
    finally:
        server.close()
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lmbias: error: ")]
    assert len(errors) == 1 and re.search(message, errors[0]), errors
    assert not (tmp_path / "r" / "results.json").exists()


def test_masked_scoring_on_a_server_is_one_line(tmp_path, capsys):
    server = _CompletionServer(refuse_echo=False)
    try:
        assert main(["run", "stereoset", "--backend", "openai", "--model-type", "masked", "--model", "served", "--base-url",
                     server.url, "--out", str(tmp_path / "r")]) == 2
    finally:
        server.close()
    assert "--backend openai scores causal LMs only; masked-LM scoring (pseudo-log-likelihood, next-sentence prediction) " \
           "needs --backend hf" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_likelihood_without_the_served_tokenizer_is_one_line(tmp_path, capsys):
    server = _CompletionServer(refuse_echo=False)
    try:
        assert main(["run", "crows_pairs", "--backend", "openai", "--model", "served", "--base-url", server.url, "--tokenizer",
                     str(tmp_path / "no-such-tokenizer"), "--limit", "2", "--no-progress", "--out", str(tmp_path / "r")]) == 2
    finally:
        server.close()
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lmbias: error: ")]
    assert len(errors) == 1 and "needs the served model's tokenizer" in errors[0], errors
    assert not (tmp_path / "r").exists()
