"""The leaderboard's data: which runs, and the rows, columns, controls and records the page shows.

Every number comes from :func:`lmbias.results.metric_records`; the only figures the leaderboard
derives itself are the "overall" cells of metrics that a benchmark defines per domain (its
``derived_records``, e.g. BOLD's gaps as the mean over the domains measured). Those records carry a
``derived`` field saying so. Columns, controls (a benchmark's ``variants``), domain aliases and the
baseline row all come from the benchmark registry (:mod:`lmbias.benchmarks`).
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Sequence
from pathlib import Path

from ..benchmarks import all_metrics, benchmarks, get_benchmark
from ..errors import InputError
from ..files import slugify
from ..results import Run, first_line, metric_records
from ..run_result import strict_json
from ..version import __version__

DOMAIN_ORDER = ("gender", "race", "profession", "religion", "nationality", "political_ideology")
RESULTS_PATTERN = "runs/*/*/results.json"


def view_domain(benchmark: str, domain: str) -> str:
    """The domain a record of ``benchmark`` is filed under in the domain filter (its ``domain_aliases``)."""
    return get_benchmark(benchmark).domain_aliases.get(domain, domain)


def run_dirs_in(root) -> list:
    """The run directories of a results folder laid out as ``runs/<model slug>/<benchmark>/results.json``.

    ``root`` may be the folder holding ``runs/`` or ``runs/`` itself.

    Raises:
        ValueError: ``root`` is not a folder or holds no results in that layout.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"results folder {str(root)!r} does not exist")
    found = sorted(root.glob(RESULTS_PATTERN)) or sorted(root.glob("*/*/results.json"))
    if not found:
        raise InputError(f"no {RESULTS_PATTERN} under {root} (the layout `lmbias push --results-dataset` writes)")
    return [path.parent for path in found]


def download_results(repo_id: str) -> Path:
    """Download the results files of a Hub dataset (``runs/*/*/results.json`` only); returns the local folder.

    Raises:
        ValueError: the Hub cannot be reached (offline), the dataset does not exist or is private.
    """
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(repo_id, repo_type="dataset", allow_patterns=RESULTS_PATTERN)
    except OSError as error:  # offline, connection errors, missing repo (HfHubHTTPError is an OSError)
        cause = first_line(error) or type(error).__name__
        raise InputError(
            f"could not download the results of the Hub dataset {repo_id!r}: {cause} "
            "(offline, a typo in the name, or a private dataset without a token? HF_HUB_OFFLINE=1 blocks downloads; "
            "with a local copy use --results-dir DIR)"
        ) from None
    return Path(folder)


def collect_run_dirs(run_dirs: Sequence = (), *, hub_dataset: str | None = None,
                     results_dir=None) -> list:
    """The run directories given, plus those of ``--results-dir`` or ``--hub-dataset``.

    Raises:
        ValueError: nothing to read, or both a results folder and a Hub dataset were given.
    """
    if hub_dataset and results_dir:
        raise InputError("give either --hub-dataset or --results-dir, not both")
    paths = [Path(p) for p in run_dirs]
    if hub_dataset:
        paths += run_dirs_in(download_results(hub_dataset))
    elif results_dir:
        paths += run_dirs_in(results_dir)
    if not paths:
        raise InputError("no runs: give run directories, --results-dir DIR or --hub-dataset ORG/NAME")
    return paths


def _clean(record: dict) -> dict:
    """``record`` with NaN / infinity as None everywhere, so that the page's JSON is strict. lmbias
    writes an undefined value as null; a value that is NaN or infinite in results.json (an older or
    another writer) is shown as "n/a" too, its ``undefined`` field saying so on the cell."""
    value = record.get("value")
    if isinstance(value, float) and not math.isfinite(value):
        record = {**record, "undefined": f"results.json holds {json.dumps(value)} here, read as undefined"}
    return strict_json(record)


def _run_records(run: Run) -> list:
    """The run's metric records (verbatim, a variant field they lack set to the variant's first value:
    a likelihood StereoSet record names no protocol), plus the benchmark's derived "overall" records."""
    records = []
    defaults = {variant.field: variant.order[0] for variant in get_benchmark(run.benchmark).variants if variant.order}
    for record in metric_records(run):
        record = _clean({"model": run.model, **defaults, **record})
        record["view"] = "overall" if record["domain"] == "overall" else view_domain(run.benchmark, record["domain"])
        records.append(record)
    derived = get_benchmark(run.benchmark).derived_records(records)  # a mean says nothing of its members' NaN
    return records + [{**{k: v for k, v in record.items() if k != "undefined"}, "view": "overall"} for record in derived]


def _run_status(run: Run) -> dict:
    status = "unfinished" if run.results is None else ("incomplete" if run.missing else
                                                       "partial" if run.results.get("partial") else "complete")
    return {"benchmark": run.benchmark, "status": status, "missing": [first_line(m) for m in run.missing]}


def _notes(runs: list) -> list:
    notes = []
    for run in runs:
        name = get_benchmark(run.benchmark).display_name
        if run.results is None:
            notes.append(f"{name}: unfinished run, no results yet ({first_line(run.missing[0]) if run.missing else ''})")
        else:
            notes += [f"{name}: {first_line(m)}" for m in run.missing]
            notes += [f"{name}: partial run, {what} {how}" for what, how in run.partial.items()]
    return notes


def _baselines(runs: list, records: list) -> list:
    """One row per benchmark with a baseline (BOLD's Wikipedia texts), from its run with the most items."""
    rows = []
    for benchmark in benchmarks():
        baseline = benchmark.baseline
        scored = [r for r in runs if r.benchmark == benchmark.name and r.results is not None
                  and any(record["source"] == baseline.source for record in metric_records(r))] if baseline else []
        if not scored:
            continue
        chosen = max(scored, key=lambda r: baseline.size(r.results))

        mine = [r for r in records if r["benchmark"] == benchmark.name and r["source"] == baseline.source and "derived" not in r]
        values = {model: {(r["metric"], r["domain"]): r["value"] for r in mine if r["model"] == model}
                  for model in {r.model for r in scored}}
        differ = sorted(r.model for r in scored if values[r.model] != values[chosen.model])
        note = f"{baseline.description} (from the {benchmark.display_name} run of {chosen.model}, {baseline.size(chosen.results)} items)"
        notes = [f"the {benchmark.display_name} runs of {', '.join(differ)} measured other items or settings, so their "
                 f"{baseline.label} numbers differ; each run's own baseline is in leaderboard.json (source "
                 f"\"{baseline.source}\")"] if differ else []
        rows.append({"label": baseline.label, "key": chosen.model, "source": baseline.source, "baseline": True,
                     "benchmark": benchmark.name, "slug": None, "report": None, "description": note, "notes": notes,
                     "runs": []})
    return rows


def _columns(records: list) -> list:
    """The table's columns: each benchmark's headline measures (``column``) that some row has a value of
    overall (a benchmark nobody ran, or a measure no run defines, gets no empty column)."""
    shown = {(r["benchmark"], r["metric"]) for r in records if r["view"] == "overall" and r["value"] is not None}
    return [{"id": f"{benchmark.name}:{spec.id}", "benchmark": benchmark.name, "benchmark_name": benchmark.display_name,
             "metric": spec.id, "name": spec.name, "ideal": spec.ideal, "unit": spec.unit, "description": spec.description,
             "digits": spec.decimals} for benchmark in benchmarks() for spec in benchmark.metrics
            if spec.column and (benchmark.name, spec.id) in shown]


def _variants(records: list) -> list:
    """The controls: each variant of a benchmark some run has, with the values its records have (known ones
    first, in order)."""
    variants = []
    for benchmark in benchmarks():
        for variant in benchmark.variants:
            present = {r.get(variant.field) for r in records if r["benchmark"] == benchmark.name} - {None}
            if not present:
                continue
            values = [v for v in variant.order if v in present] + sorted(present - set(variant.order))
            variants.append({"field": variant.field, "label": variant.label, "benchmark": benchmark.name,
                             "values": values, "in_domains": variant.in_domains})
    return variants


def leaderboard_data(runs: Sequence[Run], *, reports: dict | None = None, source: str = "") -> dict:
    """The data the page renders: rows (models and baselines), columns, domains, controls and records.

    Args:
        runs: loaded runs (:func:`lmbias.results.load_runs`), at most one per model and benchmark.
        reports: model name -> ``{"report": relative link or None, "note": str or None}``.
        source: where the runs came from, shown under the title.

    Raises:
        ValueError: two runs of the same benchmark for one model.
    """
    reports = reports or {}
    runs, set_aside = select_runs(runs)
    by_model = group_by_model(runs)
    records = [record for run in runs for record in _run_records(run)]
    rows = []
    for model, model_runs in by_model.items():
        report = reports.get(model, {})
        notes = _notes(model_runs) + set_aside.get(model, []) + ([report["note"]] if report.get("note") else [])
        notes += sorted({f"{get_benchmark(r['benchmark']).display_name} {r['metric']}: {r['stand_in']}"
                         for r in records if r["model"] == model and r.get("stand_in") and r["source"] == "model"})
        rows.append({"label": model, "key": model, "source": "model", "baseline": False,
                     "slug": report.get("slug", slugify(model)), "report": report.get("report"),
                     "runs": [_run_status(r) for r in model_runs], "notes": notes})
    rows += _baselines(runs, records)
    views = {r["view"] for r in records} - {"overall"}
    domains = ["overall"] + [d for d in DOMAIN_ORDER if d in views] + sorted(views - set(DOMAIN_ORDER))
    variants = _variants(records)
    ran = {run.benchmark for run in runs}
    return {
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "lmbias_version": __version__, "source": source, "columns": _columns(records), "domains": domains,
        "variants": variants, **{f"{v['field']}s": v["values"] for v in variants},
        "benchmarks": {b.name: b.display_name for b in benchmarks()},
        "overall_notes": {b.name: b.overall_note for b in benchmarks() if b.overall_note and b.name in ran},
        "rows": rows, "records": records,
        "metrics": {spec.id: {"name": spec.name, "ideal": spec.ideal, "unit": spec.unit, "description": spec.description}
                    for spec in all_metrics().values()},
    }


def _rank(run: Run) -> tuple:
    """How much of its benchmark a run shows: finished, then covering the full setting, then covering
    more (the sum of its data counts: prompts, items, pairs ...), then nothing missing."""
    counts = ((run.results or {}).get("data") or {}).get("counts") or {}
    covered = sum(value for value in counts.values() if isinstance(value, int) and not isinstance(value, bool))
    return (run.results is not None, not run.partial, covered, not run.missing)


def select_runs(runs: Sequence[Run]) -> tuple[list, dict]:
    """One run per model and benchmark: where a model has several runs of a benchmark (a finished one
    and an unfinished one in another folder, a full and a partial one), the most finished and complete.

    Returns ``(chosen runs, {model: [notes on the runs set aside]})``; a model's other runs are shown
    as notes on its row, never as another model.

    Raises:
        ValueError: two runs of a benchmark for one model that are equally finished and complete
            (the table would be ambiguous).
    """
    chosen, notes = [], {}
    groups: dict = {}
    for run in runs:
        groups.setdefault((run.model, run.benchmark), []).append(run)
    for (model, benchmark), group in groups.items():
        best = max(group, key=_rank)
        ties = [run for run in group if _rank(run) == _rank(best)]
        if len(ties) > 1:
            raise InputError(f"two {benchmark} runs of model {model!r} that cover as much: {ties[0].path} and "
                             f"{ties[1].path}; give one run per model and benchmark")
        chosen.append(best)
        name = get_benchmark(benchmark).display_name
        for other in (run for run in group if run is not best):
            state = "unfinished" if other.results is None else "smaller partial" if other.partial else "incomplete"
            notes.setdefault(model, []).append(f"{name}: another run of this model, {state}, in {other.path} is not shown "
                                               f"(the {name} column shows {best.path})")
    return [run for run in runs if any(run is c for c in chosen)], notes


def group_by_model(runs: Sequence[Run]) -> dict:
    """Runs by ``Run.model`` (sorted by name, case-insensitively).

    Raises:
        ValueError: two runs of the same benchmark for one model (the table would be ambiguous).
    """
    by_model: dict = {}
    for run in runs:
        same = [r for r in by_model.get(run.model, []) if r.benchmark == run.benchmark]
        if same:
            raise InputError(f"two {run.benchmark} runs of model {run.model!r}: {same[0].path} and {run.path}; "
                             "give one run per model and benchmark")
        by_model.setdefault(run.model, []).append(run)
    return dict(sorted(by_model.items(), key=lambda item: item[0].lower()))
