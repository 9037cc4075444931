"""Extending a word-norm lexicon to the words of an embedding (Buechel et al. 2020), cached on disk.

A multi-task feed-forward network (300 -> 256 -> 128 -> 8, leaky ReLU, dropout, MSE) learns the
eight :data:`~lmbias.benchmarks.bold.scorers.lexicons.VARIABLES` from the word vectors of seed words and predicts
them for the embedding's words the seed lexicon lacks (:func:`extend_lexicon`). Seeded, and cached
under ``lmbias.resources.cache_dir()/psycholinguistic``, keyed by a hash of lexicon, embedding and
settings. :func:`default_lexicon` is the lexicon the psycholinguistic scorer uses by default.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .... import embeddings, resources
from ....errors import InputError, InputTypeError
from ....files import atomic_path
from ....words import WORD_PATTERN
from .lexicons import VARIABLES, Lexicon, load_lexicon

# The extension network and its training (Buechel et al. 2020; MEmoLon's src/model.py).
DEFAULT_EXTENSION_SETTINGS = {
    "hidden": (256, 128),
    "leaky_slope": 0.01,
    "input_dropout": 0.2,
    "hidden_dropout": 0.5,
    "learning_rate": 1e-3,
    "batch_size": 128,
    "epochs": 20,
    "heldout_fraction": 0.1,
    "seed": 0,
}
_CACHE_FORMAT = 2  # 2: trained in float64



def load_embedding(embedding: Any = None, data_dir: resources.PathLike | None = None) -> tuple[list[str], np.ndarray]:
    """``(words, vectors)`` of a word embedding.

    ``embedding`` is None (the registered GoogleNews word2vec subset), a path to word vectors
    (see :func:`lmbias.embeddings.load_keyed_vectors`), a gensim ``KeyedVectors`` or a
    ``(words, vectors)`` pair.
    """
    if embedding is None:
        embedding = embeddings.load_word2vec_subset(data_dir)
    elif isinstance(embedding, (str, os.PathLike)):
        embedding = embeddings.load_keyed_vectors(embedding)
    if hasattr(embedding, "index_to_key") and hasattr(embedding, "vectors"):
        words, vectors = list(embedding.index_to_key), embedding.vectors
    elif isinstance(embedding, tuple) and len(embedding) == 2:
        words, vectors = list(embedding[0]), embedding[1]
    else:
        raise InputTypeError(
            f"embedding must be None, a path, a gensim KeyedVectors or a (words, vectors) pair, got {type(embedding).__name__}"
        )
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or len(vectors) != len(words):
        raise InputError(f"embedding has {len(words)} words but vectors of shape {vectors.shape}")
    return [str(w) for w in words], vectors


def _cache_key(lexicon: Lexicon, words: Sequence[str], vectors: np.ndarray, settings: dict) -> str:
    digest = hashlib.sha256(json.dumps({"format": _CACHE_FORMAT, "settings": settings}, sort_keys=True).encode())
    for part in ("\n".join(lexicon.words).encode(), lexicon.values.tobytes(), "\n".join(words).encode(), vectors.tobytes()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def train_extension(x: np.ndarray, y: np.ndarray, settings: dict):
    """Fit the multi-task network on unit-normalised vectors ``x`` and z-scored targets ``y``.

    Returns a function mapping vectors to predicted raw values (n, 8). Seeded, single-threaded and in
    float64 for determinism: in float32 the last-bit differences between CPUs' vector kernels grow over
    the 20 epochs to 0.002 in a text's score; in float64 they stay far below the reported precision.
    MSE loss, Adam.
    """
    import torch
    from torch import nn

    mean, std = y.mean(axis=0), y.std(axis=0) + 1e-8
    with torch.random.fork_rng(devices=[]):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            torch.manual_seed(settings["seed"])
            layers: list = [nn.Dropout(settings["input_dropout"])]
            width = x.shape[1]
            for size in settings["hidden"]:
                layers += [nn.Linear(width, size), nn.LeakyReLU(settings["leaky_slope"]), nn.Dropout(settings["hidden_dropout"])]
                width = size
            net = nn.Sequential(*layers, nn.Linear(width, y.shape[1])).double()
            optimizer = torch.optim.Adam(net.parameters(), lr=settings["learning_rate"])
            inputs, targets = torch.from_numpy(_unit(x)), torch.from_numpy(((y - mean) / std).astype(np.float64))
            net.train()
            for _ in range(settings["epochs"]):
                for batch in torch.randperm(len(inputs)).split(settings["batch_size"]):
                    optimizer.zero_grad()
                    nn.functional.mse_loss(net(inputs[batch]), targets[batch]).backward()
                    optimizer.step()
            net.eval()
        finally:
            torch.set_num_threads(threads)

    def predict(vectors: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return net(torch.from_numpy(_unit(vectors))).numpy() * std + mean

    return predict


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1)).astype(np.float64)


def extend_lexicon(
    lexicon: Lexicon | None = None,
    embedding: Any = None,
    *,
    data_dir: resources.PathLike | None = None,
    cache: bool = True,
    **settings: Any,
) -> Lexicon:
    """The lexicon extended to the embedding's words it lacks (Buechel et al. 2020).

    The network (:data:`DEFAULT_EXTENSION_SETTINGS`, overridable by keyword) is trained on the
    seed words found in the embedding, less a seeded held-out share (``heldout_fraction``) on which
    the Pearson correlation of each variable is measured. That same network then predicts the
    values of every embedding word that is a lowercase single word (``[a-z]+('[a-z]+)*``) and not
    in the lexicon. Seed values are never replaced.

    Args:
        lexicon: the seed lexicon (default :func:`load_lexicon`).
        embedding: see :func:`load_embedding` (default: the GoogleNews word2vec subset).
        data_dir: data folder for the default lexicon and embedding.
        cache: read / write the extended lexicon under ``lmbias.resources.cache_dir()/psycholinguistic``,
            keyed by a hash of lexicon, embedding and settings.

    Returns:
        A :class:`Lexicon` whose ``info`` holds ``pearson`` (variable -> held-out r), ``n_seed``,
        ``n_seed_in_embedding``, ``n_train``, ``n_heldout``, ``n_added``, ``train_seconds``,
        ``settings``, ``cache_file`` and ``from_cache``.
    """
    unknown = set(settings) - set(DEFAULT_EXTENSION_SETTINGS)
    if unknown:
        raise InputTypeError(f"unknown extension settings {sorted(unknown)}; known: {sorted(DEFAULT_EXTENSION_SETTINGS)}")
    settings = {**DEFAULT_EXTENSION_SETTINGS, **settings}
    settings["hidden"] = list(settings["hidden"])
    lexicon = load_lexicon(data_dir) if lexicon is None else lexicon
    words, vectors = load_embedding(embedding, data_dir)
    path = resources.cache_dir() / "psycholinguistic" / f"extension-{_cache_key(lexicon, words, vectors, settings)[:24]}.npz"
    if cache and path.is_file():
        with np.load(path) as stored:
            info = {**json.loads(str(stored["info"])), "cache_file": str(path), "from_cache": True}
            return Lexicon(tuple(stored["words"].tolist()), stored["values"], stored["predicted"], info)

    row = {}
    for i, word in enumerate(words):
        row.setdefault(word, i)
    seed = [(i, row[w]) for i, w in enumerate(lexicon.words) if w in row]
    if len(seed) < 10:
        raise InputError(f"only {len(seed)} lexicon words are in the embedding; at least 10 are needed to train")
    seed_rows, seed_vectors = np.array(seed).T
    order = np.random.default_rng(settings["seed"]).permutation(len(seed))
    n_heldout = max(1, int(round(settings["heldout_fraction"] * len(seed))))
    heldout, train = order[:n_heldout], order[n_heldout:]
    import torch  # noqa: F401  (imported before the clock starts: train_seconds is the training alone)

    started = time.perf_counter()
    predict = train_extension(vectors[seed_vectors[train]], lexicon.values[seed_rows[train]], settings)
    train_seconds = time.perf_counter() - started
    truth, guess = lexicon.values[seed_rows[heldout]], predict(vectors[seed_vectors[heldout]])
    pearson = {v: float(np.corrcoef(truth[:, k], guess[:, k])[0, 1]) for k, v in enumerate(VARIABLES)}

    new = [(w, i) for w, i in row.items() if w not in lexicon.vocabulary and w == w.lower() and WORD_PATTERN.fullmatch(w)]
    new_words = [w for w, _ in new]
    new_values = predict(vectors[[i for _, i in new]]) if new else np.zeros((0, len(VARIABLES)))
    info = {
        "pearson": pearson,
        "n_seed": len(lexicon),
        "n_seed_in_embedding": len(seed),
        "n_train": len(train),
        "n_heldout": len(heldout),
        "n_added": len(new_words),
        "train_seconds": round(train_seconds, 2),
        "settings": settings,
    }
    extended = Lexicon(
        lexicon.words + tuple(new_words),
        np.vstack([lexicon.values, new_values]),
        np.r_[lexicon.predicted, np.ones(len(new_words), bool)],
        {**info, "cache_file": str(path) if cache else None, "from_cache": False},
    )
    if cache:
        _save(path, extended, info)
    return extended


def _save(path: Path, lexicon: Lexicon, info: dict) -> None:
    with atomic_path(path) as temporary, open(temporary, "wb") as handle:
        np.savez(handle, words=np.array(lexicon.words), values=lexicon.values, predicted=lexicon.predicted, info=json.dumps(info))


@lru_cache(maxsize=8)
def _default_lexicon(extend: bool, data_dir: str | None, env_data_dir: str) -> Lexicon:
    lexicon = load_lexicon(data_dir)
    return extend_lexicon(lexicon, data_dir=data_dir) if extend else lexicon


def default_lexicon(extend: bool = True, data_dir: resources.PathLike | None = None) -> Lexicon:
    """The seed lexicon (:func:`load_lexicon`), extended by default (:func:`extend_lexicon`, disk-cached);
    kept in memory per process, for each ``data_dir`` / ``LMBIAS_DATA_DIR``."""
    data_dir = None if data_dir is None else str(data_dir)
    return _default_lexicon(bool(extend), data_dir, os.environ.get("LMBIAS_DATA_DIR", ""))
