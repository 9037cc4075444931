"""Token ids and h̄ features of texts, shared by the training loop and the methods' preparation steps."""

from __future__ import annotations

from collections.abc import Sequence

from .. import progress
from .regularizers import mean_last_two


def fitted_length(model, tokenizer, max_length: int) -> int:
    """The tokens a text is cut to: ``max_length`` (``--max-length``), or the model's context when
    that is shorter (:func:`lmbias.lm.loading.context_length`), so that no fitted or trained text
    runs past the model's positions."""
    from ..lm.loading import context_length

    context = context_length(model, tokenizer)
    return max_length if context is None else min(max_length, context)


def encode(tokenizer, texts: Sequence[str], max_length: int) -> list[list[int]]:
    """Each text's token ids after the BOS (or EOS) token, cut to ``max_length`` in all."""
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    encoded = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return [([start] if start is not None else []) + list(ids)[: max_length - 1] for ids in encoded]


def padded(sequences: list[list[int]], pad: int, device):
    """``(input_ids, attention_mask)`` tensors of ``sequences``, right-padded with ``pad``."""
    import torch

    width = max(map(len, sequences))
    ids = torch.tensor([s + [pad] * (width - len(s)) for s in sequences], device=device)
    mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in sequences], device=device)
    return ids, mask


def last_token_features(model, tokenizer, texts: Sequence[str], *, max_length: int = 128, batch_size: int = 32):
    """h̄ at each text's last token under ``model`` (no gradient), one float32 row per text (on CPU)."""
    import torch

    rows = []
    encoded = encode(tokenizer, texts, max_length)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    device = next(model.parameters()).device
    with torch.no_grad(), progress.bar(len(encoded), "debias: features of the labelled texts", unit="text") as shown:
        for start in range(0, len(encoded), batch_size):
            chunk = encoded[start : start + batch_size]
            ids, mask = padded(chunk, pad, device)
            features = mean_last_two(model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states)
            rows.append(features[torch.arange(len(chunk)), mask.sum(1) - 1].float().cpu())
            shown.update(len(chunk))
    return torch.cat(rows)
