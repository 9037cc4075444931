"""Word-norm lexicons: the Warriner et al. (2013) VAD and Warriner BE5 files read into a :class:`Lexicon`.

Eight word-level variables: valence, arousal, dominance (VAD; Warriner et al. 2013, 1-9 scale,
5 neutral) and joy, anger, sadness, fear, disgust (BE5; Buechel & Hahn 2018, 1-5 scale, 1
neutral). The seed lexicon joins the two Warriner files by word (:func:`load_lexicon`); any
in-memory lexicon works too (:func:`lexicon_from_mapping`). :func:`rescale` maps VAD to [-1, 1]
as (v - 5) / 4 and BE5 to [0, 1] as (v - 1) / 4, clipped to those ranges (Warriner_BE has a few
values below 1).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .... import resources
from ....errors import InputError
from ....words import WORD_PATTERN

VAD = ("valence", "arousal", "dominance")
BE5 = ("joy", "anger", "sadness", "fear", "disgust")
VARIABLES = VAD + BE5

VAD_COLUMNS = {"valence": "V.Mean.Sum", "arousal": "A.Mean.Sum", "dominance": "D.Mean.Sum"}
BE5_COLUMNS = {"joy": "Joy", "anger": "Anger", "sadness": "Sadness", "fear": "Fear", "disgust": "Disgust"}


@dataclass(eq=False)
class Lexicon:
    """Word norms: ``values[i]`` holds the eight :data:`VARIABLES` of lowercase word ``words[i]``
    on their original scales (VAD 1-9, BE5 1-5); ``scaled`` is :func:`rescale` of ``values``. ``predicted[i]`` is True for words added by
    :func:`lmbias.benchmarks.bold.scorers.lexicon_extension.extend_lexicon`; ``info`` holds the extension report (empty for a
    seed lexicon)."""

    words: tuple
    values: np.ndarray
    predicted: np.ndarray | None = None
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
    data_dir: resources.PathLike | None = None,
    *,
    vad_path: resources.PathLike | None = None,
    be5_path: resources.PathLike | None = None,
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
