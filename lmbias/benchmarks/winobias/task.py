"""WinoBias (Zhao et al. 2018) resolved by a language model, declared for the generic run
(:func:`lmbias.benchmarks.declared.run_task`): by likelihood (each sentence followed by "‘He’ refers
to the", its two occupations scored as continuations) or by a generated answer to lettered options
(:mod:`lmbias.benchmarks.coreference`); the measures are
:func:`lmbias.benchmarks.winobias.measure.winobias_scores`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .data import COREFBIAS_COMMIT, SPEC
from .measure import winobias_scores


def select_rows(split: str, types: Sequence[int], limit: int | None, data_dir=None) -> list[dict]:
    """The sentences of ``split`` and ``types``: all, or the first ``limit`` pairs of each type (both
    the pro and the anti sentence of each)."""
    rows = [row for row in SPEC.load_rows(split, data_dir) if row["type"] in types]
    if limit is not None:
        kept = {pair for type_ in types for pair in list(dict.fromkeys(r["pair"] for r in rows if r["type"] == type_))[:limit]}
        rows = [row for row in rows if row["pair"] in kept]
    return rows


def measure(records: list[dict], rows: list[dict], options: dict, data_dir) -> dict:
    """:func:`winobias_scores` of the answers, with bootstrap intervals over the pairs."""
    return winobias_scores([r["prediction"] for r in records], labels=[r["label"] for r in rows],
                           types=[r["type"] for r in rows], stereotypes=[r["stereotype"] for r in rows],
                           pairs=[r["pair"] for r in rows], bootstrap=options["bootstrap"], seed=options["seed"])


def data(rows: list[dict], options: dict, data_dir) -> dict:
    """results.json's ``data``: the split, the revision, the citation and the counts per type."""
    return {"dataset": "winobias", "split": options["split"], "revision": COREFBIAS_COMMIT, "citation": SPEC.citation,
            "counts": {"sentences": len(rows), **{f"type{t}": sum(r["type"] == t for r in rows) for t in options["types"]}}}


