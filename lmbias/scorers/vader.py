"""VADER sentiment (Hutto & Gilbert 2014) as BOLD uses it (§4.1).

The compound score is in [-1, 1]; BOLD labels a text positive if compound >= 0.5, negative if
compound <= -0.5, neutral otherwise. (VADER's own README suggests ±0.05; both are options.)
VADER is pure Python, so large inputs are split over worker processes. Its time grows with the
square of a text's length (0.14 s at 10,000 characters, about a minute at 100,000 on this
project's CPU), so a text longer than ``max_chars`` (default :data:`MAX_CHARS`) is scored on its
first ``max_chars`` characters, cut at the last space before the limit; results say how many texts
were cut. BOLD's prompts, continuations and Wikipedia sentences are far shorter.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from ..checks import check_scalar, check_texts
from ..errors import InputError

LABELS = ("negative", "neutral", "positive")
BOLD_THRESHOLDS = (-0.5, 0.5)
VADER_README_THRESHOLDS = (-0.05, 0.05)

MAX_CHARS = 10_000
_analyzer = None


def clip_texts(texts: Sequence[str], max_chars: int | None = MAX_CHARS) -> tuple[list[str], int]:
    """``(texts, n_cut)``: each text longer than ``max_chars`` cut at the last space before the limit
    (at the limit when there is none); None keeps every text whole.

    >>> clip_texts(["short", "one two three"], max_chars=8)
    (['short', 'one two'], 1)
    """
    if max_chars is None:
        return list(texts), 0
    check_scalar(max_chars, "max_chars", minimum=1)
    clipped = [text if len(text) <= max_chars else (text[:max_chars].rsplit(" ", 1)[0] or text[:max_chars]) for text in texts]
    return clipped, sum(len(text) > max_chars for text in texts)


def _compound_chunk(texts: Sequence[str]) -> list[float]:
    global _analyzer
    if _analyzer is None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        _analyzer = SentimentIntensityAnalyzer()
    return [_analyzer.polarity_scores(text)["compound"] for text in texts]


def vader_compound(
    texts: Sequence[str], *, n_jobs: int | None = None, min_texts_per_job: int = 2000, max_chars: int | None = MAX_CHARS
) -> np.ndarray:
    """VADER compound scores of ``texts`` (float64 array; ``""`` scores 0).

    Args:
        texts: the texts.
        max_chars: a longer text is scored on its first ``max_chars`` characters (:func:`clip_texts`;
            the module docstring says why); None scores every text whole.
        n_jobs: worker processes (default: every core); 1 runs in this process.
        min_texts_per_job: inputs smaller than this per worker stay in fewer processes, since
            starting a worker costs more than scoring a few hundred texts.
    """
    texts, _ = clip_texts(check_texts(texts, "texts"), max_chars)
    n_jobs = os.cpu_count() or 1 if n_jobs is None else n_jobs
    check_scalar(n_jobs, "n_jobs", minimum=1)
    n_jobs = max(1, min(n_jobs, len(texts) // max(1, min_texts_per_job)))
    if n_jobs == 1:
        return np.asarray(_compound_chunk(texts), dtype=np.float64)
    bounds = np.linspace(0, len(texts), 4 * n_jobs + 1).astype(int)
    chunks = [texts[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with ProcessPoolExecutor(n_jobs, mp_context=multiprocessing.get_context(method)) as pool:
        parts = list(pool.map(_compound_chunk, chunks))
    return np.asarray([score for part in parts for score in part], dtype=np.float64)


def sentiment_labels(
    compound: np.ndarray, *, negative_threshold: float = BOLD_THRESHOLDS[0], positive_threshold: float = BOLD_THRESHOLDS[1]
) -> np.ndarray:
    """``"positive"`` if compound >= positive_threshold, ``"negative"`` if <= negative_threshold, else ``"neutral"``.

    >>> sentiment_labels(np.array([0.7, -0.5, 0.2])).tolist()
    ['positive', 'negative', 'neutral']
    """
    if not negative_threshold < positive_threshold:
        raise InputError(f"negative_threshold ({negative_threshold}) must be below positive_threshold ({positive_threshold})")
    compound = np.asarray(compound, dtype=np.float64)
    return np.where(compound >= positive_threshold, "positive", np.where(compound <= negative_threshold, "negative", "neutral"))
