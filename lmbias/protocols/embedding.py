"""The embed protocol: each item's texts represented by the model's hidden states (SEAT).

A benchmark's request is an :class:`Embeddings`: the texts of each item and how a text becomes a vector
(:func:`lmbias.lm.representations.mean_hidden_states`: the base model's last hidden state averaged over
the text's tokens, by default divided by its L2 norm). :func:`answer` checks the model and the run
folder before anything loads (:func:`lmbias.lm.runner.check_run_dir`: a folder holding another
benchmark's run, or a run with other settings, is refused), loads the model, claims the folder
(``config.json``) and encodes every distinct text of the run once, in batches; each item's record holds
its texts' vectors in its order. Encoding takes seconds to minutes, so a run does not resume part-way:
rerun, it encodes again, and it writes no per-item file (the vectors are the measure's input, not a
result).

Only the ``hf`` backend gives hidden states (transformers in this process); a chat template has no place
in a text's representation, and a self-debiased model changes what it generates, not its hidden states:
:func:`refuse_model` refuses these before the model is checked or loaded.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, InputTypeError
from ..lm.spec import ModelSpec


@dataclass(frozen=True)
class Embeddings:
    """A benchmark's embed request.

    Attributes:
        texts: each item's texts, in the items' order (a text may recur within and across items: it is
            encoded once).
        model_type: ``--model-type`` ("auto": from the config's architectures; "causal", "masked").
        kinds: the model kinds the benchmark embeds with.
        normalize: whether each vector is divided by its L2 norm.
    """

    texts: Sequence[Sequence[str]]
    model_type: str = "auto"
    kinds: tuple = ("causal", "masked")
    normalize: bool = True

    def distinct(self) -> list[str]:
        """Every text of every item once, in first-occurrence order: what a run encodes."""
        return list(dict.fromkeys(text for texts in self.texts for text in texts))


def refuse_model(spec: ModelSpec, benchmark: str) -> None:
    """A one-line error for a model the embed protocol cannot read hidden states from, before it is checked
    or loaded (``benchmark``: the name the message gives): another backend than ``hf``, a chat run, a
    self-debiased model (it would measure the model it was made from)."""
    from ..lm.adjustments import recorded_adjustment
    from ..lm.backends import DEFAULT_BACKEND

    if spec.backend != DEFAULT_BACKEND:
        raise InputError(f"--backend {spec.backend}: {benchmark} embeds texts with the model's hidden states, which only "
                         f"--backend {DEFAULT_BACKEND} (transformers in this process) gives")
    if spec.chat:
        raise InputError(f"--chat: {benchmark} embeds the raw sentences; a chat template has no place in it")
    if (recorded_adjustment(spec.model, spec.revision) or {}).get("kind") == "self_debias":
        raise InputError(f"--model {spec.model} is self-debiased, which changes what it generates and scores, not its hidden "
                         f"states: {benchmark} would measure the model it was made from (run {benchmark} on that one)")


def answer(spec: ModelSpec, rows: list[dict], request: Embeddings, *, out, benchmark: str, run_config: dict, batch_size: int,
           seed: int, progress: bool, label: str, check_only: bool = False) -> tuple:
    """Encode ``request``'s texts of ``rows`` in run directory ``out``: the run's identity (``config.json``,
    which a rerun compares) is the model, ``--model-type``, the dtype, ``run_config``, ``batch_size`` (texts per
    forward pass: padding changes the last bits) and the backend's settings; ``seed`` seeds the model's loading.

    Returns:
        ``(records, model, placement, timing)``: one record per row (``id``, ``embeddings``: a float32 array, one
        row per text of the item in its order), the model's description (with its kind), where it ran and the
        timing (``encoding_seconds``, ``texts_encoded``); all None on processes other than the main one.

    Raises:
        InputError: ``request.texts`` does not give each row its texts; a model kind the benchmark does not
            embed with; a text with no tokens or longer than the model's context.
    """
    from .. import progress as bars
    from ..lm.processes import process_state
    from ..lm.representations import mean_hidden_states
    from ..lm.runner import check_run_dir, claim_run_dir
    from ..run_result import model_description

    if not isinstance(request, Embeddings):
        raise InputTypeError(f"request must be an Embeddings, got {type(request).__name__}")
    if len(request.texts) != len(rows):
        raise InputError(f"request.texts has {len(request.texts)} items' texts for {len(rows)} rows; expected one list per row")
    state = process_state()
    spec = spec.checked()
    kind = spec.scoring_kind(request.model_type)
    if kind not in request.kinds:
        raise InputError(f"{benchmark} embeds with {' and '.join(request.kinds)} LMs; {spec.name} is a {kind} LM "
                         f"(--model-type {request.model_type})")
    config = {"model": spec.model, "model_type": request.model_type, "dtype": spec.dtype, **run_config, "batch_size": batch_size,
              **spec.identity()}
    check_run_dir(Path(out), config, state, benchmark)
    if check_only:  # every check made, nothing loaded or written
        return None, None, None, None
    lm = spec.load(state, seed=seed, kind=kind)
    claim_run_dir(Path(out), config, state, benchmark)
    if not state.is_main_process:
        return None, None, None, None
    texts = request.distinct()
    started = time.perf_counter()
    with bars.showing(progress):
        vectors = mean_hidden_states(lm.model, lm.tokenizer, texts, batch_size=batch_size, normalize=request.normalize,
                                     label=label)
    seconds = time.perf_counter() - started
    index = {text: i for i, text in enumerate(texts)}
    records = [{"id": row["id"], "embeddings": vectors[[index[text] for text in item]]} for row, item in zip(rows, request.texts)]
    placement = {"device": str(lm.device) if lm.device is not None else None, **spec.recorded()}
    return records, model_description(lm, type=kind), placement, {"encoding_seconds": seconds, "texts_encoded": len(texts)}


def finish(out, result, records: list[dict]):
    """``result`` (a :class:`~lmbias.run_result.RunResult`) as it is: the vectors are the measure's input,
    and no per-item file is written."""
    return result
