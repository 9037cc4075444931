"""The ``hf`` backend: transformers in this process (:mod:`lmbias.lm.loading`), on one device, split
over several (``--device-map``, one process), or one copy per process (``--num-processes``); the
only backend that scores masked LMs."""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from ..loading import check_model_path, detect_model_type, load_causal_lm, load_masked_lm
from ..processes import process_device
from . import Backend


def check(spec) -> None:
    """The model can be had (a folder, the Hub cache or the Hub), before anything is written."""
    check_model_path(spec.model, "model", revision=spec.revision)


def scoring_kind(spec, model_type: str) -> str:
    """``model_type``, or for "auto" what the checkpoint's config says (:func:`detect_model_type`)."""
    kind = detect_model_type(spec.model, revision=spec.revision) if model_type == "auto" else model_type
    if kind == "masked" and spec.model is None:
        raise InputError("--model-type masked needs --model (the embedded default is a causal LM)")
    return kind


def load(spec, state: Any, *, seed: int = 0, kind: str = "causal"):
    """The model on this process's device (``--device``, else its GPU, else the CPU) or split over the
    machine's devices (``--device-map``); the main process loads first, as it may fill the
    converted-model cache."""
    device = spec.device if spec.device_map else process_device(state, spec.device)
    loader = load_masked_lm if kind == "masked" else load_causal_lm
    with state.main_process_first():
        return loader(spec.model, revision=spec.revision, dtype=spec.dtype, device=device, device_map=spec.device_map,
                      max_memory=spec.max_memory)


BACKEND = Backend(
    name="hf", description="transformers in this process", check=check, load=load, scoring_kind=scoring_kind,
    own_workers=False, recorded=False,
)
