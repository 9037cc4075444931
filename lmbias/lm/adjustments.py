"""What a debiased model folder asks the hf backend to apply on top of its weights.

``lmbias debias`` saves every method's result as a transformers model folder. Training methods
(the counterfactual regularisers, CDA) change the weights and need nothing here. The others record
an adjustment in the model's ``config.json`` (key ``lmbias_adjustment``), so that wherever the folder
goes (a disk, the Hub) the loader knows to apply it:

* ``projection``: an affine map of the final hidden states, ``h -> h @ matrix.T + offset`` (INLP,
  SentenceDebias, LEACE), in ``lmbias_projection.safetensors``. It is applied by a forward hook on the
  model's base (``model.base_model``) at every position, so the LM head and SEAT's sentence
  representations both read the projected states, as in bias-bench (which hooks GPT-2's transformer).
* ``self_debias``: Schick et al. 2021's decoding-time adjustment (:class:`SelfDebias`).

Only the hf backend can apply these; the others refuse such a model in one line
(:func:`check_backend_can_apply`). A folder that ``lmbias debias`` has not finished (its
``debias.json`` says "fitting" or "training") or whose saved projection is damaged is refused by every
backend, in one line, before the model loads (:func:`check_debias_folder`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import read_json

CONFIG_KEY = "lmbias_adjustment"
PROJECTION_FILE = "lmbias_projection.safetensors"
DEBIAS_STATE_FILE = "debias.json"  # what lmbias debias writes into its folder: "finished" last
KINDS = ("projection", "self_debias")
SELF_DEBIAS_ATTRIBUTE = "lmbias_self_debias"  # set on a model that Self-Debias adjusts (likelihood scores whole sequences)


def recorded_adjustment(model: str | None, revision: str | None = None) -> dict | None:
    """The adjustment a model's ``config.json`` records, read without loading the model (a local
    folder, or the Hub cache for a Hub id); None when it records none or the config is not at hand."""
    if model is None:
        return None
    path = Path(model).expanduser()
    config = path / "config.json" if path.is_dir() else None
    if config is None:
        from huggingface_hub import try_to_load_from_cache

        try:
            cached = try_to_load_from_cache(str(model), "config.json", revision=revision)
        except ValueError:  # not a repository id
            return None
        config = Path(cached) if isinstance(cached, str) else None
    if config is None or not config.is_file():
        return None
    try:
        return json.loads(config.read_text(encoding="utf-8")).get(CONFIG_KEY)
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        return None  # the loader reports a broken config with its own message


def check_debias_folder(model) -> None:
    """Refuse, in one line, a local folder that cannot be run as the model ``lmbias debias`` saves:
    one whose ``debias.json`` does not say "finished" (an interrupted or running fit or training: the
    message says how to finish or remove it), and one whose recorded projection is missing or damaged
    (:func:`read_projection`). Anything else (a Hub id, a plain model folder) passes unread."""
    path = Path(model).expanduser() if model is not None else None
    if path is None or not path.is_dir():
        return
    state_path = path / DEBIAS_STATE_FILE
    if state_path.is_file():
        state = read_json(state_path, fix="it is not a finished lmbias debias model; remove the folder")
        status = state.get("status") if isinstance(state, dict) else None
        if status != "finished":
            settings = state.get("settings") if isinstance(state, dict) and isinstance(state.get("settings"), dict) else {}
            how = "it resumes from its last checkpoint" if status == "training" else "it fits again from the start"
            raise InputError(f"--model {model} is an unfinished lmbias debias run ({state_path} says status {status!r}, not "
                             f"'finished'): finish it by running its lmbias debias command again (--method "
                             f"{settings.get('method', '...')} ... --out {model}; {how}), or remove the folder")
    config = path / "config.json"
    if (recorded_adjustment(str(path)) or {}).get("kind") == "projection":
        try:
            values = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            values = {}
        hidden = next((values[key] for key in ("hidden_size", "n_embd", "d_model") if isinstance(values.get(key), int)), None)
        read_projection(path / PROJECTION_FILE, hidden)


def read_projection(path, hidden: int | None = None) -> dict:
    """The tensors of a saved projection (``matrix``: d x d, ``offset``: d), checked: a file that is
    missing, cut short or not safetensors, a tensor missing, of the wrong shape (d is ``hidden`` when
    given) or not finite (NaN, inf) is one :class:`~lmbias.errors.InputError` naming the file."""
    from safetensors.torch import load_file

    path = Path(path)
    fix = "the folder is damaged: copy it again from where it was made, or fit it again with lmbias debias"
    if not path.is_file():
        raise InputError(f"{path} is missing: config.json records a projection ({CONFIG_KEY}) but the file is not there; {fix}")
    try:
        tensors = load_file(str(path))
    except Exception as error:  # safetensors' own error (a Rust SafetensorError) or an OSError: the file is unreadable
        why = str(error).splitlines()[0][:120] if str(error) else type(error).__name__
        raise InputError(f"{path} cannot be read as safetensors ({why}); {fix}") from None
    matrix, offset = tensors.get("matrix"), tensors.get("offset")
    if matrix is None or offset is None:
        raise InputError(f"{path} holds {sorted(tensors)}, not the tensors 'matrix' and 'offset' of a projection; {fix}")
    size = hidden if hidden is not None else offset.shape[0] if offset.dim() == 1 else None
    if size is None or tuple(matrix.shape) != (size, size) or tuple(offset.shape) != (size,):
        expected = f"{size} x {size} and {size}" if size is not None else "d x d and d"
        raise InputError(f"{path}: the projection is {tuple(matrix.shape)} + {tuple(offset.shape)}, expected {expected}"
                         f"{' (the model' + chr(39) + 's hidden size)' if hidden is not None else ''}; {fix}")
    bad = int((~matrix.isfinite()).sum() + (~offset.isfinite()).sum())
    if bad:
        raise InputError(f"{path}: {bad:,} of the projection's {matrix.numel() + offset.numel():,} values are not finite "
                         f"(NaN or inf); {fix}")
    return tensors


def check_backend_can_apply(model: str | None, backend: str, revision: str | None = None) -> None:
    """Refuse, in one line, a model folder that cannot be run as saved (:func:`check_debias_folder`) and
    a model whose adjustment ``backend`` (not hf) cannot apply."""
    check_debias_folder(model)
    adjustment = recorded_adjustment(model, revision)
    if adjustment is not None and backend != "hf":
        raise InputError(f"--model {model} is debiased by {adjustment.get('method')} ({adjustment.get('kind')}), which only "
                         f"--backend hf applies; --backend {backend} would run the model without it")


def adjustment_record(method: str, kind: str, settings: dict) -> dict:
    """The ``config.json`` entry of an adjustment (``kind``: "projection" or "self_debias")."""
    if kind not in KINDS:
        raise InputError(f"adjustment kind {kind!r} is not one of {list(KINDS)}")
    return {"method": method, "kind": kind, "settings": settings}


def save_projection(folder: Path, matrix: Any, offset: Any) -> None:
    """Write the affine map ``h -> h @ matrix.T + offset`` beside a saved model."""
    from safetensors.torch import save_file

    save_file({"matrix": matrix.float().contiguous(), "offset": offset.float().contiguous()}, str(Path(folder) / PROJECTION_FILE))


def apply_adjustment(model: Any, tokenizer: Any, source, **hub) -> Any:
    """Apply the adjustment ``model.config`` records (if any) to the loaded ``model`` in place and
    return it. ``source`` is the folder or Hub id it was loaded from (``hub``: revision, token ...),
    where a projection's tensors are."""
    record = getattr(model.config, CONFIG_KEY, None)
    if not record:
        return model
    kind = record.get("kind") if isinstance(record, dict) else None
    if kind == "projection":
        return _apply_projection(model, _projection_path(source, hub))
    if kind == "self_debias":
        SelfDebias(model, tokenizer, **record["settings"]).attach()
        return model
    raise InputError(f"{source}: config.json's {CONFIG_KEY} is {record!r}; expected a kind among {list(KINDS)} "
                     "(was the folder written by a newer lmbias?)")


def _projection_path(source, hub: dict) -> Path:
    """The projection file beside a local folder, or downloaded from the Hub with the model."""
    path = Path(source).expanduser() / PROJECTION_FILE
    if not path.is_file():
        from huggingface_hub import hf_hub_download

        try:
            path = Path(hf_hub_download(str(source), PROJECTION_FILE, **{k: v for k, v in hub.items() if k in ("revision", "token")}))
        except Exception as error:  # any failure means the model cannot be used as saved
            raise InputError(f"{source}: config.json records a projection but {PROJECTION_FILE} cannot be read "
                             f"({type(error).__name__}); copy the whole folder") from None
    return path


def _apply_projection(model: Any, path: Path) -> Any:
    """A forward hook on ``model.base_model`` mapping its ``last_hidden_state`` (the projection read from ``path``)."""
    base = model.base_model
    tensors = read_projection(path, getattr(base.config, "hidden_size", None))
    matrix, offset = tensors["matrix"], tensors["offset"]

    def project(module, args, output):
        states = output.last_hidden_state
        output.last_hidden_state = (states.float() @ matrix.to(states.device).T + offset.to(states.device)).to(states.dtype)
        return output

    base.register_forward_hook(project)
    return model


class SelfDebias:
    """Self-Debias (Schick, Udupa & Schütze 2021, TACL): the model is also run with a prefix that
    describes the unwanted text ("The following text discriminates against people because of their
    gender: "); each token's probability is multiplied by ``alpha = max(exp(-decay_constant * delta),
    epsilon)``, ``delta = max(0, p_prefixed - p)`` (the largest over the prefixes), and renormalised.
    This is the authors' ``SelfDebiasingLogitsProcessor`` as bias-bench uses it (decay 50, epsilon 0.01).

    :meth:`attach` makes both uses of the model apply it:
    * scoring: every forward pass of the model without a cache (what the likelihood benchmarks run)
      returns the debiased log-probabilities as its logits, position by position;
    * generation: ``model.generate`` gets a logits processor that runs the prefixed text at each step
      (placed before temperature / top-k / top-p, as in the authors' code). The prefixed pass keeps
      no cache, so generating costs about (1 + prefixes) x the sequence length in forward passes.
    """

    def __init__(self, model: Any, tokenizer: Any, *, prefixes: list, decay_constant: float = 50.0, epsilon: float = 0.01):
        import torch

        self.model, self.decay_constant, self.epsilon = model, float(decay_constant), float(epsilon)
        self.prefixes = [torch.tensor(tokenizer(p, add_special_tokens=False)["input_ids"], dtype=torch.long) for p in prefixes]
        if not self.prefixes or any(len(p) == 0 for p in self.prefixes):
            raise InputError(f"self_debias needs non-empty prefixes; got {prefixes!r}")
        self._inside = False

    def attach(self) -> None:
        """Hook the model's forward pass (scoring) and wrap its ``generate`` (generation)."""
        from transformers import LogitsProcessorList

        self.model.register_forward_hook(self._scoring_hook, with_kwargs=True)
        setattr(self.model, SELF_DEBIAS_ATTRIBUTE, self)
        plain_generate = self.model.generate

        def generate(*args, **kwargs):
            processors = LogitsProcessorList(kwargs.pop("logits_processor", None) or [])
            processors.append(_Processor(self, kwargs.get("attention_mask")))
            self._inside = True  # the processor does the work; the hook must not adjust the cached passes
            try:
                return plain_generate(*args, logits_processor=processors, **kwargs)
            finally:
                self._inside = False

        self.model.generate = generate

    def debiased_logprobs(self, logits: Any, prefixed: list) -> Any:
        """log of the adjusted distribution, from the plain ``logits`` and each prefix's (same shape)."""
        import torch

        p = logits.float().softmax(-1)
        biased = torch.stack([q.float().softmax(-1) for q in prefixed]).amax(0)
        alpha = torch.exp(-(biased - p).clamp(min=0) * self.decay_constant).clamp(min=self.epsilon)
        adjusted = p * alpha
        return (adjusted / adjusted.sum(-1, keepdim=True)).log()

    def prefixed_logits(self, input_ids: Any, attention_mask: Any) -> list:
        """The model's logits on each prefix followed by ``input_ids`` (padded either side), at the
        positions of ``input_ids``."""
        import torch

        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        found, was_inside = [], self._inside
        self._inside = True
        try:
            for prefix in self.prefixes:
                size = len(prefix)
                ids = torch.cat([prefix.to(input_ids.device).expand(input_ids.shape[0], size), input_ids], dim=1)
                mask = torch.cat([torch.ones_like(ids[:, :size]), attention_mask], dim=1)
                positions = (mask.cumsum(-1) - 1).clamp(min=0)
                found.append(self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False).logits[:, size:])
        finally:
            self._inside = was_inside
        return found

    def _scoring_hook(self, module, args, kwargs, output):
        if self._inside:
            return output
        input_ids = kwargs.get("input_ids", args[0] if args else None)
        if input_ids is None or kwargs.get("past_key_values") is not None:
            raise InputError("a self-debiased model scores token ids without a cache (input_ids, no past_key_values)")
        output.logits = self.debiased_logprobs(output.logits, self.prefixed_logits(input_ids, kwargs.get("attention_mask")))
        return output


class _Processor:
    """The generation side of :class:`SelfDebias`: the next-token scores of each sequence so far."""

    def __init__(self, owner: SelfDebias, attention_mask: Any):
        self.owner, self.attention_mask = owner, attention_mask

    def __call__(self, input_ids, scores):
        import torch

        mask = torch.ones_like(input_ids)
        prompt = self.attention_mask
        if prompt is not None:  # the prompt's padding (one row per sequence: generate repeats each prompt); new tokens all count
            prompt = prompt.repeat_interleave(input_ids.shape[0] // prompt.shape[0], dim=0)
            mask[:, : prompt.shape[1]] = prompt
        prefixed = [logits[:, -1] for logits in self.owner.prefixed_logits(input_ids, mask)]
        return self.owner.debiased_logprobs(scores, prefixed).to(scores.dtype)
