"""BOLD's Table 3: gender polarity of the profession texts per merged profession group (Dhamala et
al. 2021, §4.5), with the paper's WIKI rows to compare against."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...checks import check_groups, check_texts
from ...data.spec import PathLike
from ...text import anonymize_texts
from .data import PROFESSION_MERGED_GROUPS, load_rows
from .scorers.gender import THRESHOLDS, WordPolarity, gender_labels, gender_scores, load_word_polarity

# BOLD Table 3, WIKI rows: total and (male #, female #) per method.
PAPER_TABLE3_WIKI = {
    "arts & entertainment": {"total": 3009, "max": (145, 101), "wavg": (114, 77), "unigram": (102, 66)},
    "science & technology": {"total": 4153, "max": (66, 10), "wavg": (64, 5), "unigram": (54, 6)},
    "industrial & manufacturing": {"total": 1699, "max": (29, 36), "wavg": (25, 31), "unigram": (23, 17)},
    "healthcare & medicine": {"total": 1173, "max": (11, 31), "wavg": (6, 28), "unigram": (3, 19)},
}


def table3(
    texts: Sequence[str],
    *,
    merged_groups: Sequence[str | None],
    methods: Sequence[str] = ("max", "wavg", "unigram"),
    polarity: WordPolarity | None = None,
    male_threshold: float = THRESHOLDS[0],
    female_threshold: float = THRESHOLDS[1],
    **embedding_options,
) -> dict[str, dict]:
    """BOLD Table 3 for any texts: per merged profession group, ``total`` and per method
    ``{"male": #, "female": #, "ratio": male / female}`` (ratio None when there is no female text).

    Args:
        texts: the texts (e.g. the Wikipedia sentences or the generations of BOLD's profession rows).
        merged_groups: per text, its merged group (a key of
            :data:`lmbias.benchmarks.bold.data.PROFESSION_MERGED_GROUPS`) or None to leave the text out.
        methods, polarity, thresholds, embedding_options: as in :func:`gender_scores` / :func:`gender_labels`.
    """
    texts = check_texts(texts, "texts")
    merged_groups = check_groups([group or "" for group in merged_groups], len(texts), "merged_groups")
    keep = np.isin(merged_groups, list(PROFESSION_MERGED_GROUPS))
    kept_texts = [text for text, kept in zip(texts, keep) if kept]
    kept_groups = np.asarray(merged_groups)[keep]
    if any(method != "unigram" for method in methods) and polarity is None:
        polarity = load_word_polarity(**embedding_options)
    labels = {}
    for method in methods:
        scores = gender_scores(kept_texts, method, polarity=polarity) if kept_texts else np.zeros(0)
        labels[method] = gender_labels(scores, method, male_threshold=male_threshold, female_threshold=female_threshold)
    return table3_counts(kept_groups, labels)


def table3_counts(merged_groups: Sequence[str | None], labels: dict) -> dict[str, dict]:
    """:func:`table3` of labelled texts: per merged profession group, ``total`` and per method (``labels``: ``{method:
    each text's gender label}``) ``{"male": #, "female": #, "ratio": male / female}``; a text whose merged group is
    not one of Table 3's (None) is left out."""
    groups = np.asarray([group or "" for group in merged_groups], dtype=object)
    table = {group: {"total": int(np.sum(groups == group))} for group in PROFESSION_MERGED_GROUPS}
    for method, method_labels in labels.items():
        method_labels = np.asarray(method_labels, dtype=object)
        for group, row in table.items():
            male = int(np.sum((groups == group) & (method_labels == "male")))
            female = int(np.sum((groups == group) & (method_labels == "female")))
            row[method] = {"male": male, "female": female, "ratio": male / female if female else None}
    return table


def wikipedia_table3(data_dir: PathLike | None = None, *, anonymize: bool = False, **options) -> dict[str, dict]:
    """:func:`table3` on the Wikipedia sentences of BOLD's profession rows (the paper's WIKI rows).

    With ``anonymize=True`` the profession names are first masked as "XYZ"
    (:func:`lmbias.text.anonymize_texts`, BOLD §3.3); that matches the paper's numbers more closely.
    """
    rows = load_rows("profession", data_dir)
    texts = [row["wikipedia"] for row in rows]
    if anonymize:
        texts = anonymize_texts(texts, [row["domain"] for row in rows], [row["name"] for row in rows])
    return table3(texts, merged_groups=[row["merged_group"] for row in rows], data_dir=data_dir, **options)
