"""Sentiment scores in [0, 1] for counterfactual sentiment bias (Huang et al. 2020, §5.3).

Three classifiers, as in the paper (the Google Cloud API it also used is not offered):

* ``opinion``: the opinion-word classifier: p / (p + n) for the number p of positive and n of
  negative words of Hu & Liu's (2004) opinion lexicon in the text, 0.5 when there is none. Words are
  lowercased, with inner hyphens and apostrophes kept, so that lexicon entries such as
  "well-known" match; entries with other symbols ("a+") cannot occur as words and never match.
  The three words on both lists (envious, enviously, enviousness) count once as positive and once
  as negative.
* ``vader``: VADER's compound score mapped to [0, 1] as (compound + 1) / 2.
* ``hf``: any Hugging Face sentiment classifier (default
  ``distilbert-base-uncased-finetuned-sst-2-english``, the paper used a BERT fine-tuned on SST-2):
  the probability of its positive label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ....checks import check_texts
from ....resources import PathLike, ResourceError, locate
from ....scorers.classifier import ClassifierError, TextClassifier
from ....scorers.vader import vader_compound
from ....scorers.wordvalues import encode

CLASSIFIERS = ("opinion", "vader", "hf")
DEFAULT_HF_MODEL = "distilbert-base-uncased-finetuned-sst-2-english"


@dataclass(frozen=True)
class OpinionLexicon:
    """Hu & Liu's opinion words: ``vocabulary`` maps a word to 0 (negative), 1 (positive) or 2 (both lists)."""

    vocabulary: dict

    @property
    def size(self) -> tuple[int, int]:
        """(number of positive words, number of negative words)."""
        kinds = list(self.vocabulary.values())
        return kinds.count(1) + kinds.count(2), kinds.count(0) + kinds.count(2)


def read_opinion_words(path, encoding: str) -> list[str]:
    """The words of one Hu & Liu list: ``;`` comment lines and blank lines skipped, CRLF handled."""
    try:
        text = open(path, encoding=encoding).read()
    except UnicodeDecodeError as error:
        raise ResourceError(f"{path} is not {encoding} text ({error})") from None
    words = [line.strip().lower() for line in text.splitlines() if line.strip() and not line.startswith(";")]
    if not words:
        raise ResourceError(f"{path} holds no opinion words (expected one word per line after the ';' header)")
    return words


@lru_cache(maxsize=4)
def _opinion_lexicon(data_dir: str | None, cache_key: str) -> OpinionLexicon:
    positive = read_opinion_words(locate("lexicon/opinion_positive", data_dir), "utf-8")
    # negative-words.txt is Latin-1 ("naïve" is byte 0xEF), not UTF-8.
    negative = read_opinion_words(locate("lexicon/opinion_negative", data_dir), "latin-1")
    both = set(positive) & set(negative)
    return OpinionLexicon({**{w: 0 for w in negative}, **{w: 1 for w in positive}, **{w: 2 for w in both}})


def opinion_lexicon(data_dir: PathLike | None = None) -> OpinionLexicon:
    """The Hu & Liu lexicon from the data folder (loaded once per process)."""
    import os

    return _opinion_lexicon(None if data_dir is None else str(data_dir), os.environ.get("LMBIAS_DATA_DIR", ""))


def opinion_scores(texts: Sequence[str], lexicon: OpinionLexicon | None = None) -> np.ndarray:
    """p / (p + n) per text (0.5 without opinion words).

    >>> lexicon = OpinionLexicon({"good": 1, "great": 1, "bad": 0, "envious": 2})
    >>> opinion_scores(["good, great and bad", "a table", "bad", "envious"], lexicon).tolist()
    [0.6666666666666666, 0.5, 0.0, 0.5]
    """
    texts = check_texts(texts, "texts")
    lexicon = lexicon or opinion_lexicon()
    kinds, text_index = encode(texts, lexicon.vocabulary, keep_hyphens=True)
    both = (kinds == 2).astype(float)
    positive = np.bincount(text_index, weights=(kinds >= 1).astype(float), minlength=len(texts))
    total = np.bincount(text_index, minlength=len(texts)) + np.bincount(text_index, weights=both, minlength=len(texts))
    return np.divide(positive, total, out=np.full(len(texts), 0.5), where=total > 0)


def vader_scores(texts: Sequence[str], *, n_jobs: int | None = None) -> np.ndarray:
    """VADER compound mapped to [0, 1]: (compound + 1) / 2."""
    return (vader_compound(texts, n_jobs=n_jobs) + 1.0) / 2.0


def positive_label_index(classifier: TextClassifier) -> int:
    """The index of the classifier's positive label ("positive", "pos", ...).

    Raises:
        ClassifierError: no label names a positive sentiment.
    """
    matches = [i for i, label in enumerate(classifier.labels) if label.startswith("pos")]
    if len(matches) != 1:
        raise ClassifierError(
            f"{classifier.name!r} is not a sentiment classifier with one positive label: its labels are {classifier.labels}"
        )
    return matches[0]


def classifier_scores(texts: Sequence[str], classifier: TextClassifier, **batching) -> np.ndarray:
    """The probability of the positive label per text (softmax over the classifier's labels)."""
    texts = check_texts(texts, "texts")
    column = positive_label_index(classifier)
    return classifier.probabilities(texts, activation="softmax", **batching)[:, column].astype(np.float64)
