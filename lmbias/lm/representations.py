"""Sentence representations from a transformers model: the mean of its final hidden states.

bias-bench (Meade et al. 2022) represents a sentence this way for SEAT, INLP and SentenceDebias:
the tokenizer's encoding (special tokens as it adds them by default), the base model's
``last_hidden_state`` (after the final norm, before the LM head; a debiased model's projection is
applied there), averaged over the sentence's tokens. Batched with padding, the average counts the
real tokens only, so it equals encoding each sentence alone (up to float rounding).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import progress
from ..checks import check_scalar, check_texts
from ..errors import InputError
from .loading import context_length
from .placement import input_device


def mean_hidden_states(model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 32, normalize: bool = False,
                       max_length: int | None = None, label: str = "encoding") -> np.ndarray:
    """A ``(len(texts), hidden size)`` float32 array: each text's mean final hidden state (see the
    module docstring), divided by its L2 norm when ``normalize`` (SEAT, SentenceDebias). Texts longer
    than ``max_length`` tokens are cut to it; without ``max_length`` nothing is cut.

    Raises:
        InputError: a text with no tokens, or (without ``max_length``) longer than the model's context.
    """
    import torch

    texts = check_texts(texts, "texts")
    check_scalar(batch_size, "batch_size", minimum=1)
    encoded = [list(ids)[:max_length] for ids in tokenizer(texts)["input_ids"]]
    limit = context_length(model, tokenizer)
    for text, ids in zip(texts, encoded):
        if not ids:
            raise InputError(f"{text!r} has no tokens; a sentence is represented by the mean over its tokens")
        if limit is not None and len(ids) > limit:
            raise InputError(f"{text[:60]!r} is {len(ids)} tokens long but the model takes at most {limit}; nothing is truncated")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0  # masked out either way
    device = input_device(model)
    order = sorted(range(len(texts)), key=lambda i: -len(encoded[i]))  # similar lengths together: little padding
    out = None
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode(), progress.bar(len(order), label, unit="text") as shown:
            for start in range(0, len(order), batch_size):
                index = order[start:start + batch_size]
                width = len(encoded[index[0]])
                ids = torch.tensor([encoded[i] + [pad] * (width - len(encoded[i])) for i in index], device=device)
                mask = torch.tensor([[1] * len(encoded[i]) + [0] * (width - len(encoded[i])) for i in index], device=device)
                hidden = model.base_model(input_ids=ids, attention_mask=mask)[0].float()  # [0]: last_hidden_state
                weights = mask.to(hidden.device, hidden.dtype)[:, :, None]
                mean = (hidden * weights).sum(dim=1) / weights.sum(dim=1)
                if normalize:
                    mean = torch.nn.functional.normalize(mean, dim=1)
                if out is None:
                    out = np.zeros((len(texts), mean.shape[1]), dtype=np.float32)
                out[index] = mean.cpu().numpy()
                shown.update(len(index))
    finally:
        model.train(was_training)
    return out
