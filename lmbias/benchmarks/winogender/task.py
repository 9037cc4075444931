"""Winogender (Rudinger et al. 2018) resolved by a language model: by likelihood (each sentence
followed by "‘He’ refers to the", the occupation and the participant scored as its continuations: the
wording of lm-evaluation-harness's ``winogender`` tasks) or by a generated answer to lettered options
(:mod:`lmbias.benchmarks.coreference`); the measures are
:func:`lmbias.benchmarks.winogender.measure.winogender_scores`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...checks import check_choices, check_scalar
from ...lm.spec import ModelSpec
from ...protocols import get_protocol
from ...protocols.likelihood import check_limit
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage
from ..coreference import DECISIONS, answer_run, check_protocol
from .data import GENDERS, SPEC, WINOGENDER_COMMIT, occupation_statistics
from .measure import winogender_scores


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
    protocol: str = "likelihood",
    prompt_template: str | None = None,
    batch_size: int = 32,
    seed: int = 0,
    progress: bool = True,
    data_dir=None,
) -> RunResult | None:
    """Winogender with a model; writes its scores to ``out`` as it goes (a rerun resumes) and returns the run.

    Args:
        model: a :class:`~lmbias.lm.spec.ModelSpec` (or a model name; None: the embedded default).
        genders: the pronoun genders to run (default all three).
        limit: only the sentences of the first N templates x participants (of 240; the run is marked partial).
        protocol: "likelihood" or "generate"; prompt_template: generate's wording (see
            :mod:`lmbias.benchmarks.coreference`).
        batch_size: sentences per forward pass (or generation batch).
        seed: shuffles the lettered options (generate).

    Returns:
        The run (:class:`~lmbias.run_result.RunResult`) on the main process, None on the others.
    """
    spec = ModelSpec.of(model)
    genders = check_choices(genders, list(GENDERS), "genders")
    check_limit(limit)
    prompt = check_protocol(protocol, prompt_template)
    get_protocol(protocol).refuse_chat(spec, "winogender")  # before any model is checked or loaded
    check_scalar(batch_size, "batch_size", minimum=1)
    check_scalar(seed, "seed", minimum=0)
    rows = select_rows(genders, limit, data_dir)
    records, described, placement, timing = answer_run(
        spec, rows, protocol=protocol, prompt=prompt, out=out, benchmark="winogender",
        run_config={"protocol": protocol, "genders": list(genders), "limit": limit}, batch_size=batch_size, seed=seed,
        progress=progress, display_name="Winogender")
    if records is None:
        return None
    results = winogender_scores([r["prediction"] for r in records], labels=[r["label"] for r in rows],
                                genders=[r["gender"] for r in rows], occupations=[r["occupation"] for r in rows],
                                gotcha=[r["gotcha"] for r in rows], statistics=occupation_statistics(data_dir),
                                scores=[r.get("scores") for r in records] if "scores" in records[0] else None,
                                pairs=[r["pair"] for r in rows])
    reason = " ".join(part for part in (f"--limit {limit}" if limit else "",
                                        f"--genders {' '.join(genders)}" if len(genders) < len(GENDERS) else "") if part)
    result = RunResult(
        benchmark="winogender", out=str(out), model=described,
        data={"dataset": "winogender", "split": "test", "revision": WINOGENDER_COMMIT, "citation": SPEC.citation,
              "counts": {"sentences": len(rows), "occupations": len({r["occupation"] for r in rows}),
                         **{g: sum(r["gender"] == g for r in rows) for g in genders}}},
        config={"protocol": protocol, "genders": list(genders), "limit": limit, "batch_size": batch_size, "seed": seed,
                "dtype": spec.dtype, "prompt": prompt, "decision": DECISIONS.get(protocol), **placement},
        results=results,
        partial=coverage({"sentences": (len(rows), SPEC.expected_rows())}, reason or "short data files"),
        timing=timing,
    )
    return get_protocol(protocol).finish(out, result, records)
