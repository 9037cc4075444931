"""The OpenAI-compatible backend: generation and likelihood through a server's ``/v1/completions``
(vLLM, SGLang, TGI, llama.cpp and hosted endpoints speak it; likelihood needs ``echo`` with ``logprobs``).

Prompts are sent as plain completions, not chat, so that a BOLD continuation means what it means
with the other backends. Each sample is one request with the seed :func:`lmbias.lm.backends.vllm.sample_seed`
derives from (run seed, prompt id, sample index), sent at most ``concurrency`` at a time. A request
is retried with exponential backoff on 429, 5xx and dropped connections (``retries`` times, about
31 s of waiting in all); one that gets no answer within ``timeout`` seconds is sent once more
(:data:`TIMEOUT_TRIES`), so a server that stops answering ends the run after at most twice the
timeout, with one line naming ``--base-url``. Every answer is checked (JSON, an object with a
non-empty ``choices`` list, the fields read) before it is used. The runner's shards keep every
finished batch, so a crash or a dead server loses at most the batch in flight.

The API key is read from an environment variable (``OPENAI_API_KEY``, or the one ``api_key_env``
names) and only ever put in the request header: it is never printed, logged or written, and any
server text lmbias shows or stores (error bodies, model names, continuations) has it replaced by
``[API key]`` (:func:`redact`), since some servers echo it: as it is, JSON-escaped (``sk-A\\/B``) or
URL-encoded (``sk-A%2FB``, ``sk-A%2fB``). A key is never taken from the command line or the URL:
``--api-key-env`` must be a variable's name, and a ``--base-url`` with credentials (``user:KEY@``, a
key in its query string) is refused (:func:`check_base_url`) without being repeated.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ...checks import check_scalar
from ...credentials import check_env_name, strip_credentials
from ...errors import InputError, InputTypeError, LmbiasError
from ..chat import encode_prompts
from . import Backend, NoLogprobs, causal_only, check_real
from .vllm import sample_seed

RETRY_STATUSES = {429, 500, 502, 503, 504}
DEFAULT_TIMEOUT = 120.0  # seconds to wait for one answer (--timeout)
CHECK_TIMEOUT = 30.0  # seconds at most for the /models check at the start
TIMEOUT_TRIES = 2  # a request with no answer in time is sent once more, then the server counts as not answering


class ServerError(LmbiasError, RuntimeError):
    """The server cannot be used: unreachable, an error it keeps returning, or a missing feature."""


def redact(text: str, api_key: str | None) -> str:
    """``text`` from a server with the API key replaced by ``[API key]`` (some servers echo it in errors),
    however the server spelled it (:func:`key_pattern`).

    >>> redact('{"error": "bad key sk-A\\\\/B+c", "url": "/v1?key=sk-A%2fB%2Bc"}', "sk-A/B+c")
    '{"error": "bad key [API key]", "url": "/v1?key=[API key]"}'
    """
    return key_pattern(api_key).sub("[API key]", text) if api_key else text


@functools.lru_cache(maxsize=8)
def key_pattern(api_key: str) -> re.Pattern:
    """A pattern matching ``api_key`` in every encoding a server's text may hold it in: each character
    as it is or escaped by backslashes (JSON's ``\\/``, JSON inside JSON), as a JSON ``\\uXXXX`` escape,
    or percent-encoded (``quote``, ``quote_plus``; upper or lower case hex, ``%25`` when encoded twice),
    a space also as ``+`` (``quote_plus``); the encodings may mix within the key."""
    parts = []
    for char in api_key:
        forms = [r"\\*" + re.escape(char), rf"(?i:\\+u{ord(char):04x})",
                 "(?i:" + "".join(f"%(?:25)*{byte:02x}" for byte in char.encode()) + ")"]
        if char == " ":
            forms.append(r"\+")
        parts.append("(?:" + "|".join(forms) + ")")
    return re.compile("".join(parts))


def _excerpt(text: str, api_key: str | None, limit: int = 200) -> str:
    """A server's text as one short, redacted line for an error message."""
    return " ".join(redact(text, api_key).split())[:limit]


def completion_body(model: str, settings: dict, *, seed: int, **request) -> dict:
    """The request of one sample for lmbias generation ``settings``, with ``request`` (``prompt=`` for
    ``/v1/completions``, ``messages=`` for ``/v1/chat/completions``)."""
    unknown = set(settings) - {"do_sample", "temperature", "top_k", "top_p", "repetition_penalty", "max_new_tokens"}
    if unknown:
        raise InputError(f"the openai backend cannot apply the generation settings {sorted(unknown)}")
    sampled = settings.get("do_sample", False)
    body = {"model": model, **request, "max_tokens": int(settings["max_new_tokens"]), "n": 1, "seed": seed,
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
    timeout: float = DEFAULT_TIMEOUT
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
    device = None  # the server places the model
    chat = None  # a chat run's ChatFormat (lmbias.lm.chat), set by ModelSpec.load
    endpoint = "/completions"
    backend = "openai"
    counts_tokens = True  # prompts are sent as token ids, so the served model's tokenizer counts them

    def _prompts(self, prompts: Sequence[str], ids: Sequence[str]) -> list:
        """What is sent: the token ids the ``hf`` backend would use (an empty prompt as the start
        token) when the tokenizer is known, else the text."""
        tokenizer = self.tokenizer
        if isinstance(tokenizer, _CharacterCounter):
            if self.chat is not None:
                raise InputError(f"--chat with --backend openai renders the chat template here: {NO_TOKENIZER.split(': ', 1)[1]}")
            empty = [prompt_id for prompt_id, prompt in zip(ids, prompts) if not prompt]
            if empty:
                raise InputError(f"prompt {empty[0]!r} is empty; an empty completion prompt needs the model's start token: "
                                 "pass --tokenizer (a Hub id or folder of the served model's tokenizer)")
            return list(prompts)
        return encode_prompts(tokenizer, prompts, self.chat)

    def _post(self, client, body: dict, failed: list, hint: str) -> dict | None:
        """One request's answer (checked by :meth:`_answer`), with the retries the module describes;
        None without sending once another request has failed (``failed`` holds its error)."""
        import httpx

        delay, timeouts, started = 1.0, 0, time.monotonic()
        for attempt in range(self.retries + 1):
            if failed:
                return None
            try:
                response = client.post(self.endpoint, json=body)
            except httpx.TimeoutException:
                timeouts, failure = timeouts + 1, f"no answer within {self.timeout:g} s"
                if timeouts == TIMEOUT_TRIES:
                    raise ServerError(f"--base-url {self.base_url}: {self.endpoint} gave no answer within --timeout "
                                      f"{self.timeout:g} s, {TIMEOUT_TRIES} tries ({time.monotonic() - started:.0f} s); "
                                      "the server is stuck or overloaded: check it, or raise --timeout; the finished "
                                      "batches are kept: rerun the same command to resume") from None
                continue
            except httpx.TransportError as error:  # connection refused, reset, dropped
                failure = f"{type(error).__name__}: {_excerpt(str(error), self.api_key)}"
            else:
                if response.status_code == 200:
                    return self._answer(response)
                if response.status_code not in RETRY_STATUSES:
                    raise ServerError(f"--base-url {self.base_url}: {self.endpoint} answered {response.status_code}: "
                                      f"{_excerpt(response.text, self.api_key, 300)}{hint}{self._missing(response)}")
                failure = f"HTTP {response.status_code}"
            if attempt < self.retries:
                time.sleep(delay)
                delay = min(delay * 2, 30.0)
        raise ServerError(f"--base-url {self.base_url}: {self.endpoint} failed {self.retries + 1} times ({failure}); the "
                          "finished batches are kept: rerun the same command to resume")

    def _missing(self, response) -> str:
        """What a 404 or 405 means: the server has no such endpoint."""
        if response.status_code not in (404, 405):
            return ""
        other = "--backend openai (/v1/completions)" if self.endpoint != "/completions" else "--backend openai-chat (/v1/chat/completions)"
        return f"; the server has no {self.endpoint} endpoint: use {other}"

    def _answer(self, response) -> dict:
        """The JSON object of a 200 answer, with a non-empty ``choices`` list of objects; else a ServerError."""
        try:
            answer = response.json()
        except ValueError:
            answer = None
        choices = answer.get("choices") if isinstance(answer, dict) else None
        if not (isinstance(choices, list) and choices and all(isinstance(choice, dict) for choice in choices)):
            raise ServerError(f"--base-url {self.base_url}: {self.endpoint} answered 200 with no completion (expected a JSON "
                              f"object with a non-empty 'choices' list, got {_excerpt(response.text, self.api_key)!r}); "
                              "is it an OpenAI-compatible server?")
        return answer

    def _bad_field(self, name: str, answer: dict) -> ServerError:
        return ServerError(f"--base-url {self.base_url}: {self.endpoint} answered with {name} missing or of the wrong type "
                           f"({_excerpt(json.dumps(answer), self.api_key)!r}); is it an OpenAI-compatible server?")

    def _post_all(self, bodies: list[dict], hint: str = "") -> list[dict]:
        """Every request, at most ``concurrency`` in flight; the answers in order. The first request
        that fails for good stops the others (none is sent after it) and its error is raised."""
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        failed: list[ServerError] = []

        def post(body):
            try:
                return self._post(client, body, failed, hint)
            except ServerError as error:
                failed.append(error)

        with httpx.Client(base_url=self.base_url, headers=headers, timeout=self.timeout) as client, \
                ThreadPoolExecutor(self.concurrency) as pool:
            answers = list(pool.map(post, bodies))
        if failed:
            raise failed[0]
        return answers

    def prompt_logprobs(self, sequences: Sequence[Sequence[int]]) -> list[list[float]]:
        """The likelihood interface (:mod:`lmbias.lm.likelihood`): per token-id sequence, the
        log-probability of each token after the first given the tokens before it, from the server's
        ``echo`` + ``logprobs`` (one request per sequence, the ids sent as they are).

        Raises:
            ServerError: the server does not return the prompt's log-probabilities.
        """
        bodies = [{"model": self.name, "prompt": list(tokens), "max_tokens": 1, "temperature": 0.0, "echo": True,
                   "logprobs": 1} for tokens in sequences]
        answers = self._post_all(bodies, hint="; likelihood scoring needs a server that returns prompt log-probabilities "
                                              "(echo with logprobs, e.g. vLLM)")
        values = []
        for tokens, answer in zip(sequences, answers):
            logprobs = (answer["choices"][0].get("logprobs") or {}).get("token_logprobs") or []
            if not isinstance(logprobs, list) or len(logprobs) < len(tokens) or not all(
                    isinstance(value, (int, float)) and not isinstance(value, bool) for value in logprobs[1 : len(tokens)]):
                raise ServerError(f"--base-url {self.base_url}: /completions did not return the prompt's log-probabilities (echo with "
                                  "logprobs), which StereoSet and CrowS-Pairs need; serve the model with vLLM, or use "
                                  "--backend hf or vllm")
            values.append(logprobs[1 : len(tokens)])
        return values

    def top_logprobs(self, prompts: Sequence[str], ids: Sequence[str], k: int = 20) -> list[list[tuple[str, float]]]:
        """Per prompt (in the chat format, with its prefill, as :meth:`generate` sends it), the server's top ``k``
        next-token log-probabilities as ``(token text, log-probability)`` (a grader's options,
        :mod:`lmbias.protocols.judge`): one greedy token, ``logprobs`` = ``k``.

        Raises:
            NoLogprobs: the server returned none.
        """
        bodies = [{"model": self.name, "prompt": prompt, "max_tokens": 1, "temperature": 0.0, "logprobs": k,
                   "seed": sample_seed(self.seed, prompt_id, 0)} for prompt_id, prompt in zip(ids, self._prompts(prompts, ids))]
        return [self._top_entries(answer) for answer in self._post_all(bodies)]

    def _top_entries(self, answer: dict) -> list[tuple[str, float]]:
        """The top log-probabilities of the first generated token of a completion."""
        logprobs = answer["choices"][0].get("logprobs")
        top = logprobs.get("top_logprobs") if isinstance(logprobs, dict) else None
        if not (isinstance(top, list) and top and isinstance(top[0], dict) and top[0]):
            raise NoLogprobs(f"--base-url {self.base_url}: {self.endpoint} returned no log-probabilities")
        return [(redact(str(text), self.api_key), float(value)) for text, value in top[0].items()]

    def _body(self, prompt, settings: dict, *, seed: int) -> dict:
        """One sample's request (:func:`completion_body`)."""
        return completion_body(self.name, settings, seed=seed, prompt=prompt)

    def _text(self, choice: dict, answer: dict) -> str:
        """The generated text of an answer's first choice."""
        if not isinstance(choice.get("text"), str):
            raise self._bad_field("choices[0].text", answer)
        return choice["text"]

    def generate(self, prompts: Sequence[str], settings: dict, *, seed: int, num_return_sequences: int = 1,
                 ids: Sequence[str] | None = None) -> list[dict]:
        """Per prompt and sample (prompt-major): ``continuation``, ``num_tokens`` and ``stop_reason``
        ("eos" when the server stopped on its own, "length" at the token limit)."""
        ids = list(ids) if ids is not None else [str(i) for i in range(len(prompts))]
        bodies = [self._body(prompt, settings, seed=sample_seed(self.seed, prompt_id, sample))
                  for prompt_id, prompt in zip(ids, self._prompts(prompts, ids)) for sample in range(num_return_sequences)]
        answers = self._post_all(bodies)
        results = []
        for answer in answers:
            choice = answer["choices"][0]
            text = self._text(choice, answer)
            stopped = choice.get("finish_reason") != "length"
            # the server's count includes the end token it stopped on; the other backends' counts do not
            usage = answer.get("usage")
            tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
            if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int)):
                raise self._bad_field("usage.completion_tokens", answer)
            results.append({"continuation": redact(text, self.api_key),
                            "num_tokens": None if tokens is None else tokens - stopped,
                            "stop_reason": "eos" if stopped else "length"})
        return results


def connect(base_url: str, model: str, *, tokenizer: str | None = None, api_key_env: str = "OPENAI_API_KEY", seed: int = 0,
            concurrency: int = 8, timeout: float = DEFAULT_TIMEOUT, model_class: type = OpenAIModel) -> OpenAIModel:
    """An :class:`OpenAIModel` for ``model`` on the server at ``base_url`` (``http://host:port/v1``),
    after checking that the server answers and serves that model (``/v1/models``).

    ``tokenizer`` (a Hub id or folder; default ``model``) counts prompt tokens for the runner's
    batches and the context check; when it cannot be loaded, prompts are batched by length in
    characters and the server checks the context. ``timeout``: seconds to wait for one answer
    (see the module's note on retries).

    Raises:
        ServerError: the server is unreachable, refuses the key, or does not serve ``model``.
    """
    base_url = base_url.rstrip("/")
    api_key = check_served(base_url, model, api_key_env=api_key_env, timeout=timeout)
    tokens = _tokenizer(tokenizer or model) if model_class.counts_tokens else _CharacterCounter()
    limit = getattr(tokens, "model_max_length", None)
    limit = limit if isinstance(limit, int) and 0 < limit < 10**8 else None
    return model_class(base_url, model, tokens, limit, seed, api_key, concurrency, timeout,
                       info={"backend": model_class.backend, "base_url": base_url})


def check_served(base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = DEFAULT_TIMEOUT) -> str | None:
    """Check that the server at ``base_url`` answers (within ``timeout`` seconds, at most
    :data:`CHECK_TIMEOUT`: a server that is up answers this at once), accepts the key in
    ``api_key_env`` and serves ``model`` (one ``/v1/models`` request); returns the key (None without one).

    Raises:
        InputError: ``base_url`` is not a server's address or holds credentials (:func:`check_base_url`),
            or ``api_key_env`` cannot name an environment variable (it is not repeated: it may be a key).
        ServerError: unreachable, no answer in time, the key refused, not an OpenAI-compatible server
            (an answer that is not a model list), or ``model`` not served.
    """
    import httpx

    base_url = check_base_url(base_url).rstrip("/")
    api_key = os.environ.get(check_env_name(api_key_env, "--api-key-env")) or None
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(f"{base_url}/models", headers=headers, timeout=min(timeout, CHECK_TIMEOUT))
    except httpx.TimeoutException:
        raise ServerError(f"--base-url {base_url}: /models gave no answer within {min(timeout, CHECK_TIMEOUT):g} s "
                          "(--timeout); is the server stuck or still starting?") from None
    except Exception as error:
        raise ServerError(f"--base-url {base_url}: the server cannot be reached ({type(error).__name__}); is it running?") from None
    if response.status_code in (401, 403):
        raise ServerError(f"--base-url {base_url}: the server refused the API key (HTTP {response.status_code}); set "
                          f"{api_key_env} (--api-key-env names another variable)")
    if response.status_code != 200:
        raise ServerError(f"--base-url {base_url}/models answered HTTP {response.status_code} "
                          f"({_excerpt(response.text, api_key)!r}); expected an OpenAI-compatible server")
    try:
        entries = response.json().get("data")
    except (ValueError, AttributeError):  # not JSON, or JSON but not an object
        entries = None
    if not (isinstance(entries, list) and all(isinstance(entry, dict) for entry in entries)):
        raise ServerError(f"--base-url {base_url}/models answered {_excerpt(response.text, api_key)!r}, not a model list "
                          "(expected a JSON object {\"data\": [{\"id\": ...}]}); expected an OpenAI-compatible server")
    served = [entry.get("id") for entry in entries]
    if model not in served:
        shown = redact(repr(served), api_key)
        raise ServerError(f"--model {model!r} is not served by {base_url}; it serves {shown[:300]}")
    return api_key


def check_base_url(url) -> str:
    """``url`` if it is a server's address that requests can be built on: ``http://`` or ``https://``, a
    host, and no query string or fragment (requests go to ``URL/models``, ``URL/completions``).

    A URL with credentials, ``user:KEY@host`` (which httpx would send as HTTP basic authentication
    in place of the Bearer key OpenAI-compatible servers read) or a key-like query parameter
    (:func:`lmbias.credentials.looks_secret`), is refused without repeating it: the key goes in the
    environment variable ``--api-key-env`` names.

    >>> check_base_url("http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    """
    import urllib.parse

    if not isinstance(url, str):
        raise InputTypeError(f"--base-url must be a URL string, got {type(url).__name__}")
    if "@" in url or strip_credentials(url) != url:
        raise InputError("--base-url holds credentials (user:KEY@ or a key in its query string; not repeated here): give the "
                         "server's address alone (e.g. http://127.0.0.1:8000/v1) and the API key in an environment variable, "
                         "OPENAI_API_KEY or the one --api-key-env names (sent as the Bearer header OpenAI-compatible servers read)")
    expected = "expected the server's address, e.g. http://127.0.0.1:8000/v1"
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 (a port that is not a number raises ValueError)
    except ValueError:
        raise InputError(f"--base-url {url!r} is not a valid URL; {expected}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"--base-url {url!r} is not an http:// or https:// URL with a host; {expected}")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        address = url.split("?")[0].split("#")[0]  # the query is not repeated: a key may hide under another name
        raise InputError(f"--base-url {address!r} is followed by a query string or fragment (?... or #..., not repeated here), "
                         f"which requests to URL/models and URL/completions cannot keep; {expected}")
    return url


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


OPTIONS = {
    "base_url": (["--base-url"], {"metavar": "URL", "help": "openai, openai-chat: the server, e.g. http://127.0.0.1:8000/v1"}),
    "api_key_env": (["--api-key-env"], {"metavar": "NAME", "help": "openai, openai-chat: the environment variable holding the API key "
                                                                   "(default OPENAI_API_KEY; the key is never printed or written)"}),
    "tokenizer": (["--tokenizer"], {"help": "openai: the served model's tokenizer (Hub id or folder; default: --model)"}),
    "concurrency": (["--concurrency"], {"type": int, "help": "openai, openai-chat: requests in flight at once (default 8)"}),
    "timeout": (["--timeout"], {"type": float, "metavar": "SECONDS",
                                "help": "openai, openai-chat: seconds to wait for each answer (default 120; the check of the server at "
                                        "the start waits at most 30); a request with no answer in time is sent once "
                                        "more, then the run stops with the finished batches kept: at most twice this "
                                        "per request"}),
}


def check(spec) -> None:
    """A model name, ``--base-url``, no local placement or dtype, and a server that serves the model."""
    if spec.dtype not in (None, "auto"):
        raise InputError(f"--dtype {spec.dtype} applies to --backend hf and vllm; a served model runs in the dtype the "
                         "server chose")
    if spec.model is None:
        raise InputError(f"--backend {spec.backend} needs --model: the name the server serves the model under")
    if spec.revision is not None:
        raise InputError("--revision applies to a model loaded from the Hub; a served model is the server's")
    if spec.device_map:
        raise InputError("--device-map is for --backend hf; the server places the model itself")
    given = spec.options
    if not given.get("base_url"):
        raise InputError(f"--backend {spec.backend} needs --base-url, e.g. http://127.0.0.1:8000/v1")
    if given.get("concurrency") is not None:
        check_scalar(given["concurrency"], "--concurrency", minimum=1)
    if given.get("timeout") is not None:
        check_real(given["timeout"], "timeout")
    check_served(given["base_url"], spec.model, api_key_env=given.get("api_key_env") or "OPENAI_API_KEY",
                 timeout=given.get("timeout") or DEFAULT_TIMEOUT)
    if spec.chat and spec.backend == "openai" and isinstance(_tokenizer(given.get("tokenizer") or spec.model), _CharacterCounter):
        raise InputError("--chat with --backend openai renders the chat template here, with the served model's tokenizer: "
                         "pass --tokenizer (a Hub id or folder), or use --backend openai-chat (the server applies it)")


def scoring_kind(spec, model_type: str) -> str:
    """Causal LMs only, with the served model's tokenizer (scores are per token)."""
    kind = causal_only(spec, model_type)
    check_tokenizer(spec.options.get("tokenizer") or spec.model)
    return kind


def load(spec, state: Any, *, seed: int = 0, kind: str = "causal") -> OpenAIModel:
    """:func:`connect` to the spec's server and model."""
    return connect(model=spec.model, seed=seed, **spec.options)


BACKEND = Backend(
    name="openai", description="an OpenAI-compatible server's /v1/completions (--base-url)", check=check, load=load,
    options=OPTIONS, scoring_kind=scoring_kind, neutral_options=("timeout", "concurrency", "api_key_env"),
)
