"""The OpenAI-compatible backend: generation and likelihood through a server's ``/v1/completions``
(vLLM, SGLang, TGI, llama.cpp and hosted endpoints speak it; likelihood needs ``echo`` with ``logprobs``).

Prompts are sent as plain completions, not chat, so that a BOLD continuation means what it means
with the other backends. Each sample is one request with the seed :func:`lmbias.lm.backends.vllm.sample_seed`
derives from (run seed, prompt id, sample index), sent at most ``concurrency`` at a time, each with
a timeout and retried with exponential backoff on 429, 5xx and dropped connections. The runner's
shards keep every finished batch, so a crash or a dead server loses at most the batch in flight.

The API key is read from an environment variable (``OPENAI_API_KEY``, or the one ``api_key_env``
names) and only ever put in the request header: it is never printed, logged or written.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError, LmbiasError
from .vllm import sample_seed

RETRY_STATUSES = {429, 500, 502, 503, 504}


class ServerError(LmbiasError, RuntimeError):
    """The server cannot be used: unreachable, an error it keeps returning, or a missing feature."""


def completion_body(model: str, prompt: str, settings: dict, *, seed: int) -> dict:
    """The ``/v1/completions`` request of one sample for lmbias generation ``settings``."""
    unknown = set(settings) - {"do_sample", "temperature", "top_k", "top_p", "repetition_penalty", "max_new_tokens"}
    if unknown:
        raise InputError(f"the openai backend cannot apply the generation settings {sorted(unknown)}")
    sampled = settings.get("do_sample", False)
    body = {"model": model, "prompt": prompt, "max_tokens": int(settings["max_new_tokens"]), "n": 1, "seed": seed,
            "temperature": float(settings.get("temperature", 1.0)) if sampled else 0.0,
            "top_p": float(settings.get("top_p", 1.0)) if sampled else 1.0}
    # not in OpenAI's schema; vLLM, SGLang and TGI read them (top_k 0 / -1: off)
    if sampled and settings.get("top_k"):
        body["top_k"] = int(settings["top_k"])
    if settings.get("repetition_penalty", 1.0) != 1.0:
        body["repetition_penalty"] = float(settings["repetition_penalty"])
    return body


@dataclass
class OpenAIModel:
    """A model behind an OpenAI-compatible server, with the backend interface."""

    base_url: str
    name: str
    tokenizer: Any
    max_length: int | None
    seed: int = 0
    api_key: str | None = field(default=None, repr=False)
    concurrency: int = 8
    timeout: float = 120.0
    retries: int = 5
    info: dict = field(default_factory=dict)

    @property
    def source(self) -> str:
        return self.base_url

    @property
    def model(self):
        """What :func:`lmbias.run_result.model_description` reads."""
        return self

    config = None
    dtype = None

    def _prompts(self, prompts: Sequence[str], ids: Sequence[str]) -> list:
        """What is sent: the token ids the ``hf`` backend would use (an empty prompt as the start
        token) when the tokenizer is known, else the text."""
        tokenizer = self.tokenizer
        if isinstance(tokenizer, _CharacterCounter):
            empty = [prompt_id for prompt_id, prompt in zip(ids, prompts) if not prompt]
            if empty:
                raise InputError(f"prompt {empty[0]!r} is empty; an empty completion prompt needs the model's start token: "
                                 "pass --tokenizer (a Hub id or folder of the served model's tokenizer)")
            return list(prompts)
        start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        return [tokens or [start] for tokens in tokenizer(list(prompts))["input_ids"]]

    def _post(self, client, body: dict) -> dict:
        delay = 1.0
        for attempt in range(self.retries + 1):
            try:
                response = client.post("/completions", json=body)
            except Exception as error:  # connection refused, reset, timeout
                failure = f"{type(error).__name__}: {error}"
            else:
                if response.status_code == 200:
                    return response.json()
                if response.status_code not in RETRY_STATUSES:
                    raise ServerError(f"{self.base_url}/completions answered {response.status_code}: "
                                      f"{response.text.strip().splitlines()[0][:300] if response.text.strip() else ''}")
                failure = f"HTTP {response.status_code}"
            if attempt < self.retries:
                time.sleep(delay)
                delay = min(delay * 2, 30.0)
        raise ServerError(f"{self.base_url}/completions failed {self.retries + 1} times ({failure}); the finished batches "
                          "are kept: rerun the same command to resume")

    def _post_all(self, bodies: list[dict]) -> list[dict]:
        """Every request, at most ``concurrency`` in flight; the answers in order."""
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        with httpx.Client(base_url=self.base_url, headers=headers, timeout=self.timeout) as client, \
                ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(lambda body: self._post(client, body), bodies))

    def prompt_logprobs(self, sequences: Sequence[Sequence[int]]) -> list[list[float]]:
        """The likelihood interface (:mod:`lmbias.lm.likelihood`): per token-id sequence, the
        log-probability of each token after the first given the tokens before it, from the server's
        ``echo`` + ``logprobs`` (one request per sequence, the ids sent as they are).

        Raises:
            ServerError: the server does not return the prompt's log-probabilities.
        """
        bodies = [{"model": self.name, "prompt": list(tokens), "max_tokens": 1, "temperature": 0.0, "echo": True,
                   "logprobs": 1} for tokens in sequences]
        try:
            answers = self._post_all(bodies)
        except ServerError as error:
            raise ServerError(f"{error}; likelihood scoring needs a server that returns prompt log-probabilities "
                              "(echo with logprobs, e.g. vLLM)") from None
        values = []
        for tokens, answer in zip(sequences, answers):
            logprobs = ((answer.get("choices") or [{}])[0].get("logprobs") or {}).get("token_logprobs") or []
            if len(logprobs) < len(tokens) or any(value is None for value in logprobs[1 : len(tokens)]):
                raise ServerError(f"{self.base_url}/completions did not return the prompt's log-probabilities (echo with "
                                  "logprobs), which StereoSet and CrowS-Pairs need; serve the model with vLLM, or use "
                                  "--backend hf or vllm")
            values.append(logprobs[1 : len(tokens)])
        return values

    def generate(self, prompts: Sequence[str], settings: dict, *, seed: int, num_return_sequences: int = 1,
                 ids: Sequence[str] | None = None) -> list[dict]:
        """Per prompt and sample (prompt-major): ``continuation``, ``num_tokens`` and ``stop_reason``
        ("eos" when the server stopped on its own, "length" at the token limit)."""
        ids = list(ids) if ids is not None else [str(i) for i in range(len(prompts))]
        bodies = [completion_body(self.name, prompt, settings, seed=sample_seed(self.seed, prompt_id, sample))
                  for prompt_id, prompt in zip(ids, self._prompts(prompts, ids)) for sample in range(num_return_sequences)]
        answers = self._post_all(bodies)
        results = []
        for answer in answers:
            choice = answer["choices"][0]
            stopped = choice.get("finish_reason") != "length"
            # the server's count includes the end token it stopped on; the other backends' counts do not
            tokens = (answer.get("usage") or {}).get("completion_tokens")
            results.append({"continuation": choice["text"], "num_tokens": None if tokens is None else tokens - stopped,
                            "stop_reason": "eos" if stopped else "length"})
        return results


def connect(base_url: str, model: str, *, tokenizer: str | None = None, api_key_env: str = "OPENAI_API_KEY", seed: int = 0,
            concurrency: int = 8, timeout: float = 120.0) -> OpenAIModel:
    """An :class:`OpenAIModel` for ``model`` on the server at ``base_url`` (``http://host:port/v1``),
    after checking that the server answers and serves that model (``/v1/models``).

    ``tokenizer`` (a Hub id or folder; default ``model``) counts prompt tokens for the runner's
    batches and the context check; when it cannot be loaded, prompts are batched by length in
    characters and the server checks the context.

    Raises:
        ServerError: the server is unreachable, refuses the key, or does not serve ``model``.
    """
    base_url = base_url.rstrip("/")
    api_key = check_served(base_url, model, api_key_env=api_key_env, timeout=timeout)
    tokens = _tokenizer(tokenizer or model)
    limit = getattr(tokens, "model_max_length", None)
    limit = limit if isinstance(limit, int) and 0 < limit < 10**8 else None
    return OpenAIModel(base_url, model, tokens, limit, seed, api_key, concurrency, timeout,
                       info={"backend": "openai", "base_url": base_url})


def check_served(base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY", timeout: float = 30.0) -> str | None:
    """Check that the server at ``base_url`` answers, accepts the key in ``api_key_env`` and serves
    ``model`` (one ``/v1/models`` request); returns the key (None without one).

    Raises:
        ServerError: unreachable, the key refused, not an OpenAI-compatible server, or ``model`` not served.
    """
    import httpx

    api_key = os.environ.get(api_key_env) or None
    base_url = base_url.rstrip("/")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(f"{base_url}/models", headers=headers, timeout=min(timeout, 30.0))
    except Exception as error:
        raise ServerError(f"--base-url {base_url}: the server cannot be reached ({type(error).__name__}); is it running?") from None
    if response.status_code in (401, 403):
        raise ServerError(f"--base-url {base_url}: the server refused the API key (HTTP {response.status_code}); set "
                          f"{api_key_env} (--api-key-env names another variable)")
    if response.status_code != 200:
        raise ServerError(f"--base-url {base_url}/models answered HTTP {response.status_code}; expected an OpenAI-compatible server")
    served = [entry.get("id") for entry in response.json().get("data", [])]
    if model not in served:
        raise ServerError(f"--model {model!r} is not served by {base_url}; it serves {served}")
    return api_key


NO_TOKENIZER = ("likelihood scoring with --backend openai needs the served model's tokenizer (the scores are per token): "
                "pass --tokenizer (a Hub id or folder)")


class _CharacterCounter:
    """A stand-in tokenizer that counts characters (batches of similar length; no context check);
    anything per token (likelihood scoring) gets :data:`NO_TOKENIZER`."""

    def __call__(self, texts):
        return {"input_ids": [list(range(len(text))) for text in texts]}

    @property
    def bos_token_id(self):
        raise InputError(NO_TOKENIZER)

    eos_token_id = bos_token_id


def check_tokenizer(name: str) -> None:
    """Raise :data:`NO_TOKENIZER` when the served model's tokenizer ``name`` cannot be loaded (before a likelihood run)."""
    if isinstance(_tokenizer(name), _CharacterCounter):
        raise InputError(f"{NO_TOKENIZER}; {name!r} could not be loaded")


def _tokenizer(name: str):
    """The tokenizer of ``name`` (a folder, the Hub cache or the Hub, asked once), else a character counter."""
    from transformers import AutoTokenizer

    from ...model_source import model_source

    source = model_source(name)
    if not source.available:
        return _CharacterCounter()
    try:
        return AutoTokenizer.from_pretrained(name, **source.load_kwargs())
    except (OSError, ValueError):
        return _CharacterCounter()
