"""Inference backends behind one protocol, found through the ``lmbias.backends`` entry points.

A backend is a :class:`Backend`: its name, its own command-line options, a check of a
:class:`~lmbias.lm.spec.ModelSpec` and a loader. What its loader returns has what the runner and
the scorers use (:class:`BackendModel`): ``tokenizer`` (prompt lengths), ``max_length`` (the
context), ``name`` / ``source`` / ``info`` (recorded in results.json), ``device`` (None when the
model runs outside this process), ``chat`` (a :class:`~lmbias.lm.chat.ChatFormat` in a chat run, else
None: set after loading; generation encodes prompts with :func:`lmbias.lm.chat.encode_prompts`),
``generate(prompts, settings, *, seed, num_return_sequences, ids)`` returning, per prompt and
sample, ``continuation``, ``num_tokens`` and ``stop_reason``, and, for a model scored outside this
process, ``prompt_logprobs(sequences)``: per token-id sequence, each token's log-probability given
the ones before it (:mod:`lmbias.lm.likelihood` runs a forward pass itself when a model has none;
a backend whose method also takes ``scored_from``, the first token read per sequence, may leave the
entries before it NaN, as vLLM's prefix cache does).

The built-in backends (``setup.cfg`` declares them like any other package's):

* ``hf`` (:mod:`.hf`): transformers in this process, on one device, split over several
  (``--device-map``), or one copy per process (``--num-processes``).
* ``vllm`` (:mod:`.vllm`): vLLM's engine, continuous batching with its own tensor / pipeline /
  data parallelism.
* ``openai`` (:mod:`.openai`): any OpenAI-compatible server's ``/v1/completions``.
* ``openai-chat`` (:mod:`.openai_chat`): a server's ``/v1/chat/completions`` (chat runs, generation only).

``docs/adding-a-backend.md`` walks through a new one. No code outside a backend's own module asks
which backend it is: it asks the :class:`Backend` what it does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ...checks import check_scalar
from ...errors import InputError, LmbiasError
from ...plugins import Registry

if TYPE_CHECKING:
    from ..spec import ModelSpec

DEFAULT_BACKEND = "hf"


class NoLogprobs(LmbiasError):
    """A model asked for next-token log-probabilities (a grader's, :mod:`lmbias.protocols.judge`) returned none: a
    server that does not honour ``logprobs``. A backend model that can give them has ``next_token_logprobs(sequences,
    token_ids)`` (every token: exact) or ``top_logprobs(prompts, ids, k)`` (a server's top ``k``)."""


class BackendModel(Protocol):
    """What a backend's loader returns (see the module docstring)."""

    name: str
    source: str
    info: dict
    tokenizer: Any
    max_length: int | None
    device: Any

    chat: Any  # how prompts are put to it (lmbias.lm.chat.ChatFormat; None: raw text), set by ModelSpec.load

    def generate(self, prompts: Sequence[str], settings: dict, *, seed: int, num_return_sequences: int = 1,
                 ids: Sequence[str] | None = None) -> list[dict]: ...


@dataclass(frozen=True)
class Backend:
    """One inference backend.

    Attributes:
        name: ``--backend NAME``.
        description: one line for ``--backend``'s help.
        check: ``check(spec)``: raises an :class:`~lmbias.errors.InputError` naming the option for
            anything this backend cannot do with ``spec`` (its options' values, ``--device-map``, a
            model it cannot reach), before anything is written; the generic checks (an option of
            another backend, an unknown one) are :meth:`ModelSpec.checked`'s.
        load: ``load(spec, state, *, seed, kind)``: the model (:class:`BackendModel`) for this
            process (``state``: accelerate's ``PartialState``); ``kind`` is "causal" or "masked".
        options: its own options, name -> (flags, argparse settings), added to every ``lmbias run``
            parser that takes ``--backend``.
        neutral_options: those of its options that change none of a run's numbers (a timeout, a
            cache size): a resumed run may change them and they do not name a run's default folder.
        unrecorded_options: those never written to results (a log switch).
        scoring_kind: ``scoring_kind(spec, model_type)``: "causal" or "masked" for a likelihood run
            with ``--model-type model_type`` ("auto", "causal" or "masked"), or an InputError when
            this backend cannot score that kind (default: :func:`causal_only`).
        own_workers: it runs its own workers, so an lmbias run is one process (``--num-processes``
            is refused).
        recorded: whether results name the backend and its options (False for the default backend,
            which runs written before there were backends do not name).
        chat: how it runs a chat model (:mod:`lmbias.lm.chat`): "template" (lmbias renders the
            prompts in the model's chat template, ``--chat``), "server" (the server does: every run
            is a chat run), or None (it cannot).
    """

    name: str
    description: str
    check: Callable[[ModelSpec], None]
    load: Callable[..., BackendModel]
    options: Mapping[str, tuple] = field(default_factory=dict)
    neutral_options: tuple = ()
    unrecorded_options: tuple = ()
    scoring_kind: Callable[[ModelSpec, str], str] = None  # type: ignore[assignment]  # set in __post_init__
    own_workers: bool = True
    recorded: bool = True
    chat: str | None = "template"

    def __post_init__(self):
        if self.scoring_kind is None:
            object.__setattr__(self, "scoring_kind", causal_only)


REGISTRY = Registry("lmbias.backends", Backend, "backend")


def register(backend: Backend) -> Backend:
    """Add ``backend`` to the registry (replacing one of the same name) and return it."""
    return REGISTRY.register(backend)


def names() -> list:
    """The registered backends' names (``--backend`` choices), in registration order."""
    return REGISTRY.names()


def get_backend(name: str) -> Backend:
    """The backend called ``name``; an :class:`~lmbias.errors.UnknownNameError` lists the valid names."""
    return REGISTRY.get(name)


def backend_options() -> dict:
    """Every registered backend's own options, name -> (flags, argparse settings), the first
    declaration of a name winning (backends may share an option, e.g. a server's ``base_url``)."""
    options: dict = {}
    for backend in REGISTRY.values():
        for key, value in backend.options.items():
            options.setdefault(key, value)
    return options


def owners(option: str) -> list:
    """The backends that take ``option``."""
    return [backend.name for backend in REGISTRY.values() if option in backend.options]


def neutral_options() -> set:
    """Every backend option that changes no number (:attr:`Backend.neutral_options`)."""
    return {key for backend in REGISTRY.values() for key in backend.neutral_options}


def causal_only(spec: ModelSpec, model_type: str) -> str:
    """The :attr:`Backend.scoring_kind` of a backend that scores causal LMs only."""
    if model_type == "masked":
        raise InputError(f"--backend {spec.backend} scores causal LMs only; masked-LM scoring (pseudo-log-likelihood, "
                         "next-sentence prediction) needs --backend hf")
    return "causal"


def flag(key: str) -> str:
    """The command-line spelling of option ``key`` (``max_model_len`` -> ``--max-model-len``)."""
    return f"--{key.replace('_', '-')}"


def check_real(value, key: str, maximum: float | None = None) -> float:
    """``value`` of the number option ``key`` if it is finite and above 0 (and at most ``maximum``);
    else a one-line error naming the option."""
    wanted = f"a finite number above 0{f' and at most {maximum:g}' if maximum else ''}"
    check_scalar(value, flag(key), maximum=maximum, integer=False, expected=wanted)
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{flag(key)} must be {wanted}, got {value!r}")
    return value


def check_flag(value, key: str) -> bool:
    """``value`` of the on/off option ``key`` if it is a bool; else a one-line error."""
    if not isinstance(value, bool):
        raise InputError(f"{key} must be True or False, got {value!r}")
    return value


__all__ = ["Backend", "BackendModel", "DEFAULT_BACKEND", "NoLogprobs", "REGISTRY", "backend_options", "causal_only", "check_flag",
           "check_real", "flag", "get_backend", "names", "neutral_options", "owners", "register"]
