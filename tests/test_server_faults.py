"""The openai backend against a hostile server (issue 24): a real HTTP server on 127.0.0.1, started
here, that echoes the API key, answers garbage, or never answers. Each fault is one line naming
--base-url (exit 2, no traceback), the key is never shown or stored, and a server that stops
answering ends the run after a bounded, stated wait (--timeout). Also: the backends' number options
refuse inf and NaN."""

import json
import re
import threading
import time

import pytest

from lmbias.cli import main
from lmbias.lm.spec import ModelSpec

from loopback import JSONHandler, LoopbackServer
from tiny_lm import save_tiny_causal_lm

KEY = "sk-LEAKED-secret-0123456789abcdef"
HANG = object()  # an answer that never comes
BOLD = ["run", "bold", "--backend", "openai", "--model", "served", "--per-group", "1", "--domains", "gender",
        "--metrics", "sentiment", "--max-new-tokens", "4", "--no-progress"]
GOOD_MODELS = json.dumps({"object": "list", "data": [{"id": "served"}]})


class HostileServer(LoopbackServer):
    """``/v1/models`` and ``/v1/completions`` answering what the test says: ``(status, body)`` (a body
    string is sent as it is; ``{key}`` in it becomes the Authorization header received) or
    :data:`HANG` (the handler waits until the server closes). Counts the requests per path."""

    def __init__(self, models=(200, GOOD_MODELS), completions=(200, "{}")):
        self.answers = {"/v1/models": models, "/v1/completions": completions}
        self.requests = {"/v1/models": 0, "/v1/completions": 0}
        self.release = threading.Event()
        server = self

        class Handler(JSONHandler):
            def _answer(self):
                server.requests[self.path] = server.requests.get(self.path, 0) + 1
                answer = server.answers.get(self.path, (404, "{}"))
                if answer is HANG:
                    server.release.wait()
                    return
                status, body = answer
                self.send_json(status, body.replace("{key}", self.headers.get("Authorization", "")))

            def do_GET(self):
                self._answer()

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self._answer()

        super().__init__(Handler, "/v1")

    def close(self):
        self.release.set()
        super().close()


@pytest.fixture
def hostile(monkeypatch):
    """Start a :class:`HostileServer` with the given answers (closed after the test); the API key set."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    servers = []

    def start(**answers):
        servers.append(HostileServer(**answers))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _one_error(capsys) -> str:
    """The one ``lmbias: error:`` line of a command, after checking that no traceback and no key was shown."""
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert KEY not in shown and "Traceback" not in shown, shown[-3000:]
    errors = [line for line in captured.err.splitlines() if line.startswith("lmbias: error: ")]
    assert len(errors) == 1, captured.err[-3000:]
    return errors[0]


def test_a_key_echoed_in_an_error_body_is_redacted(hostile, tmp_path, capsys):
    server = hostile(completions=(400, '{"error": {"message": "invalid request from {key}"}}'))
    assert main([*BOLD, "--base-url", server.url, "--out", str(tmp_path / "r")]) == 2
    error = _one_error(capsys)
    assert f"--base-url {server.url}: /completions answered 400: " in error
    assert "invalid request from Bearer [API key]" in error  # the body is shown, less the key

    server = hostile(models=(500, '{"error": "upstream refused {key}"}'))
    assert main([*BOLD, "--base-url", server.url, "--out", str(tmp_path / "r2")]) == 2
    assert "upstream refused Bearer [API key]" in _one_error(capsys)

    server = hostile(models=(200, json.dumps({"data": [{"id": "{key}"}]})))  # a model list naming the key
    assert main([*BOLD, "--base-url", server.url, "--out", str(tmp_path / "r3")]) == 2
    assert "it serves ['Bearer [API key]']" in _one_error(capsys)


def test_a_key_echoed_in_a_continuation_is_not_stored(hostile, tmp_path, capsys):
    answer = json.dumps({"choices": [{"text": " the header was {key}", "finish_reason": "length"}],
                         "usage": {"completion_tokens": 4}})
    server = hostile(completions=(200, answer))
    out = tmp_path / "r"
    assert main([*BOLD, "--base-url", server.url, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert KEY not in captured.out + captured.err
    generations = [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]
    assert [g["continuation"] for g in generations] == [" the header was Bearer [API key]"] * 2
    assert [g["num_tokens"] for g in generations] == [4, 4]
    assert not [path for path in out.rglob("*") if path.is_file() and KEY in path.read_text(errors="replace")]


@pytest.mark.parametrize("body, shown", [
    ("{not json", "'{not json'"),
    ("[]", "'[]'"),
    ('{"id": "x"}', """'{"id": "x"}'"""),
    ('{"choices": []}', """'{"choices": []}'"""),
    ('{"choices": ["text"]}', """'{"choices": ["text"]}'"""),
])
def test_a_completion_without_choices_is_one_line(hostile, tmp_path, capsys, body, shown):
    server = hostile(completions=(200, body))
    assert main([*BOLD, "--base-url", server.url, "--out", str(tmp_path / "r")]) == 2
    assert _one_error(capsys) == (
        f"lmbias: error: --base-url {server.url}: /completions answered 200 with no completion (expected a JSON object "
        f"with a non-empty 'choices' list, got {shown}); is it an OpenAI-compatible server?")


@pytest.mark.parametrize("choice, field", [
    ({"finish_reason": "length"}, "choices[0].text"),
    ({"text": 3}, "choices[0].text"),
])
def test_a_completion_with_wrong_fields_is_one_line(hostile, tmp_path, capsys, choice, field):
    server = hostile(completions=(200, json.dumps({"choices": [choice]})))
    assert main([*BOLD, "--base-url", server.url, "--out", str(tmp_path / "r")]) == 2
    assert f"--base-url {server.url}: /completions answered with {field} missing or of the wrong type" in _one_error(capsys)


def test_wrong_token_counts_are_one_line(hostile, tmp_path, capsys):
    server = hostile(completions=(200, json.dumps({"choices": [{"text": " x"}], "usage": {"completion_tokens": "4"}})))
    assert main([*BOLD, "--base-url", server.url, "--out", str(tmp_path / "r")]) == 2
    assert "/completions answered with usage.completion_tokens missing or of the wrong type" in _one_error(capsys)


@pytest.mark.parametrize("body", ["<html>not json", json.dumps([{"id": "served"}]), '{"data": "served"}', '{"data": ["served"]}'])
def test_a_models_answer_that_is_no_model_list_is_one_line(hostile, tmp_path, capsys, body):
    server = hostile(models=(200, body))
    assert main([*BOLD, "--base-url", server.url, "--out", str(tmp_path / "r")]) == 2
    error = _one_error(capsys)
    assert error.startswith(f"lmbias: error: --base-url {server.url}/models answered ")
    assert error.endswith('not a model list (expected a JSON object {"data": [{"id": ...}]}); expected an OpenAI-compatible server')


def test_a_likelihood_answer_with_bad_logprobs_is_one_line(hostile, tmp_path, capsys):
    tiny = save_tiny_causal_lm(tmp_path / "tiny")
    server = hostile(completions=(200, json.dumps({"choices": [{"text": "", "logprobs": {"token_logprobs": [None, "-1.5"]}}]})))
    assert main(["run", "crows_pairs", "--backend", "openai", "--model", "served", "--base-url", server.url, "--tokenizer",
                 tiny, "--limit", "2", "--no-progress", "--out", str(tmp_path / "r")]) == 2
    assert f"--base-url {server.url}: /completions did not return the prompt's log-probabilities" in _one_error(capsys)


def test_a_server_that_never_answers_the_check_is_one_line_after_the_timeout(hostile, tmp_path, capsys):
    server = hostile(models=HANG)
    started = time.monotonic()
    assert main([*BOLD, "--base-url", server.url, "--timeout", "1", "--out", str(tmp_path / "r")]) == 2
    assert time.monotonic() - started < 10
    assert _one_error(capsys) == (f"lmbias: error: --base-url {server.url}: /models gave no answer within 1 s (--timeout); "
                                  "is the server stuck or still starting?")


def test_a_server_that_stops_answering_ends_the_run_after_two_timeouts(hostile, tmp_path, capsys):
    """/models answers, /completions never does: each request is sent twice (TIMEOUT_TRIES), then the
    run stops with one line; the wait is two timeouts, not six tries of 120 s."""
    server = hostile(completions=HANG)
    started = time.monotonic()
    assert main([*BOLD, "--base-url", server.url, "--timeout", "1.5", "--out", str(tmp_path / "r")]) == 2
    elapsed = time.monotonic() - started
    error = _one_error(capsys)
    assert re.match(f"lmbias: error: --base-url {re.escape(server.url)}: /completions gave no answer within --timeout 1.5 s, "
                    r"2 tries \(\d+ s\); the server is stuck or overloaded: check it, or raise --timeout", error), error
    assert 3.0 <= elapsed < 15, elapsed  # two tries of 1.5 s, and no more
    assert 2 <= server.requests["/v1/completions"] <= 4  # the 2 prompts, each tried at most twice


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1"])
def test_the_timeout_must_be_a_finite_positive_number(hostile, tmp_path, capsys, value):
    server = hostile()
    assert main([*BOLD, "--base-url", server.url, "--timeout", value, "--out", str(tmp_path / "r")]) == 2
    error = _one_error(capsys)
    assert error.startswith("lmbias: error: --timeout must be a finite number") and f"got {float(value)!r}" in error
    assert server.requests["/v1/models"] == 0 and not (tmp_path / "r").exists()


@pytest.mark.parametrize("options, message", [
    ({"kv_cache_gib": float("inf")}, r"--kv-cache-gib must be a finite number.*got inf"),
    ({"kv_cache_gib": float("nan")}, r"--kv-cache-gib must be a finite number.*got nan"),
    ({"kv_cache_gib": 0.0}, r"--kv-cache-gib must be a finite number above 0, got 0.0$"),
    ({"gpu_memory_utilization": float("nan")}, r"--gpu-memory-utilization must be a finite number.*got nan"),
    ({"gpu_memory_utilization": float("inf")}, r"--gpu-memory-utilization must be a finite number.*got inf"),
    ({"gpu_memory_utilization": 1.5}, r"--gpu-memory-utilization must be a finite number above 0 and at most 1, got 1.5$"),
    ({"verbose": "yes"}, r"verbose must be True or False, got 'yes'$"),
])
def test_vllm_number_options_refuse_inf_and_nan(tmp_path, options, message):
    tiny = save_tiny_causal_lm(tmp_path / "tiny")
    with pytest.raises(ValueError, match=message):
        ModelSpec(tiny, backend="vllm", options=options).checked()
