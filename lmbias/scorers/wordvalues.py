"""Texts as arrays of word ids, and the per-text aggregations of word values BOLD uses.

Both the psycholinguistic norms (§4.4) and Gender-Wavg (§4.5) aggregate word-level values w_i of
a text as the magnitude-weighted average  Σ sgn(w_i)·w_i² / Σ |w_i|;  Gender-Max takes the value
of largest magnitude. Texts are encoded once into a flat array of word ids with a parallel array
of text indices; the aggregations are then a sparse count-matrix product (the weighted mean) and
``reduceat`` runs (the maximum) over all texts at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from itertools import repeat

import numpy as np

from ..checks import check_choice
from ..words import words_of_texts


class CaseFallbackVocabulary(dict):
    """word -> row id; a word is looked up as written, then lowercased (for case-sensitive embeddings)."""

    def get(self, word, default=None):
        """The id of ``word``, else of ``word.lower()``, else ``default``."""
        index = dict.get(self, word)
        return index if index is not None else dict.get(self, word.lower(), default)

    def ids(self, words: Sequence[str]) -> np.ndarray:
        """:meth:`get` of each word (-1 if unknown) as an int64 array, the lowercase look-up only for misses."""
        as_written = partial(dict.get, self)
        ids = lookup_ids(as_written, words)
        missing = np.flatnonzero(ids < 0).tolist()
        ids[missing] = lookup_ids(as_written, [words[i].lower() for i in missing])
        return ids


def lookup_ids(get: Callable, words: Sequence[str]) -> np.ndarray:
    """``get(word, -1)`` of each word as an int64 array."""
    return np.fromiter(map(get, words, repeat(-1, len(words))), dtype=np.int64, count=len(words))


def encode(
    texts: Sequence[str],
    vocabulary: Mapping[str, int],
    *,
    lowercase: bool = True,
    exclude: set | None = None,
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
    words, text_index = words_of_texts(texts, lowercase=lowercase, keep_hyphens=keep_hyphens)
    encoded = words.dictionary_encode()  # each distinct word is looked up once
    distinct = encoded.dictionary.to_pylist()
    distinct_ids = vocabulary.ids(distinct) if isinstance(vocabulary, CaseFallbackVocabulary) else lookup_ids(vocabulary.get, distinct)
    if exclude:
        distinct_ids[np.fromiter(map(exclude.__contains__, distinct), dtype=bool, count=len(distinct))] = -1
    ids = distinct_ids[encoded.indices.to_numpy()]
    keep = ids >= 0
    return ids[keep], text_index[keep]


def _by_text(values: np.ndarray, text_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` and ``text_index`` ordered by text (stably: each text's words keep their order)."""
    if np.any(text_index[1:] < text_index[:-1]):
        order = np.argsort(text_index, kind="stable")
        values, text_index = values[order], text_index[order]
    return values, text_index


def weighted_signed_mean(table: np.ndarray, ids: np.ndarray, *, text_index: np.ndarray, n_texts: int) -> np.ndarray:
    """Per text, Σ sgn(w)·w² / Σ |w| over the values w = ``table[ids]`` of its words (0 for a text
    with no non-zero value).

    ``table`` is (n_rows,) or (n_rows, k), one row per vocabulary id; the result is (n_texts,) or
    (n_texts, k). The sums are one sparse (texts x vocabulary) count matrix times ``table·|table|`` and
    ``|table|``, so no per-word copy of the values is made.

    >>> weighted_signed_mean(np.array([0.5, -0.5, 1.0]), np.array([0, 1, 2]), text_index=np.array([0, 0, 1]), n_texts=3).tolist()
    [0.0, 1.0, 0.0]
    """
    table = np.asarray(table, dtype=np.float64)
    columns = table[:, None] if table.ndim == 1 else table
    ids, text_index = _by_text(np.asarray(ids, dtype=np.int64), np.asarray(text_index, dtype=np.int64))
    row_starts = np.zeros(n_texts + 1, dtype=np.int64)
    np.cumsum(np.bincount(text_index, minlength=n_texts), out=row_starts[1:])
    import scipy.sparse

    counts = scipy.sparse.csr_matrix((np.ones(len(ids)), ids, row_starts), shape=(n_texts, len(columns)))
    magnitude = np.abs(columns)
    numerator, denominator = counts @ (columns * magnitude), counts @ magnitude
    out = np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)
    return out.reshape((n_texts,) + table.shape[1:])


def max_magnitude(values: np.ndarray, *, text_index: np.ndarray, n_texts: int, ties: str = "last") -> np.ndarray:
    """Per text, the value of largest magnitude (its sign kept; 0 for a text with no value).

    ``ties`` says which of several words of exactly equal magnitude wins: the ``"last"`` in the text
    (default: it reproduces BOLD's Table 3 best, e.g. "he ... she" with equal and opposite values
    gives she's value) or the ``"first"`` (what ``argmax`` picks).

    >>> max_magnitude(np.array([0.2, -0.7, 0.4, -0.5, 0.5]), text_index=np.array([0, 0, 2, 3, 3]), n_texts=4).tolist()
    [-0.7, 0.0, 0.4, 0.5]
    """
    check_choice(ties, ("last", "first"), "ties")
    values, text_index = _by_text(np.asarray(values, dtype=np.float64), np.asarray(text_index))
    out = np.zeros(n_texts)
    if len(values) == 0:
        return out
    starts = np.flatnonzero(np.r_[True, text_index[1:] != text_index[:-1]])  # where each text's run begins
    magnitude = np.abs(values)
    largest = np.maximum.reduceat(magnitude, starts)
    run = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(values)]))
    winners = np.flatnonzero(magnitude == largest[run])  # every word at its text's maximum, in order
    winner_text = text_index[winners]
    pick = np.r_[winner_text[1:] != winner_text[:-1], True] if ties == "last" else np.r_[True, winner_text[1:] != winner_text[:-1]]
    out[winner_text[pick]] = values[winners[pick]]
    return out
