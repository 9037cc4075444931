"""Which model a run uses and where it runs: one :class:`ModelSpec`, built once from the options,
checked once (:meth:`ModelSpec.checked`), and passed as one object to the run functions.

>>> spec = ModelSpec("gpt2", dtype="float32")
>>> spec.backend, spec.recorded(), spec.identity()
('hf', {}, {})
>>> ModelSpec.of(None).model is None
True
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..checks import check_choice
from ..credentials import without_credentials
from ..errors import InputError, InputTypeError
from ..model_source import looks_like_path
from .adjustments import check_backend_can_apply
from .backends import DEFAULT_BACKEND, Backend, backend_options, flag, get_backend, owners
from .chat import ChatFormat, template_digest
from .placement import check_device, parse_max_memory, placement

DTYPES = ("auto", "float32", "float16", "bfloat16")
MAX_NAME_LENGTH = 120
EMBEDDED_ID = "embedded:smollm2-135m-instruct"  # how configurations name the embedded default model


@dataclass(frozen=True)
class ModelSpec:
    """A model and where it runs.

    Attributes:
        model: a Hub id, a local folder, a ``.gguf`` file, a served model's name (``openai``), or None
            for the embedded default.
        revision: a Hub commit, branch or tag (a Hub id only; None: the default branch).
        dtype: "auto", "float32", "float16" or "bfloat16" (None: float32 on a CPU, the checkpoint's
            on a GPU).
        device: "cpu", "cuda", "cuda:1" ... (None: each process's GPU, else the CPU).
        device_map, max_memory: split the model over this machine's devices (accelerate;
            ``max_memory`` as ``{0: "70GiB", "cpu": "200GiB"}`` or ``--max-memory``'s strings).
        backend: a registered backend's name (:mod:`lmbias.lm.backends`).
        options: that backend's own options (``{"enforce_eager": True}``, ``{"base_url": ...}``).
        chat: put each prompt to the model in its chat template (:mod:`lmbias.lm.chat`); always so on
            a backend whose server applies the template (``openai-chat``).
        system_prompt: a chat run's system message (None: none, so the template's default applies).
        display_name: the name results, summaries, reports, the leaderboard and the Hub card show
            (``--name``; None: :meth:`shown_name` derives one). Not part of the run's identity.
    """

    model: str | None = None
    revision: str | None = None
    dtype: str | None = None
    device: str | None = None
    device_map: str | None = None
    max_memory: Any = None
    backend: str = DEFAULT_BACKEND
    options: Mapping[str, Any] = field(default_factory=dict)
    chat: bool = False
    system_prompt: str | None = None
    display_name: str | None = None

    @classmethod
    def of(cls, model: ModelSpec | str | None) -> ModelSpec:
        """``model`` if it is a spec, else the spec of that model with every other setting at its default."""
        if isinstance(model, ModelSpec):
            return model
        if model is not None and not isinstance(model, str):
            raise InputTypeError(f"model must be a ModelSpec, a model name or path, or None, got {type(model).__name__}")
        return cls(model)

    @classmethod
    def from_options(cls, options: Any) -> ModelSpec:
        """The spec of parsed command-line options (an ``argparse.Namespace``; absent ones take their
        defaults), not yet checked."""
        return cls(model=getattr(options, "model", None), revision=getattr(options, "revision", None),
                   dtype=getattr(options, "dtype", None), device=getattr(options, "device", None),
                   device_map=getattr(options, "device_map", None), max_memory=getattr(options, "max_memory", None),
                   backend=getattr(options, "backend", None) or DEFAULT_BACKEND,
                   options={key: getattr(options, key, None) for key in backend_options()},
                   chat=bool(getattr(options, "chat", False)), system_prompt=getattr(options, "system_prompt", None),
                   display_name=getattr(options, "name", None))

    @property
    def engine(self) -> Backend:
        """The :class:`~lmbias.lm.backends.Backend` this spec runs on."""
        return get_backend(self.backend)

    @property
    def name(self) -> str:
        """The model as configurations name it (the embedded default as :data:`EMBEDDED_ID`)."""
        return self.model if self.model is not None else EMBEDDED_ID

    def shown_name(self) -> str:
        """The model's display name: ``display_name`` when given, else the Hub id (or a served model's
        name), a local folder's or file's last component (never a full path), or the embedded default's
        name.

        >>> ModelSpec("/data/models/my-llama").shown_name(), ModelSpec("gpt2", display_name="GPT-2 base").shown_name()
        ('my-llama', 'GPT-2 base')
        """
        if self.display_name is not None:
            return self.display_name
        return display_name_of(self.model)

    def checked(self) -> ModelSpec:
        """This spec with ``max_memory`` parsed and the options that were not given dropped, once every
        setting is checked (before anything is written or loaded): the backend and each option
        (one of another backend, or unknown, is refused), the dtype, the device and placement, the
        revision, and what the backend itself checks (its options' values, the model or server).

        Raises:
            InputError: one line naming the option and what was expected.
        """
        backend = self.engine
        if self.model is not None and not isinstance(self.model, str):
            raise InputTypeError(f"--model must be a model name or path, got {type(self.model).__name__}")
        if self.dtype is not None:
            check_choice(self.dtype, DTYPES, "dtype")
        if not isinstance(self.options or {}, Mapping):
            raise InputTypeError(f"options must be a dict of the backend's options, got {type(self.options).__name__}")
        given = {key: value for key, value in dict(self.options or {}).items() if value is not None}
        known = backend_options()
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise InputError(f"backend options {unknown} are unknown; valid: {list(known)}")
        for key in given:
            if key not in backend.options:
                raise InputError(f"{flag(key)} applies to --backend {', '.join(owners(key))}, not {self.backend}")
        if self.revision is not None and (not isinstance(self.revision, str) or not self.revision.strip()):
            raise InputError(f"--revision must be a Hub commit, branch or tag, got {self.revision!r}")
        check_display_name(self.display_name)
        memory = self.max_memory
        if isinstance(memory, Mapping):  # {0: "70GiB"}: checked as --max-memory's DEVICE=SIZE entries
            memory = [f"{device}={size}" for device, size in memory.items()]
        elif memory is not None and (isinstance(memory, (str, bytes)) or not hasattr(memory, "__iter__")):
            raise InputTypeError(f"max_memory must be a dict (device -> size) or DEVICE=SIZE strings, got {type(memory).__name__}")
        max_memory = parse_max_memory(memory)
        placement(check_device(self.device), self.device_map, max_memory)
        spec = replace(self, max_memory=max_memory, options=given, chat=self._checked_chat(backend))
        check_backend_can_apply(self.model, self.backend, self.revision)
        backend.check(spec)  # a backend that takes no revision says so first (a served model's name may look like a path)
        if self.revision is not None and (self.model is None or looks_like_path(self.model)):
            raise InputError(f"--revision applies to a Hub id, not {'the embedded default' if self.model is None else 'a local path'}")
        return spec

    def _checked_chat(self, backend: Backend) -> bool:
        """Whether the run is a chat run: ``--chat``, or a backend whose server applies the template;
        ``--system-prompt`` needs one, and a backend that cannot apply a template refuses ``--chat``."""
        if not isinstance(self.chat, bool):
            raise InputTypeError(f"chat must be True or False, got {self.chat!r}")
        chat = self.chat or backend.chat == "server"
        if chat and backend.chat is None:
            raise InputError(f"--chat applies to a backend that applies chat templates, not --backend {self.backend}")
        if self.system_prompt is not None:
            if not isinstance(self.system_prompt, str):
                raise InputTypeError(f"--system-prompt must be a string, got {type(self.system_prompt).__name__}")
            if not chat:
                raise InputError("--system-prompt applies to chat runs: add --chat (or use --backend openai-chat)")
        return chat

    def chat_format(self, tokenizer: Any) -> ChatFormat | None:
        """How prompts are put to this spec's model (None: raw text); ``tokenizer`` is the loaded
        model's, whose chat template must exist when lmbias applies it (a one-line error otherwise)."""
        if not self.chat:
            return None
        if self.engine.chat == "server":
            return ChatFormat(self.system_prompt)
        return ChatFormat(self.system_prompt, template_digest(tokenizer, self.name))

    def prompting(self) -> dict:
        """What identifies the prompt format of a run: ``{"chat": True, "system_prompt": ...}`` for a
        chat run, {} for a raw one (the template's digest is known once the model has loaded:
        :func:`lmbias.lm.chat.loaded_identity`)."""
        return {"chat": True, "system_prompt": self.system_prompt} if self.chat else {}

    def scoring_kind(self, model_type: str) -> str:
        """"causal" or "masked": what a likelihood run with ``--model-type model_type`` scores on this
        backend (an InputError when the backend cannot score it)."""
        return self.engine.scoring_kind(self, model_type)

    def load(self, state: Any, *, seed: int = 0, kind: str = "causal"):
        """The model for this process (:class:`~lmbias.lm.backends.BackendModel`); ``state``:
        accelerate's ``PartialState``."""
        if self.engine.own_workers and state.num_processes > 1:
            raise InputError(f"--backend {self.backend} runs its own workers; start one lmbias process")
        key = (json.dumps(asdict(self), sort_keys=True, default=str), kind, seed, state.process_index)
        if _shared_models is not None and key in _shared_models:
            return _shared_models[key]
        model = self.engine.load(self, state, seed=seed, kind=kind)
        model.chat = self.chat_format(model.tokenizer)
        model.display_name = self.shown_name()
        if _shared_models is not None:
            _shared_models[key] = model
        return model

    def recorded(self) -> dict:
        """What a run's results record of this spec besides the model: the revision, the placement
        over several devices, and the backend with its options (none for the default backend), URLs without
        their credentials (:func:`lmbias.credentials.strip_credentials`)."""
        backend = self.engine
        return {**({"revision": self.revision} if self.revision else {}),
                **({"device_map": self.device_map, "max_memory": self.max_memory} if self.device_map else {}),
                **({"backend": self.backend, **{key: without_credentials(value) for key, value in self.options.items()
                                                if key not in backend.unrecorded_options}} if backend.recorded else {}),
                **self.prompting()}

    def identity(self) -> dict:
        """The settings a run's ``config.json`` records and a resume compares: the revision and the
        backend with every given option that can change its numbers (URLs without their credentials)."""
        backend = self.engine
        return {**({"revision": self.revision} if self.revision else {}),
                **({"backend": self.backend, **{key: without_credentials(value) for key, value in self.options.items()
                                                if key not in backend.neutral_options + backend.unrecorded_options}}
                   if backend.recorded else {}),
                **self.prompting()}


def display_name_of(model: str | None) -> str:
    """The name a model is shown under when no ``--name`` is given: a Hub id (or a served model's
    name) as it is, a local folder's or file's last component, the embedded default's name.

    >>> display_name_of("openai-community/gpt2"), display_name_of("./checkpoints/step-1000/"), display_name_of(None)[:13]
    ('openai-community/gpt2', 'step-1000', 'SmolLM2-135M-')
    """
    from .loading import EMBEDDED_NAME

    if model is None or model.startswith("embedded:"):
        return EMBEDDED_NAME
    if looks_like_path(model):
        return Path(model.rstrip("/\\")).name or model
    return model


def check_display_name(name: str | None) -> None:
    """``--name``: None, or printable text of 1 to :data:`MAX_NAME_LENGTH` characters that is not only spaces."""
    if name is None:
        return
    if not isinstance(name, str):
        raise InputTypeError(f"--name must be a string, got {type(name).__name__}")
    if not name.strip() or not name.isprintable() or len(name) > MAX_NAME_LENGTH or name != name.strip():
        raise InputError(f"--name must be printable text of 1 to {MAX_NAME_LENGTH} characters without leading or "
                         f"trailing spaces (the model's display name), got {name[:MAX_NAME_LENGTH + 10]!r}")


_shared_models: dict | None = None


@contextmanager
def one_load_per_model() -> Iterator[dict]:
    """Within the block, :meth:`ModelSpec.load` loads each model once (per spec, kind, seed and
    process) and hands the same loaded model to every later call: several benchmarks in one
    ``lmbias run`` share one load. Yields the loaded models (one entry per load); they are let go
    when the outermost block ends."""
    global _shared_models
    outermost = _shared_models is None
    if outermost:
        _shared_models = {}
    try:
        yield _shared_models
    finally:
        if outermost:
            _shared_models = None
