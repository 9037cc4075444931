"""WinoBias (Zhao et al. 2018) resolved by a language model: by likelihood (each sentence followed by
"‘He’ refers to the", its two occupations scored as continuations) or by a generated answer to lettered
options (:mod:`lmbias.benchmarks.coreference`); the measures are
:func:`lmbias.benchmarks.winobias.measure.winobias_scores`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...checks import check_choice, check_choices, check_scalar
from ...lm.spec import ModelSpec
from ...protocols import get_protocol
from ...protocols.likelihood import check_limit
from ...run_lock import holds_run_directory
from ...run_result import RunResult, coverage
from ..coreference import DECISIONS, answer_run, check_protocol
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


@holds_run_directory
def run_winobias(
    *,
    model: ModelSpec | str | None = None,
    out="runs/winobias",
    split: str = "test",
    types: Sequence[int] = TYPES,
    limit: int | None = None,
    protocol: str = "likelihood",
    prompt_template: str | None = None,
    batch_size: int = 32,
    bootstrap: int = 1000,
    seed: int = 0,
    progress: bool = True,
    data_dir=None,
) -> RunResult | None:
    """WinoBias with a model; writes its scores to ``out`` as it goes (a rerun resumes) and returns the run.

    Args:
        model: a :class:`~lmbias.lm.spec.ModelSpec` (or a model name; None: the embedded default).
        split: "test" (default) or "dev".
        types: 1 and / or 2 (default both).
        limit: only the first N pairs of each type (of 396; the run is marked partial).
        protocol: "likelihood" or "generate"; prompt_template: generate's wording (see
            :mod:`lmbias.benchmarks.coreference`).
        batch_size: sentences per forward pass (or generation batch).
        bootstrap, seed: percentile intervals from this many resamples of the pairs (0: none); the
            seed also shuffles the lettered options (generate).

    Returns:
        The run (:class:`~lmbias.run_result.RunResult`) on the main process, None on the others.
    """
    spec = ModelSpec.of(model)
    check_choice(split, SPLITS, "split")
    types = [int(t) for t in check_choices(types, list(TYPES), "types")]
    check_limit(limit)
    prompt = check_protocol(protocol, prompt_template)
    get_protocol(protocol).refuse_chat(spec, "winobias")  # before any model is checked or loaded
    check_scalar(batch_size, "batch_size", minimum=1)
    check_scalar(bootstrap, "bootstrap", minimum=0, maximum=MAX_BOOTSTRAP,
                 expected=f"an integer from 0 (no intervals) to {MAX_BOOTSTRAP:,}")
    check_scalar(seed, "seed", minimum=0)
    rows = select_rows(split, types, limit, data_dir)
    records, described, placement, timing = answer_run(
        spec, rows, protocol=protocol, prompt=prompt, out=out, benchmark="winobias",
        run_config={"protocol": protocol, "split": split, "types": types, "limit": limit}, batch_size=batch_size, seed=seed,
        progress=progress, display_name="WinoBias")
    if records is None:
        return None
    results = winobias_scores([r["prediction"] for r in records], labels=[r["label"] for r in rows],
                              types=[r["type"] for r in rows], stereotypes=[r["stereotype"] for r in rows],
                              pairs=[r["pair"] for r in rows], bootstrap=bootstrap, seed=seed)
    reason = " ".join(part for part in (f"--limit {limit}" if limit else "",
                                        f"--types {' '.join(map(str, types))}" if len(types) < len(TYPES) else "") if part)
    result = RunResult(
        benchmark="winobias", out=str(out), model=described,
        data={"dataset": "winobias", "split": split, "revision": COREFBIAS_COMMIT, "citation": SPEC.citation,
              "counts": {"sentences": len(rows), **{f"type{t}": sum(r["type"] == t for r in rows) for t in types}}},
        config={"protocol": protocol, "split": split, "types": types, "limit": limit, "batch_size": batch_size,
                "bootstrap": bootstrap, "seed": seed, "dtype": spec.dtype, "prompt": prompt,
                "decision": DECISIONS.get(protocol), **placement},
        results=results,
        partial=coverage({"sentences": (len(rows), 4 * FILE_ROWS)}, reason or "short data files"),
        timing=timing,
    )
    return get_protocol(protocol).finish(out, result, records)
