"""The backend options (issue 15 §1, bad input): every mistake is one line before anything is written.
The vLLM engine itself is tested in tests/test_vllm_backend.py, in the vLLM environment."""

import importlib.util
import json
import re

import pytest

from lmbias.cli import main
from lmbias.lm.spec import ModelSpec

from loopback import JSONHandler, LoopbackServer
from tiny_lm import save_tiny_causal_lm


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"))


@pytest.mark.parametrize("extra, message", [
    (["--tensor-parallel-size", "2"], "--tensor-parallel-size applies to --backend vllm, not hf"),
    (["--backend", "vllm", "--device-map", "auto"], "--device-map is for --backend hf"),
    (["--backend", "vllm", "--num-processes", "2"], "--backend vllm runs its own workers"),
    (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"], "the server cannot be reached"),
    (["--concurrency", "4"], "--concurrency applies to --backend openai, openai-chat, not hf"),
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
    given = {"base_url": "http://h/v1", "tokenizer": "t", "concurrency": 4, "timeout": 30.0, "api_key_env": "K"}
    served = ModelSpec("m", backend="openai", options=given)
    assert served.identity() == {"backend": "openai", "base_url": "http://h/v1", "tokenizer": "t"}
    assert served.recorded() == {"backend": "openai", **given}
    engine = {"enforce_eager": True, "kv_cache_gib": 2.0, "gpu_memory_utilization": 0.2, "verbose": True, "max_model_len": 64}
    vllm = ModelSpec("m", backend="vllm", options=engine)
    assert vllm.identity() == {"backend": "vllm", "enforce_eager": True, "max_model_len": 64}
    assert "verbose" not in vllm.recorded() and ModelSpec("m").identity() == {} == ModelSpec("m").recorded()
    pinned = ModelSpec("org/m", revision="abc123", device_map="auto", max_memory={0: "1GiB"})
    assert pinned.identity() == {"revision": "abc123"}
    assert pinned.recorded() == {"revision": "abc123", "device_map": "auto", "max_memory": {0: "1GiB"}}


def test_backend_choices_and_options_come_from_the_registry():
    from lmbias.cli import build_parser
    from lmbias.lm import backends

    assert {"hf", "vllm", "openai"} <= set(backends.names())
    run = next(a for a in build_parser()._actions if a.dest == "command").choices["run"]
    crows = next(a for a in run._actions if a.dest == "benchmark").choices["crows_pairs"]
    backend = next(a for a in crows._actions if a.dest == "backend")
    assert list(backend.choices) == backends.names()
    flags = {flag for a in crows._actions for flag in a.option_strings}
    assert {"--enforce-eager", "--base-url", "--revision"} <= flags


def test_a_backend_registered_by_another_package_is_a_choice_and_checked(tiny, tmp_path, capsys):
    """A backend added at run time (as an entry point would) gets its option, its checks and its loader
    without any other code naming it; it loads the hf model itself, so its numbers equal hf's."""
    from lmbias.errors import InputError
    from lmbias.lm import backends
    from lmbias.lm.backends import hf

    def check(spec):
        if spec.options.get("shout") not in (None, True):
            raise InputError("--shout must be given alone")

    echo = backends.Backend(name="echo", description="the hf model, through a plug-in", check=check, load=hf.load,
                            options={"shout": (["--shout"], {"action": "store_true", "default": None, "help": "echo: x"})},
                            own_workers=False)
    backends.register(echo)
    try:
        out = tmp_path / "echo"
        assert main(["run", "crows_pairs", "--model", tiny, "--limit", "4", "--backend", "echo", "--shout", "--out", str(out),
                     "--no-progress", "--threads", "1"]) == 0
        results = json.loads((out / "results.json").read_text())
        assert results["config"]["backend"] == "echo" and results["config"]["shout"] is True
        assert json.loads((out / "config.json").read_text())["config"]["backend"] == "echo"
        reference = tmp_path / "hf"
        assert main(["run", "crows_pairs", "--model", tiny, "--limit", "4", "--out", str(reference), "--no-progress",
                     "--threads", "1"]) == 0  # the same thread count: float sums in the same order
        assert (out / "scores.jsonl").read_text() == (reference / "scores.jsonl").read_text()
        assert main(["run", "crows_pairs", "--model", tiny, "--shout", "--out", str(tmp_path / "x")]) == 2
        assert "--shout applies to --backend echo, not hf" in capsys.readouterr().err
    finally:
        backends.REGISTRY.unregister("echo")


def test_engine_options_are_checked(tiny):
    assert ModelSpec(tiny).checked().options == {}
    with pytest.raises(ValueError, match="unknown backend 'tgi'; valid: "):
        ModelSpec(tiny, backend="tgi").checked()
    with pytest.raises(ValueError, match="--base-url applies to --backend openai, openai-chat, not vllm"):
        ModelSpec(tiny, backend="vllm", options={"base_url": "http://127.0.0.1:8000/v1"}).checked()
    with pytest.raises(ValueError, match="--backend openai needs --model"):
        ModelSpec(backend="openai", options={"base_url": "http://127.0.0.1:8000/v1"}).checked()
    with pytest.raises(ValueError, match="--backend openai needs --base-url"):
        ModelSpec("m", backend="openai").checked()
    with pytest.raises(ValueError, match="backend options \\['tp'\\] are unknown"):
        ModelSpec(tiny, backend="vllm", options={"tp": 2}).checked()
    with pytest.raises(ValueError, match="dtype must be one of"):
        ModelSpec(tiny, dtype="float8").checked()
    with pytest.raises(ValueError, match="--revision applies to a Hub id, not a local path"):
        ModelSpec(tiny, revision="main").checked()
    with pytest.raises(ValueError, match="--revision applies to a Hub id, not the embedded default"):
        ModelSpec(revision="main").checked()
    with pytest.raises(TypeError, match="model must be a ModelSpec, a model name or path, or None, got int"):
        ModelSpec.of(3)
    with pytest.raises(ValueError, match="--max-memory 'x': expected DEVICE=SIZE"):
        ModelSpec(tiny, device_map="auto", max_memory=["x"]).checked()
    assert ModelSpec(tiny, device_map="auto", max_memory=["cpu=1GiB"]).checked().max_memory == {"cpu": "1GiB"}
    if importlib.util.find_spec("vllm") is not None:
        with pytest.raises(ValueError, match="--gpu-memory-utilization must be"):
            ModelSpec(tiny, backend="vllm", options={"gpu_memory_utilization": 1.5}).checked()
        with pytest.raises(ValueError, match="enforce_eager must be True or False, got 'yes'"):
            ModelSpec(tiny, backend="vllm", options={"enforce_eager": "yes"}).checked()


class _CompletionServer(LoopbackServer):
    """A loopback OpenAI-compatible server (``/v1/models``, ``/v1/completions``) that cannot return a
    prompt's log-probabilities: ``refuse_echo`` answers 400 as OpenAI's API does, else it answers
    without ``logprobs`` as servers that ignore ``echo`` do."""

    def __init__(self, refuse_echo: bool):
        class Handler(JSONHandler):
            def do_GET(self):
                self.send_json(200, {"data": [{"id": "served"}]})

            def do_POST(self):
                if refuse_echo and self.read_json().get("echo"):
                    self.send_json(400, {"error": {"message": "echo is not supported with logprobs for this model"}})
                else:
                    self.send_json(200, {"choices": [{"text": " x", "finish_reason": "length", "logprobs": None}]})

        super().__init__(Handler, "/v1")


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


def _hub_cache_with_two_revisions(root):
    """A Hugging Face Hub cache (the layout huggingface_hub writes) holding ``lmbias-test/tiny`` at two
    commits with different weights; ``main`` points at the second. Returns (cache, first, second)."""
    cache = root / "hub"
    repo = cache / "models--lmbias-test--tiny"
    first, second = "1" * 40, "2" * 40
    for commit, seed in ((first, 1), (second, 2)):
        save_tiny_causal_lm(repo / "snapshots" / commit, seed=seed)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(second)
    return cache, first, second


def test_revision_loads_that_commit_from_the_hub_cache_and_is_recorded(tmp_path):
    """--revision reaches transformers: a run at the first commit scores with its weights (equal to a run
    of that snapshot's folder), not main's; results record the commit; a resume at another revision is
    refused; an unknown revision is one line. Offline, from a real Hub cache layout."""
    import os
    import subprocess
    import sys

    cache, first, second = _hub_cache_with_two_revisions(tmp_path)
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}

    def run(out, *extra):
        return subprocess.run([sys.executable, "-m", "lmbias", "run", "crows_pairs", "--limit", "6", "--no-progress",
                               "--out", str(tmp_path / out), *extra], env=env, capture_output=True, text=True)

    for out, extra in (("first", ["--model", "lmbias-test/tiny", "--revision", first]),
                       ("main", ["--model", "lmbias-test/tiny"]),
                       ("folder", ["--model", str(cache / "models--lmbias-test--tiny" / "snapshots" / first)])):
        finished = run(out, *extra)
        assert finished.returncode == 0, finished.stderr
    scores = {out: (tmp_path / out / "scores.jsonl").read_text() for out in ("first", "main", "folder")}
    assert scores["first"] == scores["folder"] != scores["main"]
    results = json.loads((tmp_path / "first" / "results.json").read_text())
    assert results["config"]["revision"] == first and results["model"]["revision"] == first
    assert json.loads((tmp_path / "main" / "results.json").read_text())["model"]["revision"] == second
    refused = run("first", "--model", "lmbias-test/tiny", "--revision", second)
    assert refused.returncode == 2 and f"revision: recorded '{first}', now '{second}'" in refused.stderr
    unknown = run("unknown", "--model", "lmbias-test/tiny", "--revision", "no-such-branch")
    assert unknown.returncode == 2 and unknown.stderr.count("lmbias: error:") == 1
    assert "at revision 'no-such-branch' is not a local folder and not in the Hub cache" in unknown.stderr
    assert not (tmp_path / "unknown").exists()
