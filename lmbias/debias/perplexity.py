"""Perplexity of a causal LM on texts: PPL, and PPL_s on the texts that contain a sensitive token
(Huang et al. 2020, §5.3).

PPL = exp(− Σ log p / Σ tokens) over every token of every text, each text scored after the start
token (:func:`lmbias.lm.likelihood.token_logprobs`, ``prefix="bos"``), batched. The held-out texts
are the ones :func:`lmbias.debias.pairs.is_held_out` picks, so a debiased model is measured on text
it was not trained on.

A perplexity of no tokens (no held-out text has a sensitive token, say) is not NaN: it is
``{"ppl": None, "tokens": 0, "texts": N, "reason": "..."}``, which says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..checks import check_texts


def perplexity(model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 32) -> dict:
    """``{"ppl", "tokens", "texts"}`` of a causal LM on ``texts`` (see the module docstring; ``ppl`` is
    None, with a ``reason``, when the texts have no token).

    >>> # with a model and tokenizer: perplexity(model, tokenizer, ["The nurse is kind."])["ppl"]
    """
    from ..lm.likelihood import token_logprobs

    texts = check_texts(texts, "texts")
    scores = token_logprobs(model, tokenizer, texts, batch_size=batch_size, prefix="bos")
    tokens = int(scores.n_tokens.sum())
    total = float(np.sum(scores.sum, dtype=np.float64))
    if not tokens:
        return _none(len(texts), "the texts have no tokens")
    return {"ppl": math.exp(-total / tokens), "tokens": tokens, "texts": len(texts)}


def _none(texts: int, reason: str) -> dict:
    """A perplexity that was not measured, and why (never NaN: JSON has no NaN, and a table shows it as a number)."""
    return {"ppl": None, "tokens": 0, "texts": texts, "reason": reason}


def held_out_perplexity(model: Any, tokenizer: Any, texts: Sequence[str], attributes: Sequence[str], *, limit: int | None = None,
                        batch_size: int = 32, seed: int = 0) -> dict:
    """PPL on the held-out part of ``texts`` (its first ``limit`` texts) and PPL_s on those with a
    sensitive token of ``attributes``: ``{"ppl": {...}, "ppl_s": {...}}`` (each as :func:`perplexity`;
    ``ppl`` None with a ``reason`` when there is no such text)."""
    from .pairs import counterfactual_pairs, is_held_out

    held_out = [text for text in texts if is_held_out(text)][:limit]
    sensitive = [pair["text"] for pair in counterfactual_pairs(held_out, attributes, seed=seed)]
    return {"ppl": perplexity(model, tokenizer, held_out, batch_size=batch_size) if held_out else
            _none(0, "no text of the corpus is held out"),
            "ppl_s": perplexity(model, tokenizer, sensitive, batch_size=batch_size) if sensitive else
            _none(0, f"no held-out text has a sensitive token ({', '.join(attributes)})")}


def describe(measured: dict) -> str:
    """A perplexity for people: ``"12.34"``, or ``"none (<reason>)"`` when it was not measured."""
    return f"none ({measured.get('reason', 'not measured')})" if measured.get("ppl") is None else f"{measured['ppl']:.2f}"
