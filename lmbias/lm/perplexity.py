"""Perplexity of a causal LM on texts: PPL, and PPL_s on the texts that contain a sensitive token
(Huang et al. 2020, §5.3).

PPL = exp(− Σ log p / Σ tokens) over every token of every text, each text scored after the start
token (:func:`lmbias.lm.likelihood.token_logprobs`, ``prefix="bos"``), batched. The held-out texts
are the ones :func:`lmbias.debias.pairs.is_held_out` picks, so a debiased model is measured on text
it was not trained on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..checks import check_texts


def perplexity(model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 32) -> dict:
    """``{"ppl", "tokens", "texts"}`` of a causal LM on ``texts`` (see the module docstring).

    >>> # with a model and tokenizer: perplexity(model, tokenizer, ["The nurse is kind."])["ppl"]
    """
    from .likelihood import token_logprobs

    texts = check_texts(texts, "texts")
    scores = token_logprobs(model, tokenizer, texts, batch_size=batch_size, prefix="bos")
    tokens = int(scores.n_tokens.sum())
    total = float(np.sum(scores.sum, dtype=np.float64))
    return {"ppl": math.exp(-total / tokens) if tokens else float("nan"), "tokens": tokens, "texts": len(texts)}


def held_out_perplexity(model: Any, tokenizer: Any, texts: Sequence[str], attributes: Sequence[str], *, limit: int | None = None,
                        batch_size: int = 32, seed: int = 0) -> dict:
    """PPL on the held-out part of ``texts`` (its first ``limit`` texts) and PPL_s on those with a
    sensitive token of ``attributes``: ``{"ppl": {...}, "ppl_s": {...}}`` (each as :func:`perplexity`)."""
    from ..debias.pairs import counterfactual_pairs, is_held_out

    held_out = [text for text in texts if is_held_out(text)][:limit]
    sensitive = [pair["text"] for pair in counterfactual_pairs(held_out, attributes, seed=seed)]
    return {"ppl": perplexity(model, tokenizer, held_out, batch_size=batch_size),
            "ppl_s": perplexity(model, tokenizer, sensitive, batch_size=batch_size) if sensitive else
            {"ppl": float("nan"), "tokens": 0, "texts": 0}}
