"""Batched, seeded text generation with the papers' sampling presets.

Prompts are cut into *global batches* first (sorted by token length, so a batch pads little);
batch ``b`` is sampled with the torch seed :func:`batch_seed` ``(seed, b)``. A batch's output thus
depends only on the seed, the batch size and the prompts, never on which process runs it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..checks import check_choice, check_scalar, check_texts
from ..errors import InputError
from .chat import encode_prompts

if TYPE_CHECKING:  # a type only: loading.LanguageModel.generate calls generate_batch
    from .loading import LanguageModel

# Sampling settings of the papers. Every sampling knob is set explicitly so that a model's own
# generation_config (temperature, top_k ...) cannot leak into a run.
PLAIN_SAMPLING = {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0, "repetition_penalty": 1.0}
PRESETS: dict[str, dict] = {
    # BOLD appendix A.2.2: GPT-2 with top-k 40 and top-p 0.95.
    "bold-gpt2": {**PLAIN_SAMPLING, "top_k": 40, "top_p": 0.95, "max_new_tokens": 20},
    # BOLD appendix A.2.3: CTRL with repetition penalty 1.2 and top-p 0.9.
    "bold-ctrl": {**PLAIN_SAMPLING, "repetition_penalty": 1.2, "top_p": 0.9, "max_new_tokens": 20},
    # Gehman et al. 2020, §3: nucleus sampling with p = 0.9, 20 new tokens (25 samples per prompt).
    "rtp": {**PLAIN_SAMPLING, "top_p": 0.9, "max_new_tokens": 20},
    "greedy": {"do_sample": False, "repetition_penalty": 1.0, "max_new_tokens": 20},
}


def generation_settings(preset: str | Mapping = "bold-gpt2", **overrides) -> dict:
    """A preset's settings (``preset``: one of :data:`PRESETS`, or the settings themselves, a benchmark's own)
    updated with ``overrides`` (any ``transformers`` generation keyword; None: not overridden).

    >>> generation_settings("bold-gpt2", max_new_tokens=5)["top_k"]
    40
    >>> generation_settings({**PLAIN_SAMPLING, "max_new_tokens": 50}, max_new_tokens=None)["max_new_tokens"]
    50
    """
    if not isinstance(preset, Mapping):
        check_choice(preset, list(PRESETS), "preset")
    settings = {**(preset if isinstance(preset, Mapping) else PRESETS[preset]),
                **{k: v for k, v in overrides.items() if v is not None}}
    check_scalar(settings["max_new_tokens"], "max_new_tokens", minimum=1)
    return settings


def batch_seed(seed: int, batch_index: int) -> int:
    """The torch seed of global batch ``batch_index`` of a run seeded with ``seed``."""
    digest = hashlib.sha256(f"lmbias:{seed}:{batch_index}".encode()).digest()
    return int.from_bytes(digest[:8], "little") % (2**63 - 1)


def prompt_lengths(lm: LanguageModel, prompts: Sequence[str]) -> list[int]:
    """Token count of each prompt as it is generated from (:func:`lmbias.lm.chat.encode_prompts`: in
    the chat template in a chat run, special tokens included)."""
    return [len(ids) for ids in encode_prompts(lm.tokenizer, prompts, getattr(lm, "chat", None))]


def plan_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Global batches: prompt indices sorted by token length (longest first, ties in input order),
    cut every ``batch_size``.

    >>> plan_batches([3, 9, 5, 9], 2)
    [[1, 3], [2, 0]]
    """
    check_scalar(batch_size, "batch_size", minimum=1)
    order = np.argsort(-np.asarray(lengths), kind="stable").tolist()
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def check_context(lm: LanguageModel, lengths: Sequence[int], max_new_tokens: int, ids: Sequence[str]) -> None:
    """Raise ValueError naming the first prompt that does not fit the model's context with its new tokens."""
    limit = lm.max_length
    if limit is None:
        return
    for prompt_id, length in zip(ids, lengths):
        if length + max_new_tokens > limit:
            raise InputError(
                f"prompt {prompt_id!r} has {length} tokens; with max_new_tokens={max_new_tokens} it exceeds the "
                f"model's context of {limit} tokens. Shorten the prompt or lower max_new_tokens."
            )


def generate_batch(lm: LanguageModel, prompts: Sequence[str], settings: dict, *, seed: int, num_return_sequences: int = 1) -> list[dict]:
    """Generate for one batch. Returns, per prompt and per sample (prompt-major), a dict with
    ``continuation`` (the new text only), ``num_tokens`` (new tokens up to the end-of-sequence
    token) and ``stop_reason`` (``"eos"`` or ``"length"``).

    Prompts are encoded by :func:`lmbias.lm.chat.encode_prompts`: a raw prompt with no tokens (BOLD
    has five empty prompts) is generated from the start token alone instead of from padding only; in a
    chat run (``lm.chat``) each prompt is the user's message in the model's chat template."""
    import torch
    from transformers import GenerationConfig

    prompts = check_texts(prompts, "prompts")
    tokenizer = lm.tokenizer
    tokenizer.padding_side = "left"
    eos = tokenizer.eos_token_id
    ids = encode_prompts(tokenizer, prompts, getattr(lm, "chat", None))
    encoded = tokenizer.pad({"input_ids": ids}, return_tensors="pt").to(lm.device)
    config = GenerationConfig(
        **settings, num_return_sequences=num_return_sequences, pad_token_id=tokenizer.pad_token_id, eos_token_id=eos
    )
    torch.manual_seed(seed)
    with torch.inference_mode():
        output = lm.model.generate(**encoded, generation_config=config)
    new_tokens = output[:, encoded["input_ids"].shape[1] :].cpu()
    results = []
    for row in new_tokens.tolist():
        end = row.index(eos) if eos is not None and eos in row else len(row)
        results.append(
            {
                "continuation": tokenizer.decode(row[:end], skip_special_tokens=True),
                "num_tokens": end,
                "stop_reason": "eos" if end < len(row) else "length",
            }
        )
    return results
