"""The loopback server's start (tests/vllm_server.py), in the main environment: a server that dies and a
server still starting at its deadline are told apart, each with its log's last lines (issue 47: 8 served
tests failed under load with only "did not answer"); the deadline comes from LMBIAS_VLLM_START_DEADLINE
when set."""

import pytest

import vllm_server


def _serve(tmp_path, deadline_s):
    """Start the server (the command set by the ``command`` fixture) and return the RuntimeError's message."""
    log = tmp_path / "server.log"
    with pytest.raises(RuntimeError) as raised, vllm_server.vllm_server(tmp_path, log, served_name="m", deadline_s=deadline_s):
        pass
    return str(raised.value)


@pytest.fixture
def command(monkeypatch):
    """Set the server's command to ``python -c CODE`` (the options vllm_server adds follow as arguments)."""
    def use(code):
        monkeypatch.setattr(vllm_server, "readme_cpu_command", lambda: ["python", "-c", code])
    return use


def test_a_server_that_dies_is_reported_with_its_exit_status_and_log(tmp_path, command):
    command("import sys; print('loading the model'); print('out of memory', file=sys.stderr); sys.exit(3)")
    message = _serve(tmp_path, deadline_s=600)
    assert message.startswith("the vLLM server died before answering: it exited with status 3 after ")
    assert "loading the model\nout of memory" in message and "still starting" not in message


def test_a_server_still_starting_at_the_deadline_says_so_and_is_stopped(tmp_path, command):
    command("import time; print('starting the engine', flush=True); time.sleep(120)")
    message = _serve(tmp_path, deadline_s=3)
    assert message.startswith("the vLLM server was still starting after ") and " alive, no answer from http://127.0.0.1:" in message
    assert "LMBIAS_VLLM_START_DEADLINE" in message and message.endswith("starting the engine") and "load average" in message


def test_the_deadline_is_measured_or_given(monkeypatch):
    monkeypatch.delenv("LMBIAS_VLLM_START_DEADLINE", raising=False)
    assert vllm_server.start_deadline() == 2 * vllm_server.START_MEASURED_S["loaded"] > 420  # issue 47: 420 s was too short
    monkeypatch.setenv("LMBIAS_VLLM_START_DEADLINE", "3600")
    assert vllm_server.start_deadline() == 3600
    for bad in ("soon", "0", "-5", "nan"):
        monkeypatch.setenv("LMBIAS_VLLM_START_DEADLINE", bad)
        with pytest.raises(ValueError, match=f"LMBIAS_VLLM_START_DEADLINE must be a positive number of seconds, got '{bad}'"):
            vllm_server.start_deadline()
