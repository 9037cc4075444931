"""The chat-completions backend (``--backend openai-chat``): generation through an OpenAI-compatible
server's ``/v1/chat/completions``, for models reachable only as chat (hosted APIs, ``vllm serve`` of a
chat model).

Every run is a chat run: each prompt is sent as the user's message (after ``--system-prompt``, when
given) and the server applies the model's chat template, so the template is recorded as
``"server"``. Requests, seeds, concurrency, retries, timeouts, resume and the API key are the
``openai`` backend's (:mod:`.openai`). A chat endpoint returns no prompt log-probabilities: the
likelihood benchmarks run with ``--protocol generate`` (generative multiple choice) on it.
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from . import Backend
from .openai import OPTIONS, OpenAIModel, check, completion_body, connect

NO_LOGPROBS = ("--backend openai-chat returns no log-probabilities (a chat endpoint scores no given text): run the "
               "benchmark with --protocol generate (lettered options, the answer generated), or serve the model's "
               "/v1/completions and use --backend openai")


class OpenAIChatModel(OpenAIModel):
    """A model behind a server's ``/v1/chat/completions``, with the backend interface (generation only)."""

    endpoint = "/chat/completions"
    backend = "openai-chat"
    counts_tokens = False  # the server renders the template: prompts are batched by their length in characters

    def _prompts(self, prompts, ids) -> list:
        return list(prompts)  # sent as messages: the server applies the template

    def _body(self, prompt, settings: dict, *, seed: int) -> dict:
        """One sample's request: the completions request's settings with the messages in place of a prompt."""
        return completion_body(self.name, settings, seed=seed, messages=self.chat.messages(prompt))

    def _text(self, choice: dict, answer: dict) -> str:
        """The reply of an answer's first choice (a null content, as a refusal may give, is an empty reply)."""
        message = choice.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), (str, type(None))):
            raise self._bad_field("choices[0].message.content", answer)
        return message["content"] or ""

    def prompt_logprobs(self, sequences) -> list:
        """Not available on a chat endpoint (:data:`NO_LOGPROBS`)."""
        raise InputError(NO_LOGPROBS)


def scoring_kind(spec, model_type: str) -> str:
    """A chat endpoint scores nothing: :data:`NO_LOGPROBS`."""
    raise InputError(NO_LOGPROBS)


def load(spec, state: Any, *, seed: int = 0, kind: str = "causal") -> OpenAIChatModel:
    """The spec's server and model (:func:`lmbias.lm.backends.openai.connect`, which checks that the
    server serves it); prompts are batched by their length in characters (the server checks the context)."""
    return connect(model=spec.model, seed=seed, model_class=OpenAIChatModel, **spec.options)


BACKEND = Backend(
    name="openai-chat", description="an OpenAI-compatible server's /v1/chat/completions (--base-url; a chat run, "
                                    "generation only)",
    check=check, load=load, options={key: OPTIONS[key] for key in ("base_url", "api_key_env", "concurrency", "timeout")},
    scoring_kind=scoring_kind, neutral_options=("timeout", "concurrency", "api_key_env"), chat="server",
)
