"""Winogender (Rudinger et al. 2018) resolved by a language model, declared for the generic run
(:func:`lmbias.benchmarks.declared.run_task`): by likelihood (each sentence followed by "‘He’ refers to
the", the occupation and the participant scored as its continuations: the wording of
lm-evaluation-harness's ``winogender`` tasks) or by a generated answer to lettered options
(:mod:`lmbias.benchmarks.coreference`); the measures are
:func:`lmbias.benchmarks.winogender.measure.winogender_scores`.

>>> from lmbias.benchmarks.declared import run_task
>>> # run_task(BENCHMARK, model="gpt2", out="runs/wg", limit=8)   # Python; `lmbias run winogender --limit 8` on the command line
"""

from __future__ import annotations

from collections.abc import Sequence

from .data import SPEC, WINOGENDER_COMMIT, occupation_statistics
from .measure import winogender_scores


def select_rows(genders: Sequence[str], limit: int | None, data_dir=None) -> list[dict]:
    """The sentences with a pronoun of ``genders``: all, or those of the first ``limit`` templates and
    participants (each with all its genders, so a sample keeps the set's balance)."""
    rows = [row for row in SPEC.load_rows("all", data_dir) if row["gender"] in genders]
    if limit is not None:
        kept = set(list(dict.fromkeys(row["pair"] for row in rows))[:limit])
        rows = [row for row in rows if row["pair"] in kept]
    return rows


def measure(records: list[dict], rows: list[dict], options: dict, data_dir) -> dict:
    """:func:`winogender_scores` of the answers, with the occupations' statistics (the log-odds
    correlation where the answers carry the likelihood protocol's scores)."""
    return winogender_scores([r["prediction"] for r in records], labels=[r["label"] for r in rows],
                             genders=[r["gender"] for r in rows], occupations=[r["occupation"] for r in rows],
                             gotcha=[r["gotcha"] for r in rows], statistics=occupation_statistics(data_dir),
                             scores=[r["scores"] for r in records] if "scores" in records[0] else None,
                             pairs=[r["pair"] for r in rows])


def data(rows: list[dict], options: dict, data_dir) -> dict:
    """results.json's ``data``: the revision, the citation and the counts per pronoun gender."""
    return {"dataset": "winogender", "split": "test", "revision": WINOGENDER_COMMIT, "citation": SPEC.citation,
            "counts": {"sentences": len(rows), "occupations": len({r["occupation"] for r in rows}),
                       **{g: sum(r["gender"] == g for r in rows) for g in options["genders"]}}}


