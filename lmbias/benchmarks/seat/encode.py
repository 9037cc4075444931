"""Sentence embeddings for SEAT.

A language model's (:func:`sentence_embeddings`) as bias-bench's ``_encode`` makes them, for every
model type: each text tokenised alone with the tokenizer's default special tokens (BERT's [CLS] and
[SEP]; none for GPT-2), the base model's ``last_hidden_state`` (a causal LM's after its final norm,
before the LM head; called as a module, so a forward hook on ``base_model``, e.g. a debiasing
projection, applies), the mean over every token position, divided by its L2 norm. Texts go in
batches, right-padded, and the mean is weighted by the attention mask: the same numbers as one text
at a time (to float rounding).

The averaged word vectors of May et al.'s CBoW baseline (:func:`word_vector_embeddings`: they averaged
GloVe; here any gensim ``KeyedVectors``, by default the GoogleNews word2vec subset lmbias registers).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...checks import check_texts
from ...errors import InputError
from ...lm.representations import mean_hidden_states

WORD = re.compile(r"[\w'-]+")


def sentence_embeddings(lm: Any, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
    """The unit-length mean last hidden state of each text (see the module docstring) of a loaded
    model (``lm.model``, ``lm.tokenizer``: :class:`~lmbias.lm.loading.LanguageModel`), one row per text:
    :func:`lmbias.lm.representations.mean_hidden_states` normalised, nothing truncated.

    Raises:
        InputError: a text with no tokens, or longer than the model's context.
    """
    return mean_hidden_states(lm.model, lm.tokenizer, texts, batch_size=batch_size, normalize=True)


def word_vector_embeddings(texts: Sequence[str], vectors: Any) -> np.ndarray:
    """May et al.'s CBoW: the mean of the vectors of each text's words (``[\\w'-]+``, as written, else
    in lower case; words without a vector are skipped), divided by its L2 norm; ``vectors`` is a
    gensim ``KeyedVectors`` (:func:`lmbias.embeddings.load_word2vec_subset`).

    Raises:
        InputError: a text has no word with a vector (it names the text).
    """
    texts = check_texts(texts, "texts")
    ids, starts = [], []
    for text in texts:
        found = [vectors.key_to_index.get(w, vectors.key_to_index.get(w.lower())) for w in WORD.findall(text)]
        found = [i for i in found if i is not None]
        if not found:
            raise InputError(f"{text[:60]!r} has no word in the word vectors; CBoW cannot embed it")
        starts.append(len(ids))
        ids += found
    counts = np.diff([*starts, len(ids)])
    means = np.add.reduceat(np.asarray(vectors.vectors, dtype=np.float64)[ids], starts, axis=0) / counts[:, None]
    return (means / np.linalg.norm(means, axis=1, keepdims=True)).astype(np.float32)


def text_encoder(model: str | None = None, *, device: str | None = None, data_dir=None):
    """A function ``encode(texts, batch_size=32)`` giving their embeddings (one unit-length row each): with ``model``
    None, May et al.'s CBoW on the GoogleNews word2vec subset (:func:`word_vector_embeddings`); else
    the causal or masked LM ``model`` (a Hub id or a folder; its kind from its config), as bias-bench
    encodes (:func:`sentence_embeddings`). The model loads now, once."""
    from ...embeddings import load_word2vec_subset
    from ...lm.loading import detect_model_type, load_causal_lm, load_masked_lm

    if model is None:
        vectors = load_word2vec_subset(data_dir)
        return lambda texts, batch_size=32: word_vector_embeddings(texts, vectors)
    if not isinstance(model, str):
        raise InputError(f"model must be a model name or folder (or None for CBoW word vectors), got {type(model).__name__}")
    loader = load_masked_lm if detect_model_type(model) == "masked" else load_causal_lm
    lm = loader(model, device=device)
    return lambda texts, batch_size=32: sentence_embeddings(lm, texts, batch_size=batch_size)
