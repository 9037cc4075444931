"""Winogender (Rudinger et al. 2018) resolved by a language model: each sentence is followed by
"‘He’ refers to the" and the occupation and the participant are scored as its continuations
(:mod:`lmbias.benchmarks.coreference`, the wording of lm-evaluation-harness's ``winogender`` tasks);
the measures are :func:`lmbias.benchmarks.winogender.scores.winogender_scores`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...checks import check_choices, check_scalar
from ...lm.spec import ModelSpec
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage
from ..coreference import REFERENT_PROMPT, score_run
from ..likelihood_run import check_limit, with_scores
from .data import GENDERS, SPEC, WINOGENDER_COMMIT, occupation_statistics
from .scores import winogender_scores


def select_rows(genders: Sequence[str], limit: int | None, data_dir=None) -> list[dict]:
    """The sentences with a pronoun of ``genders``: all, or those of the first ``limit`` templates and
    participants (each with all its genders, so a sample keeps the set's balance)."""
    rows = [row for row in SPEC.load_rows("all", data_dir) if row["gender"] in genders]
    if limit is not None:
        kept = set(list(dict.fromkeys(row["pair"] for row in rows))[:limit])
        rows = [row for row in rows if row["pair"] in kept]
    return rows


@holds_run_directory
def run_winogender(
    *,
    model: ModelSpec | str | None = None,
    out="runs/winogender",
    genders: Sequence[str] = GENDERS,
    limit: int | None = None,
    batch_size: int = 32,
    progress: bool = True,
    data_dir=None,
) -> RunResult | None:
    """Winogender with a model; writes its scores to ``out`` as it goes (a rerun resumes) and returns the run.

    Args:
        model: a :class:`~lmbias.lm.spec.ModelSpec` (or a model name; None: the embedded default).
        genders: the pronoun genders to run (default all three).
        limit: only the sentences of the first N templates x participants (of 240; the run is marked partial).
        batch_size: sentences per forward pass.

    Returns:
        The run (:class:`~lmbias.run_result.RunResult`) on the main process, None on the others.
    """
    spec = ModelSpec.of(model)
    genders = check_choices(genders, list(GENDERS), "genders")
    check_limit(limit)
    check_scalar(batch_size, "batch_size", minimum=1)
    rows = select_rows(genders, limit, data_dir)
    records, described, placement, timing = score_run(
        spec, rows, out=out, benchmark="winogender", run_config={"genders": list(genders), "limit": limit},
        batch_size=batch_size, progress=progress, label="Winogender: scoring")
    if records is None:
        return None
    results = winogender_scores([r["prediction"] for r in records], labels=[r["label"] for r in rows],
                                genders=[r["gender"] for r in rows], occupations=[r["occupation"] for r in rows],
                                gotcha=[r["gotcha"] for r in rows], statistics=occupation_statistics(data_dir),
                                scores=[r["scores"] for r in records], pairs=[r["pair"] for r in rows])
    reason = " ".join(part for part in (f"--limit {limit}" if limit else "",
                                        f"--genders {' '.join(genders)}" if len(genders) < len(GENDERS) else "") if part)
    result = RunResult(
        benchmark="winogender", out=str(out), model=described,
        data={"dataset": "winogender", "split": "test", "revision": WINOGENDER_COMMIT, "citation": SPEC.citation,
              "counts": {"sentences": len(rows), "occupations": len({r["occupation"] for r in rows}),
                         **{g: sum(r["gender"] == g for r in rows) for g in genders}}},
        config={"genders": list(genders), "limit": limit, "batch_size": batch_size, "dtype": spec.dtype,
                "prompt": REFERENT_PROMPT, "decision": "sum", **placement},
        results=results,
        partial=coverage({"sentences": (len(rows), SPEC.expected_rows())}, reason or "short data files"),
        timing=timing,
    )
    return with_scores(out, result, records)
