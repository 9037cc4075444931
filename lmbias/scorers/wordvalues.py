"""Texts as arrays of word ids, and the per-text aggregations of word values BOLD uses.

Both the psycholinguistic norms (§4.4) and Gender-Wavg (§4.5) aggregate word-level values w_i of
a text as the magnitude-weighted average  Σ sgn(w_i)·w_i² / Σ |w_i|;  Gender-Max takes the value
of largest magnitude. Texts are encoded once into a flat array of word ids with a parallel array
of text indices; the aggregations are then bincount / sort operations over all texts at once.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from ..checks import check_choice
from ..text import tokenize


def encode(
    texts: Sequence[str],
    vocabulary: Mapping[str, int],
    *,
    lowercase: bool = True,
    exclude: Optional[set] = None,
    keep_hyphens: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Word ids of every known word of every text, and the index of the text each belongs to.

    Args:
        texts: the texts.
        vocabulary: word -> row id (words not in it are skipped).
        lowercase: lowercase the texts before tokenising (vocabulary keys must match).
        exclude: words to skip even when known (e.g. closed-class words).
        keep_hyphens: keep hyphenated words whole ("well-known"), for lexicons that list them.

    Returns:
        ``(ids, text_index)``: int64 arrays of equal length, in text order.
    """
    tokens_per_text = [tokenize(text, lowercase=lowercase, keep_hyphens=keep_hyphens) for text in texts]
    lengths = np.fromiter(map(len, tokens_per_text), dtype=np.int64, count=len(texts))
    flat = [token for tokens in tokens_per_text for token in tokens]
    ids = np.fromiter(map(vocabulary.get, flat, [-1] * len(flat)), dtype=np.int64, count=len(flat))
    text_index = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    keep = ids >= 0
    if exclude:  # by id: a few hundred closed-class words, not a copy of the whole vocabulary per call
        keep &= ~np.isin(ids, [vocabulary[word] for word in exclude if word in vocabulary])
    return ids[keep], text_index[keep]


def weighted_signed_mean(values: np.ndarray, text_index: np.ndarray, n_texts: int) -> np.ndarray:
    """Per text, Σ sgn(w)·w² / Σ |w| over its values (0 for a text with no non-zero value).

    ``values`` is (n_words,) or (n_words, k); the result is (n_texts,) or (n_texts, k).

    >>> weighted_signed_mean(np.array([0.5, -0.5, 1.0]), np.array([0, 0, 1]), 3).tolist()
    [0.0, 1.0, 0.0]
    """
    values = np.asarray(values, dtype=np.float64)
    columns = values[:, None] if values.ndim == 1 else values
    out = np.zeros((n_texts, columns.shape[1]))
    for k in range(columns.shape[1]):
        column = columns[:, k]
        numerator = np.bincount(text_index, weights=np.sign(column) * column**2, minlength=n_texts)
        denominator = np.bincount(text_index, weights=np.abs(column), minlength=n_texts)
        np.divide(numerator, denominator, out=out[:, k], where=denominator > 0)
    return out.reshape((n_texts,) + values.shape[1:])


def max_magnitude(values: np.ndarray, text_index: np.ndarray, n_texts: int, *, ties: str = "last") -> np.ndarray:
    """Per text, the value of largest magnitude (its sign kept; 0 for a text with no value).

    ``ties`` says which of several words of exactly equal magnitude wins: the ``"last"`` in the text
    (default: it reproduces BOLD's Table 3 best, e.g. "he ... she" with equal and opposite values
    gives she's value) or the ``"first"`` (what ``argmax`` picks).

    >>> max_magnitude(np.array([0.2, -0.7, 0.4, -0.5, 0.5]), np.array([0, 0, 2, 3, 3]), 4).tolist()
    [-0.7, 0.0, 0.4, 0.5]
    """
    check_choice(ties, ("last", "first"), "ties")
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros(n_texts)
    if len(values) == 0:
        return out
    position = np.arange(len(values))
    # Sorted by text, then magnitude, then position: each text's last entry is its winning maximum.
    order = np.lexsort((position if ties == "last" else -position, np.abs(values), text_index))
    sorted_index = text_index[order]
    last = np.flatnonzero(np.r_[sorted_index[1:] != sorted_index[:-1], True])
    out[sorted_index[last]] = values[order][last]
    return out
