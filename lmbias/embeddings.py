"""Word vectors for BOLD's gender polarity (§4.5): loading, and hard debiasing (Bolukbasi et al. 2016).

BOLD scores words in the hard-debiased GoogleNews word2vec. That released file (3.6 GB) is not
reachable offline, so by default the debiasing is recomputed here on the registered 13,013-word
GoogleNews subset (``word2vec_gnews_subset``, which holds every word of the debiaswe lists), with
the debiaswe word lists, following the ``debias.py`` algorithm of github.com/tolga-b/debiaswe:

1. normalise every vector to unit length;
2. gender direction g: first principal component of the definitional pairs, each pair centred
   on its mean (rows a - (a+b)/2 and b - (a+b)/2);
3. neutralise: every word *not* in the gender-specific list loses its component along g, and is
   normalised again (one matrix operation over the whole vocabulary);
4. equalise: each equalize pair (a, b), in its given, lowercase, title-case and upper-case forms
   when both words are in the vocabulary, becomes ``y ± z·g`` with y = the mean of the pair
   without its g component and z = sqrt(1 - |y|²), the sign keeping the order of a and b along g.
   (debiaswe itself only uses the lowercase / title / upper forms, so it leaves the mixed-case
   pair "Catholic_priest"/"nun" as it was; we also equalise the pair as given.)

The result is cached under ``lmbias.resources.cache_dir()/embeddings`` as a pickle-free ``.npz``,
keyed by a SHA-256 of the input vectors, their words and the three word lists, so a second load
skips the computation.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .errors import InputError, InputTypeError
from .files import atomic_path
from .resources import PathLike, cache_dir, locate

if TYPE_CHECKING:  # gensim (and scipy with it) loads with the first vectors, not with every command
    from gensim.models import KeyedVectors

WORD_LISTS = ("definitional_pairs", "gender_specific_full", "equalize_pairs")
_CACHE_VERSION = b"lmbias-hard-debias-v1"


def keyed_vectors(words: Sequence[str], vectors: np.ndarray) -> KeyedVectors:
    """A gensim ``KeyedVectors`` holding ``vectors`` (row i is the vector of ``words[i]``)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or len(words) != len(vectors):
        raise InputError(f"need one vector row per word, got {len(words)} words and an array of shape {vectors.shape}")
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vectors.shape[1], count=0, dtype=np.float32)
    kv.add_vectors(list(words), vectors)
    return kv


def load_word2vec_subset(data_dir: PathLike | None = None) -> KeyedVectors:
    """The registered 13,013-word GoogleNews word2vec subset (raw, not normalised) as ``KeyedVectors``."""
    vectors = np.load(locate("word2vec_gnews_subset/vectors", data_dir), allow_pickle=False)
    words = locate("word2vec_gnews_subset/vocab", data_dir).read_text(encoding="utf-8").splitlines()
    return keyed_vectors(words, vectors)


def load_keyed_vectors(path: PathLike, name: str = "embedding") -> KeyedVectors:
    """Read word vectors from ``path``: word2vec binary (``.bin``, ``.bin.gz``), word2vec text
    (``.txt``, ``.vec``, ``.txt.gz``) or a gensim ``KeyedVectors.save`` file (anything else, e.g. ``.kv``).

    Raises:
        InputError (a ValueError): no such file, or the file cannot be read as word vectors (the
            message names ``name``): a path the caller gave is a user mistake, not a missing resource.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise InputError(f"{name}: no such file {str(path)!r}; expected a word2vec .bin/.txt or gensim .kv file")
    suffix = path.name.lower().removesuffix(".gz")
    from gensim.models import KeyedVectors

    try:
        if suffix.endswith(".bin"):
            return KeyedVectors.load_word2vec_format(str(path), binary=True)
        if suffix.endswith((".txt", ".vec")):
            return KeyedVectors.load_word2vec_format(str(path), binary=False)
        loaded = KeyedVectors.load(str(path))
    except Exception as error:  # gensim raises many types (UnpicklingError, ValueError, UnicodeError ...)
        raise InputError(f"{name}: cannot read {str(path)!r} as word vectors ({type(error).__name__}: {error})") from error
    if not isinstance(loaded, KeyedVectors):
        raise InputError(f"{name}: {str(path)!r} holds a {type(loaded).__name__}, not gensim KeyedVectors")
    return loaded


def load_word_lists(data_dir: PathLike | None = None) -> dict[str, list]:
    """The debiaswe lists: ``definitional_pairs`` and ``equalize_pairs`` ([word, word] lists) and
    ``gender_specific_full`` (words that are not neutralised)."""
    return {name: json.loads(locate(f"debiaswe/{name}", data_dir).read_text(encoding="utf-8")) for name in WORD_LISTS}


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def _pair_indices(kv: KeyedVectors, pairs: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    known = [(kv.key_to_index[a], kv.key_to_index[b]) for a, b in pairs if a in kv.key_to_index and b in kv.key_to_index]
    first, second = np.array(known, dtype=np.int64).reshape(-1, 2).T
    return first, second


def gender_direction(kv: KeyedVectors, definitional_pairs: Sequence[Sequence[str]]) -> np.ndarray:
    """Unit gender direction: first principal component of the centred definitional pairs (unit
    vectors), oriented so that the first word of each pair (debiaswe: the female one) projects higher.

    Pairs with a word missing from ``kv`` are skipped.
    """
    first, second = _pair_indices(kv, definitional_pairs)
    if len(first) == 0:
        raise InputError("none of the definitional pairs is in the embedding; cannot find a gender direction")
    a, b = _unit_rows(kv.vectors[first].astype(np.float64)), _unit_rows(kv.vectors[second].astype(np.float64))
    half = (a - b) / 2  # a - centre = half, b - centre = -half: the rows have mean 0, as PCA needs
    _, _, components = np.linalg.svd(np.concatenate([half, -half]), full_matrices=False)
    direction = components[0]
    return direction if half.dot(direction).sum() >= 0 else -direction


def hard_debias(
    kv: KeyedVectors,
    definitional_pairs: Sequence[Sequence[str]],
    gender_specific: Sequence[str],
    equalize_pairs: Sequence[Sequence[str]],
) -> KeyedVectors:
    """Hard-debiased copy of ``kv`` (unit vectors; see the module docstring for the steps).

    Equalize pairs with a missing word, or sharing a word with an earlier pair, are skipped.
    """
    vectors = _unit_rows(kv.vectors.astype(np.float64))
    g = gender_direction(kv, definitional_pairs)
    words = kv.index_to_key
    neutral = np.ones(len(words), dtype=bool)
    neutral[[kv.key_to_index[w] for w in set(gender_specific) if w in kv.key_to_index]] = False
    vectors[neutral] -= np.outer(vectors[neutral] @ g, g)
    vectors = _unit_rows(vectors)

    forms = dict.fromkeys((f(a), f(b)) for a, b in equalize_pairs for f in (str, str.lower, str.title, str.upper))
    seen: set = set()
    pairs = []
    for a, b in forms:
        if a in kv.key_to_index and b in kv.key_to_index and a != b and not {a, b} & seen:
            seen.update((a, b))
            pairs.append((a, b))
    first, second = _pair_indices(kv, pairs)
    a, b = vectors[first], vectors[second]
    mean = (a + b) / 2
    y = mean - np.outer(mean @ g, g)
    z = np.sqrt(np.clip(1 - np.sum(y * y, axis=1), 0, None))
    z = np.where((a - b) @ g < 0, -z, z)
    vectors[first] = y + np.outer(z, g)
    vectors[second] = y - np.outer(z, g)
    return keyed_vectors(list(words), _unit_rows(vectors))


def debias_cache_key(kv: KeyedVectors, word_lists: dict) -> str:
    """SHA-256 (hex) of the vectors, their words and the word lists: the name of a cached result."""
    digest = hashlib.sha256(_CACHE_VERSION)
    vectors = np.ascontiguousarray(kv.vectors, dtype=np.float32)
    digest.update(repr(vectors.shape).encode())
    digest.update(vectors.data)
    digest.update("\n".join(kv.index_to_key).encode("utf-8"))
    digest.update(json.dumps([word_lists[name] for name in WORD_LISTS]).encode("utf-8"))
    return digest.hexdigest()


def debiased_cache_path(key: str) -> Path:
    """Where the hard-debiased vectors with cache key ``key`` are stored."""
    return cache_dir() / "embeddings" / f"hard_debiased_{key[:24]}.npz"


def _save(kv: KeyedVectors, path: Path) -> None:
    words = "\n".join(kv.index_to_key)
    if len(words.split("\n")) != len(kv.index_to_key):
        return  # a word holds a newline: not cacheable in this format (never in word2vec files)
    with atomic_path(path) as temporary, open(temporary, "wb") as out:
        np.savez(out, vectors=kv.vectors, words=np.frombuffer(words.encode("utf-8"), dtype=np.uint8))


def _load(path: Path) -> KeyedVectors:
    with np.load(path, allow_pickle=False) as stored:
        words = stored["words"].tobytes().decode("utf-8").split("\n")
        return keyed_vectors(words, stored["vectors"])


def load_embedding(
    embedding: None | PathLike | KeyedVectors = None,
    *,
    debias: bool = True,
    data_dir: PathLike | None = None,
    use_cache: bool = True,
) -> KeyedVectors:
    """Word vectors for gender polarity: hard-debiased unless ``debias=False``.

    Args:
        embedding: ``None`` for the registered GoogleNews subset, a ``KeyedVectors``, or the path of
            a word2vec ``.bin`` / ``.txt`` or gensim ``.kv`` file (see :func:`load_keyed_vectors`).
        debias: hard-debias with the debiaswe lists (found via ``data_dir``); pass False for vectors
            that are already debiased (e.g. debiaswe's released GoogleNews-...-hard-debiased.bin).
        data_dir: data directory for the registered resources.
        use_cache: read / write the debiased result in the lmbias cache.
    """
    from gensim.models import KeyedVectors

    if embedding is None:
        kv = load_word2vec_subset(data_dir)
    elif isinstance(embedding, KeyedVectors):
        kv = embedding
    elif isinstance(embedding, (str, os.PathLike)):
        kv = load_keyed_vectors(embedding, "embedding")
    else:
        raise InputTypeError(f"embedding must be None, a path or gensim KeyedVectors, got {type(embedding).__name__}")
    if not debias:
        return kv
    word_lists = load_word_lists(data_dir)
    path = debiased_cache_path(debias_cache_key(kv, word_lists)) if use_cache else None
    if path is not None and path.is_file():
        return _load(path)
    debiased = hard_debias(kv, word_lists["definitional_pairs"], word_lists["gender_specific_full"], word_lists["equalize_pairs"])
    if path is not None:
        _save(debiased, path)
    return debiased
