"""WinoBias (Zhao et al. 2018) resolved by a language model, declared for the generic run
(:func:`lmbias.benchmarks.declared.run_task`): by likelihood (each sentence followed by "‘He’ refers
to the", its two occupations scored as continuations) or by a generated answer to lettered options
(:mod:`lmbias.benchmarks.coreference`); the measures are
:func:`lmbias.benchmarks.winobias.measure.winobias_scores`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..coreference import PROMPT_FIELDS, TEMPLATE_HELP, outcomes, protocols
from ..declared import Option, Task
from .data import COREFBIAS_COMMIT, FILE_ROWS, SPEC, SPLITS, TYPES
from .measure import MAX_BOOTSTRAP, winobias_scores


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


TASK = Task(
    name="winobias", display_name="WinoBias",
    options=(
        Option("split", "the test half (default) or the dev half", default="test", choices=tuple(SPLITS)),
        Option("types", "sentence types to run (1: semantic cues only; 2: syntactic cues too)", default=tuple(TYPES),
               type=int, choices=tuple(TYPES), many=True, narrows=True),
        Option("limit", "N counts pro / anti sentence pairs per type (of 396): the first N of each type, so 2 x N "
                        "sentences per type", type=int, minimum=1, expected="an integer >= 1", metavar="N", narrows=True),
        Option("bootstrap", "bootstrap resamples of the pairs for the intervals (default 1000; 0: none)", default=1000,
               type=int, minimum=0, maximum=MAX_BOOTSTRAP, expected=f"an integer from 0 (no intervals) to {MAX_BOOTSTRAP:,}",
               identity=False),
    ),
    protocols=protocols("likelihood of each occupation after \"‘He’ refers to the\""),
    prompt_fields=PROMPT_FIELDS, template_help=TEMPLATE_HELP,
    items=lambda options, data_dir: select_rows(options["split"], options["types"], options["limit"], data_dir),
    measure=measure, data=data, outcomes=outcomes, outcome_name="pronoun resolved correctly",
    counted=lambda rows, options: {"sentences": (len(rows), 4 * FILE_ROWS)},
)
