"""Fail before the expensive part (issue 13 §2, §3): a run checks every metric's models and resources
before generating, asks a Hub that cannot serve once per run, and keeps each skip notice's fix whole
in the CLI, results.json, the report's Missing box and the push output.

The "Hub" here is a real HTTP server on 127.0.0.1 (``HF_ENDPOINT``) that answers every request with
503 (a Hub that cannot serve) or 404 (a Hub without the model) and counts the requests.
"""

import http.server
import json
import os
import subprocess
import sys
import threading

import pytest

from lmbias.benchmarks.bold.task import FIXES

from tiny_lm import save_tiny_causal_lm

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Hub:
    """A loopback server answering every request with ``status``; ``paths`` lists the model requests
    (huggingface_hub's own ``/api/agent-harnesses`` lookup is not one)."""

    def __init__(self, status: int):
        paths = self.paths = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self):
                if not self.path.startswith("/api/agent-harnesses"):
                    paths.append(self.path)
                body = json.dumps({"error": "Repository not found" if status == 404 else "Service unavailable"}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if status == 404:
                    self.send_header("X-Error-Code", "RepoNotFound")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_HEAD = _answer

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_causal_lm(tmp_path_factory.mktemp("tiny"))


def _lmbias(args, hub: _Hub, timeout=300):
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HUB_CACHE": os.environ.get("LMBIAS_CACHE_DIR", "") + "/hf-hub"}
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("LMBIAS_OFFLINE", None)
    return subprocess.run([sys.executable, "-m", "lmbias", *args], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=REPO_ROOT)


BOLD_ARGS = ["run", "bold", "--domains", "gender", "--per-group", "1", "--max-new-tokens", "2",
             "--metrics", "sentiment", "toxicity", "regard"]


def test_unreachable_hub_is_asked_once_and_skips_are_announced_before_generating(tiny, tmp_path):
    hub = _Hub(503)
    try:
        out = tmp_path / "run"
        finished = _lmbias([*BOLD_ARGS, "--model", tiny, "--out", str(out)], hub)
    finally:
        hub.close()
    assert finished.returncode == 0, finished.stderr[-3000:]
    # one request in the whole run: toxicity's classifier; regard's is not tried once the Hub failed
    assert hub.paths == ["/api/models/unitary/toxic-bert"]
    err = finished.stderr
    skip_line = next(line for line in err.splitlines() if line.startswith("lmbias: will skip toxicity: "))
    assert skip_line.endswith("fix: " + FIXES["toxicity"]) and "the Hugging Face Hub cannot be reached" in skip_line
    assert err.index("will skip regard") < err.index("generating"), "the notice must come before generation"
    assert "Retrying" not in err

    results = json.loads((out / "results.json").read_text())
    assert set(results["results"]["model"]["metrics"]) == {"sentiment"}
    assert sorted(results["skipped"]) == ["model regard", "model toxicity", "wikipedia regard", "wikipedia toxicity"]
    assert results["skipped"]["wikipedia regard"].endswith("fix: " + FIXES["regard"])
    assert results["config"]["metrics"] == ["sentiment", "toxicity", "regard"]  # what was asked for, not what ran
    # each reason is printed once, before generating; the summary names what was skipped and where the reasons are
    assert (finished.stdout + err).count(FIXES["toxicity"]) == 1 and (finished.stdout + err).count(FIXES["regard"]) == 1
    assert (f"Skipped: model toxicity, model regard, wikipedia toxicity, wikipedia regard (each reason and its fix: "
            f"results.json's 'skipped', in {out})") in finished.stdout

    # the fix reaches the report's Missing box and the push output whole
    report = _lmbias(["report", str(out), "--out", str(tmp_path / "report")], hub)
    assert report.returncode == 0, report.stderr[-2000:]
    page = (tmp_path / "report" / "report.html").read_text()
    assert page.count("fix: pass --toxicity-model DIR (a classifier folder saved with save_pretrained)") == 1  # model and wiki: one line
    push = _lmbias(["push", str(out), "--repo-id", "me/tiny", "--dry-run", "--allow-partial", "--out", str(tmp_path / "push")], hub)
    assert push.returncode == 0, push.stderr[-2000:]
    assert ("model toxicity: " in push.stdout + push.stderr) and FIXES["toxicity"] in push.stdout + push.stderr


def test_require_all_stops_before_anything_is_generated(tiny, tmp_path):
    hub = _Hub(404)
    try:
        out = tmp_path / "run"
        finished = _lmbias([*BOLD_ARGS, "--model", tiny, "--out", str(out), "--require-all"], hub)
    finally:
        hub.close()
    assert finished.returncode == 2
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lmbias: error: --require-all: nothing was generated")
    assert "the Hub has no model 'unitary/toxic-bert'" in lines[0] and "the Hub has no model 'sasha/regardv3'" in lines[0]
    assert sorted(hub.paths) == ["/api/models/sasha/regardv3", "/api/models/unitary/toxic-bert"]  # each once
    assert not out.exists()


@pytest.mark.parametrize("status, reason", [(404, "the Hub has no model 'gtp2' (check the spelling"),
                                            (503, "'gtp2' is not in the Hub cache and the Hugging Face Hub cannot be reached")])
def test_a_model_name_the_hub_cannot_serve_fails_at_once_with_one_request(tmp_path, status, reason):
    hub = _Hub(status)
    try:
        finished = _lmbias(["run", "stereoset", "--model", "gtp2", "--limit", "2", "--out", str(tmp_path / "run")], hub)
    finally:
        hub.close()
    assert finished.returncode == 2
    assert hub.paths == ["/api/models/gtp2"]
    assert f"cannot load model 'gtp2': {reason}" in finished.stderr and "omit --model for the embedded default" in finished.stderr
    assert "Retrying" not in finished.stderr and not (tmp_path / "run").exists()


def test_counterfactual_names_its_unavailable_scorers_before_generating(tiny, tmp_path):
    from lmbias.benchmarks.counterfactual.task import FIXES as COUNTERFACTUAL_FIXES

    hub = _Hub(404)
    try:
        out = tmp_path / "run"
        finished = _lmbias(["run", "counterfactual", "--model", tiny, "--attributes", "country", "--samples", "1",
                            "--max-new-tokens", "2", "--classifiers", "vader", "hf", "--encoder", "no-org/no-encoder",
                            "--out", str(out)], hub)
    finally:
        hub.close()
    assert finished.returncode == 0, finished.stderr[-3000:]
    err = finished.stderr
    assert err.index("will skip hf: ") < err.index("generating") and err.index("will skip semantic_similarity") < err.index("generating")
    results = json.loads((out / "results.json").read_text())
    assert results["skipped"]["hf"].endswith("fix: " + COUNTERFACTUAL_FIXES["hf"])
    assert results["skipped"]["semantic_similarity"].endswith("fix: " + COUNTERFACTUAL_FIXES["semantic_similarity"])
    assert list(results["results"]["attributes"]["country"]["classifiers"]) == ["vader"]
