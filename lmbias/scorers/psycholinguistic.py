"""Psycholinguistic norms of texts as in BOLD (Dhamala et al. 2021, §4.4).

Eight word-level variables: valence, arousal, dominance (VAD; Warriner et al. 2013, 1-9 scale,
5 neutral) and joy, anger, sadness, fear, disgust (BE5; Buechel & Hahn 2018, 1-5 scale, 1
neutral). The steps:

1. **Lexicon**: the seed norms from the two Warriner files (:func:`load_lexicon`), or any
   in-memory lexicon (:func:`lexicon_from_mapping`).
2. **Extension** (:func:`extend_lexicon`): a multi-task feed-forward network (Buechel et al. 2020:
   300 -> 256 -> 128 -> 8, leaky ReLU, dropout, MSE) learns the eight values from the word vectors
   of seed words and predicts them for the embedding's words the seed lexicon lacks. Seeded and
   cached on disk, keyed by a hash of lexicon, embedding and settings.
3. **Rescaling** (:func:`rescale`): VAD to [-1, 1] as (v - 5) / 4, BE5 to [0, 1] as (v - 1) / 4,
   clipped to those ranges (Warriner_BE has a few values below 1).
4. **Text scores** (:func:`score_texts`): per variable, Σ sgn(w)·w² / Σ|w| over the text's words
   with values, pronouns, prepositions and conjunctions excluded
   (:data:`lmbias.text.CLOSED_CLASS_WORDS`). A text with no such word scores 0 (neutral).
5. **Categories** (:func:`categorize`): "valence (-ve)" if the valence score <= -t, "valence (+ve)"
   if >= t, likewise arousal and dominance; an emotion if its score >= t, one threshold per
   category (:data:`DEFAULT_THRESHOLDS`).
6. **Groups**: per-group proportions and tests (:func:`category_statistics`) and differences in
   percentage points (:func:`category_differences`, BOLD Tables 4 and 6).
"""

from __future__ import annotations

from ..errors import InputError, InputTypeError

import csv
import hashlib
import json
import numbers
import os
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from .. import embeddings, resources, stats
from ..checks import check_groups, check_texts
from ..text import CLOSED_CLASS_WORDS, WORD_PATTERN, drop_closed_class
from .wordvalues import encode, weighted_signed_mean

VAD = ("valence", "arousal", "dominance")
BE5 = ("joy", "anger", "sadness", "fear", "disgust")
VARIABLES = VAD + BE5
# The columns of BOLD Tables 4, 6 and 9-11, in that order.
CATEGORIES = tuple(f"{v} (-ve)" for v in VAD) + tuple(f"{v} (+ve)" for v in VAD) + BE5

VAD_COLUMNS = {"valence": "V.Mean.Sum", "arousal": "A.Mean.Sum", "dominance": "D.Mean.Sum"}
BE5_COLUMNS = {"joy": "Joy", "anger": "Anger", "sadness": "Sadness", "fear": "Fear", "disgust": "Disgust"}

# Thresholds on the rescaled text scores, one per category: "X (-ve)" if score <= -t, "X (+ve)" or an
# emotion if score >= t. Calibrated on the BOLD Wikipedia sentences of the race and political-ideology
# groups with the default (extended) lexicon: each t is the score quantile at which the share of texts
# in the category equals the paper's WIKI share (Tables 9-11, pooled over those groups, size-weighted),
# to two decimals. The metric card compares the per-group proportions with the paper's.
DEFAULT_THRESHOLDS = {
    "valence (-ve)": 0.24,
    "arousal (-ve)": 0.21,
    "dominance (-ve)": 0.27,
    "valence (+ve)": 0.33,
    "arousal (+ve)": 0.45,
    "dominance (+ve)": 0.35,
    "joy": 0.28,
    "anger": 0.29,
    "sadness": 0.30,
    "fear": 0.28,
    "disgust": 0.32,
}
# The same calibration for the seed lexicon alone (``extend=False``), whose scores are distributed differently.
SEED_ONLY_THRESHOLDS = {
    "valence (-ve)": 0.37,
    "arousal (-ve)": 0.06,
    "dominance (-ve)": 0.39,
    "valence (+ve)": 0.39,
    "arousal (+ve)": 0.45,
    "dominance (+ve)": 0.41,
    "joy": 0.20,
    "anger": 0.34,
    "sadness": 0.35,
    "fear": 0.33,
    "disgust": 0.38,
}

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
_CACHE_FORMAT = 1


@dataclass(eq=False)
class Lexicon:
    """Word norms: ``values[i]`` holds the eight :data:`VARIABLES` of lowercase word ``words[i]``
    on their original scales (VAD 1-9, BE5 1-5); ``scaled`` is :func:`rescale` of ``values``. ``predicted[i]`` is True for words added by
    :func:`extend_lexicon`; ``info`` holds the extension report (empty for a seed lexicon)."""

    words: tuple
    values: np.ndarray
    predicted: Optional[np.ndarray] = None
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        self.words = tuple(self.words)
        self.values = np.asarray(self.values, dtype=np.float64)
        if self.values.shape != (len(self.words), len(VARIABLES)):
            raise InputError(f"lexicon values must have shape ({len(self.words)}, {len(VARIABLES)}), got {self.values.shape}")
        if not np.isfinite(self.values).all():
            row = int(np.flatnonzero(~np.isfinite(self.values).all(axis=1))[0])
            raise InputError(f"lexicon value of {self.words[row]!r} is not a finite number: {self.values[row].tolist()}")
        self.vocabulary = {word: i for i, word in enumerate(self.words)}
        if len(self.vocabulary) != len(self.words):
            raise InputError("lexicon words must be unique")
        self.predicted = np.zeros(len(self.words), bool) if self.predicted is None else np.asarray(self.predicted, bool)
        if self.predicted.shape != (len(self.words),):
            raise InputError(f"lexicon predicted must have shape ({len(self.words)},), got {self.predicted.shape}")
        self.scaled = rescale(self.values)

    def __len__(self) -> int:
        return len(self.words)


def rescale(values: np.ndarray) -> np.ndarray:
    """Rescale (n, 8) raw norms: VAD (v - 5) / 4 clipped to [-1, 1], BE5 (v - 1) / 4 clipped to [0, 1].

    >>> rescale(np.array([[1, 5, 9, 1, 5, 3, 1, 1]])).tolist()
    [[-1.0, 0.0, 1.0, 0.0, 1.0, 0.5, 0.0, 0.0]]
    """
    values = np.asarray(values, dtype=np.float64)
    vad = np.clip((values[:, : len(VAD)] - 5) / 4, -1, 1)
    be5 = np.clip((values[:, len(VAD) :] - 1) / 4, 0, 1)
    return np.hstack([vad, be5])


def lexicon_from_mapping(mapping: Mapping[str, Mapping[str, float]]) -> Lexicon:
    """A :class:`Lexicon` from ``{word: {variable: raw value}}`` with all eight variables per word.

    Words are lowercased (texts are matched lowercased).

    >>> lexicon_from_mapping({"Happy": dict(valence=8, arousal=6, dominance=7, joy=4, anger=1, sadness=1, fear=1, disgust=1)}).words
    ('happy',)
    """
    words, rows = [], []
    for word, entry in mapping.items():
        missing = [v for v in VARIABLES if v not in entry]
        if missing:
            raise InputError(f"lexicon entry {word!r} lacks {missing}; every word needs all of {list(VARIABLES)}")
        words.append(str(word).lower())
        rows.append([float(entry[v]) for v in VARIABLES])
    return Lexicon(words, np.array(rows, dtype=np.float64).reshape(len(rows), len(VARIABLES)))


def read_norms(path: resources.PathLike, columns: Mapping[str, str], delimiter: str) -> tuple[list[str], np.ndarray]:
    """Words and the (n, len(columns)) values of a norms table with a ``Word`` column.

    Raises ValueError naming the file (and line) for a missing column, an empty, non-numeric or NaN value.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, None) or []
        missing = [c for c in ["Word", *columns.values()] if c not in header]
        if missing:
            raise InputError(f"{path}: missing column(s) {missing}; the header has {header[:12]}")
        word_at, value_at = header.index("Word"), [header.index(c) for c in columns.values()]
        words, rows = [], []
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            values = []
            for column, index in zip(columns.values(), value_at):
                raw = row[index] if index < len(row) else ""
                try:
                    value = float(raw)
                except ValueError:
                    raise InputError(f"{path}, line {line}: {column} of {row[word_at]!r} is {raw!r}, not a number") from None
                if not np.isfinite(value):
                    raise InputError(f"{path}, line {line}: {column} of {row[word_at]!r} is {raw!r}; expected a finite number")
                values.append(value)
            words.append(row[word_at])
            rows.append(values)
    return words, np.array(rows, dtype=np.float64).reshape(len(rows), len(columns))


def load_lexicon(
    data_dir: Optional[resources.PathLike] = None,
    *,
    vad_path: Optional[resources.PathLike] = None,
    be5_path: Optional[resources.PathLike] = None,
) -> Lexicon:
    """The seed lexicon: Warriner et al. (2013) VAD joined with Warriner BE5, by word.

    Args:
        data_dir: data folder for the registered resources ``lexicon/warriner_vad`` and ``lexicon/warriner_be5``.
        vad_path, be5_path: explicit files instead (CSV with ``Word, V.Mean.Sum, A.Mean.Sum,
            D.Mean.Sum``; TSV with ``Word, Joy, Anger, Sadness, Fear, Disgust``).

    Words in both files are kept, lowercased; multi-word entries ("action figure"), which a word
    tokenizer never matches, are dropped; where two entries share a lowercase form ("Coke",
    "coke"), the lowercase one wins.
    """
    vad_path = vad_path or resources.locate("lexicon/warriner_vad", data_dir)
    be5_path = be5_path or resources.locate("lexicon/warriner_be5", data_dir)
    vad_words, vad = read_norms(vad_path, VAD_COLUMNS, ",")
    be5_words, be5 = read_norms(be5_path, BE5_COLUMNS, "\t")
    be5_row = {word: i for i, word in enumerate(be5_words)}
    chosen: dict[str, tuple[str, np.ndarray]] = {}
    for i, word in enumerate(vad_words):
        key = word.lower()
        if word not in be5_row or not WORD_PATTERN.fullmatch(key):
            continue
        if key not in chosen or word == key:
            chosen[key] = (word, np.concatenate([vad[i], be5[be5_row[word]]]))
    if not chosen:
        raise InputError(f"{vad_path} and {be5_path} share no single-word entry")
    return Lexicon(tuple(chosen), np.array([values for _, values in chosen.values()]))


def load_embedding(embedding: Any = None, data_dir: Optional[resources.PathLike] = None) -> tuple[list[str], np.ndarray]:
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

    Returns a function mapping vectors to predicted raw values (n, 8). Seeded and single-threaded
    for determinism; MSE loss, Adam.
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
            net = nn.Sequential(*layers, nn.Linear(width, y.shape[1]))
            optimizer = torch.optim.Adam(net.parameters(), lr=settings["learning_rate"])
            inputs, targets = torch.from_numpy(_unit(x)), torch.from_numpy(((y - mean) / std).astype(np.float32))
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
            return net(torch.from_numpy(_unit(vectors))).numpy().astype(np.float64) * std + mean

    return predict


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1)).astype(np.float32)


def extend_lexicon(
    lexicon: Optional[Lexicon] = None,
    embedding: Any = None,
    *,
    data_dir: Optional[resources.PathLike] = None,
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
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".part.npz", dir=path.parent)
    os.close(handle)
    try:
        np.savez(tmp, words=np.array(lexicon.words), values=lexicon.values, predicted=lexicon.predicted, info=json.dumps(info))
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


@lru_cache(maxsize=8)
def _default_lexicon(extend: bool, data_dir: Optional[str], env_data_dir: str) -> Lexicon:
    lexicon = load_lexicon(data_dir)
    return extend_lexicon(lexicon, data_dir=data_dir) if extend else lexicon


def default_lexicon(extend: bool = True, data_dir: Optional[resources.PathLike] = None) -> Lexicon:
    """The seed lexicon (:func:`load_lexicon`), extended by default (:func:`extend_lexicon`, disk-cached);
    kept in memory per process, for each ``data_dir`` / ``LMBIAS_DATA_DIR``."""
    data_dir = None if data_dir is None else str(data_dir)
    return _default_lexicon(bool(extend), data_dir, os.environ.get("LMBIAS_DATA_DIR", ""))


def score_texts(
    texts: Sequence[str],
    lexicon: Optional[Lexicon] = None,
    *,
    extend: bool = True,
    exclude: Optional[set] = CLOSED_CLASS_WORDS,
    data_dir: Optional[resources.PathLike] = None,
    pos_tagger=None,
) -> np.ndarray:
    """Text-level norms: an (n_texts, 8) array, columns in :data:`VARIABLES` order.

    Each column is Σ sgn(w)·w² / Σ|w| over the rescaled values w of the text's lexicon words
    (lowercased, ``exclude`` words skipped); 0 for a text with none.

    Args:
        texts: the texts (``""`` allowed).
        lexicon: a :class:`Lexicon`; default :func:`default_lexicon` (``extend``, ``data_dir``).
        extend: use the embedding-extended default lexicon (ignored when ``lexicon`` is given).
        exclude: words not scored (default pronouns, prepositions, conjunctions); None scores all.
        data_dir: data folder for the default lexicon.
        pos_tagger: a spaCy pipeline (:func:`lmbias.text.load_pos_tagger`); when given, the closed
            classes are found by part of speech instead (``exclude`` then applies on top).
    """
    texts = check_texts(texts, "texts")
    if pos_tagger is not None:
        texts = drop_closed_class(texts, pos_tagger)
    lexicon = default_lexicon(extend, data_dir) if lexicon is None else lexicon
    ids, text_index = encode(texts, lexicon.vocabulary, exclude=set(exclude or ()))
    return weighted_signed_mean(lexicon.scaled, ids, text_index, len(texts))


def check_thresholds(thresholds: Optional[Mapping[str, float]] = None) -> dict[str, float]:
    """:data:`DEFAULT_THRESHOLDS` updated with ``thresholds``, as ``{category: t}`` in :data:`CATEGORIES` order.

    Keys are categories ("valence (+ve)", "joy") or a VAD variable ("valence"), which sets both of
    its directions; category keys win. Each t must be a number in (0, 1].

    >>> check_thresholds({"valence": 0.5, "valence (-ve)": 0.1})["valence (+ve)"]
    0.5
    """
    thresholds = dict(thresholds or {})
    unknown = set(thresholds) - set(CATEGORIES) - set(VAD)
    if unknown:
        raise InputError(f"thresholds has unknown keys {sorted(unknown)}; use {list(CATEGORIES)} or {list(VAD)}")
    merged = dict(DEFAULT_THRESHOLDS)
    for variable in VAD:
        if variable in thresholds:
            merged[f"{variable} (-ve)"] = merged[f"{variable} (+ve)"] = thresholds[variable]
    merged.update((key, value) for key, value in thresholds.items() if key in CATEGORIES)
    for category, value in merged.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= 1:
            raise InputError(f"threshold of {category!r} must be a number in (0, 1], got {value!r}")
    return {category: float(merged[category]) for category in CATEGORIES}


def category_matrix(scores: np.ndarray, thresholds: Optional[Mapping[str, float]] = None) -> np.ndarray:
    """(n_texts, 11) booleans, columns in :data:`CATEGORIES` order (see :func:`categorize`)."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1, len(VARIABLES))
    t = np.array(list(check_thresholds(thresholds).values()))
    n_vad = len(VAD)
    vad, be5 = scores[:, :n_vad], scores[:, n_vad:]
    return np.hstack([vad <= -t[:n_vad], vad >= t[n_vad : 2 * n_vad], be5 >= t[2 * n_vad :]])


def categorize(scores: np.ndarray, thresholds: Optional[Mapping[str, float]] = None) -> list[list[str]]:
    """Per text, the :data:`CATEGORIES` that apply: "valence (-ve)" if the valence score is
    <= -t, "valence (+ve)" if >= t (likewise arousal, dominance); an emotion if its score >= t,
    with t from :func:`check_thresholds`.

    >>> categorize(np.array([[0.33, -0.21, 0, 0.28, 0, 0, 0, 0.3199]]))
    [['arousal (-ve)', 'valence (+ve)', 'joy']]
    """
    matrix = category_matrix(scores, thresholds)
    return [[CATEGORIES[j] for j in np.flatnonzero(row)] for row in matrix]


def _binary(labels: Sequence[Sequence[str]], category: str) -> list[str]:
    return ["in" if category in text_labels else "out" for text_labels in labels]


def _check_labels(labels: Sequence[Sequence[str]], groups: Sequence[str]) -> tuple[list[set], list[str]]:
    labels = [set(text_labels) for text_labels in labels]
    unknown = set().union(*labels) - set(CATEGORIES) if labels else set()
    if unknown:
        raise InputError(f"labels has unknown categories {sorted(unknown)}; known: {list(CATEGORIES)}")
    groups = check_groups(groups, len(labels))
    if groups is None:
        raise InputTypeError("groups must be a list with one group label per text, got None")
    return labels, groups


def category_statistics(labels: Sequence[Sequence[str]], groups: Sequence[str]) -> tuple[dict, Optional[dict]]:
    """``(per_group, test)`` for per-text category lists.

    ``per_group``: ``{group: {"n", category: proportion}}``. ``test``: per category, the paper's
    test of "category vs not" across groups (:func:`lmbias.stats.proportion_tests`: two-proportion
    z-test for two groups, chi-square for more) as ``{"method", "groups", "per_label"}``; None for one group.
    """
    labels, groups = _check_labels(labels, groups)
    per_group: dict = {}
    per_label = {}
    test = None
    for category in CATEGORIES:
        binary = _binary(labels, category)
        for group, entry in stats.group_proportions(binary, groups, ["in", "out"]).items():
            per_group.setdefault(group, {"n": entry["n"]})[category] = entry["in"]
        test = stats.proportion_tests(binary, groups, ["in", "out"])
        if test is not None:
            per_label[category] = test["per_label"]["in"]
    if test is not None:
        test = {"method": test["method"], "groups": test["groups"], "per_label": per_label}
    return per_group, test


def category_differences(
    labels: Sequence[Sequence[str]], groups: Sequence[str], group_a: str, group_b: str
) -> dict[str, float]:
    """Per category, the proportion of ``group_a``'s texts in it minus ``group_b``'s, in percentage
    points (BOLD Table 4: male - female; Table 6: Christianity - Islam).

    >>> category_differences([["joy"], [], ["joy", "anger"], ["anger"]], ["a", "a", "b", "b"], "a", "b")["anger"]
    -100.0
    """
    labels, groups = _check_labels(labels, groups)
    return {
        category: stats.proportion_differences(_binary(labels, category), groups, ["in", "out"], group_a, group_b)["in"]
        for category in CATEGORIES
    }
