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
from ..errors import InputError


def perplexity(model: Any, tokenizer: Any, texts: Sequence[str], *, batch_size: int = 32) -> dict:
    """``{"ppl", "tokens", "texts"}`` of a causal LM on ``texts`` (see the module docstring; ``ppl`` is
    None, with a ``reason``, when the texts have no token).

    >>> # with a model and tokenizer: perplexity(model, tokenizer, ["The nurse is kind."])["ppl"]
    """
    from ..lm.likelihood import token_logprobs

    texts = check_texts(texts, "texts")
    return _measured(token_logprobs(model, tokenizer, texts, batch_size=batch_size, prefix="bos"), np.ones(len(texts), bool))


def _measured(scores: Any, chosen: np.ndarray) -> dict:
    """:func:`perplexity`'s dict over the texts ``chosen`` (a mask) of scored ``scores``."""
    tokens = int(scores.n_tokens[chosen].sum())
    total = float(np.sum(scores.sum[chosen], dtype=np.float64))
    if not tokens:
        return _none(int(chosen.sum()), "the texts have no tokens")
    return {"ppl": math.exp(-total / tokens), "tokens": tokens, "texts": int(chosen.sum())}


def _none(texts: int, reason: str) -> dict:
    """A perplexity that was not measured, and why (never NaN: JSON has no NaN, and a table shows it as a number)."""
    return {"ppl": None, "tokens": 0, "texts": texts, "reason": reason}


def held_out_texts(texts: Sequence[str], limit: int | None = None) -> list[str]:
    """The held-out part of ``texts`` (:func:`~lmbias.debias.pairs.is_held_out`), its first ``limit``:
    the texts :func:`held_out_perplexity` scores."""
    from .pairs import is_held_out

    return [text for text in texts if is_held_out(text)][:limit]


def held_out_perplexity(model: Any, tokenizer: Any, texts: Sequence[str], attributes: Sequence[str], *, limit: int | None = None,
                        batch_size: int = 32, seed: int = 0) -> dict:
    """PPL on the held-out part of ``texts`` (its first ``limit`` texts) and PPL_s on those with a
    sensitive token of ``attributes``: ``{"ppl": {...}, "ppl_s": {...}}`` (each as :func:`perplexity`;
    ``ppl`` None with a ``reason`` when there is no such text). Each text is scored once: PPL_s sums
    the scores of its texts, which are among PPL's."""
    from ..lm.likelihood import token_logprobs
    from .pairs import counterfactual_pairs

    held_out = held_out_texts(texts, limit)
    if not held_out:
        return {"ppl": _none(0, "no text of the corpus is held out"), "ppl_s": _none(0, "no text of the corpus is held out")}
    with_token = {pair["text"] for pair in counterfactual_pairs(held_out, attributes, seed=seed)}
    sensitive = np.array([text in with_token for text in held_out])
    scores = token_logprobs(model, tokenizer, check_texts(held_out, "texts"), batch_size=batch_size, prefix="bos")
    return {"ppl": _measured(scores, np.ones(len(held_out), bool)),
            "ppl_s": _measured(scores, sensitive) if sensitive.any() else
            _none(0, f"no held-out text has a sensitive token ({', '.join(attributes)})")}


def check_held_out_fits(model: Any, tokenizer: Any, texts: Sequence[str], limit: int | None, where: str) -> None:
    """Before a fit or a training spends its time: every held-out text that :func:`held_out_perplexity`
    will score at the end fits the model's context with its start token (the scores cover whole texts,
    never a cut one). ``where`` names the corpus. Raises a one-line
    :class:`~lmbias.errors.InputError` naming the first text that does not, and the options that help."""
    from ..lm.loading import context_length

    context = context_length(model, tokenizer)
    held_out = held_out_texts(texts, limit)
    if context is None or not held_out:
        return
    lengths = [len(ids) + 1 for ids in tokenizer(held_out, add_special_tokens=False)["input_ids"]]
    longer = [i for i, n in enumerate(lengths) if n > context]
    if longer:
        first = longer[0]
        fits = f"--eval-limit {first} (the held-out texts before it), " if first else ""
        start = held_out[first][:40] + ("..." if len(held_out[first]) > 40 else "")
        raise InputError(f"held-out text {first + 1} of {where} ({start!r}) is {lengths[first]} tokens with its start token "
                         f"({len(longer) - 1:,} more of the {len(held_out):,} to score are too long) but the model takes at most "
                         f"{context}; the held-out perplexity scores whole texts (--max-length cuts only the texts fitted on), so "
                         f"it would stop after the fit: give "
                         f"{fits}--eval-limit 0 (none; measure it later with lmbias perplexity), or a corpus of shorter texts")


def describe(measured: dict) -> str:
    """A perplexity for people: ``"12.34"``, or ``"none (<reason>)"`` when it was not measured."""
    return f"none ({measured.get('reason', 'not measured')})" if measured.get("ppl") is None else f"{measured['ppl']:.2f}"
