"""The scorecard: what a reader sees first about runs, one row per benchmark run and headline measure.

Each finished run gives its benchmark's headline measures overall (:meth:`lmbias.benchmarks.base.Benchmark.headline_records`:
the measures the leaderboard shows as columns, each variant at its default), with the interval where the
run computed one, the ideal value (an unbiased model's), how far the value is from it, and marks: "partial"
(the run covers less than the paper's full setting), "stand-in" (scored with a random classifier), a record's
own ``caveat`` ("not converged": a fit that did not reach its optimum), and the
protocol where it is not the paper's (``chat``, ``generate``). An unfinished run is one row saying so. After
each benchmark's runs come its reference rows: published figures of known models on the same measures
(:class:`lmbias.benchmarks.base.Reference`, each with where it is printed). The report (:mod:`lmbias.report`)
draws it as its first table.
"""

from __future__ import annotations

from collections.abc import Sequence

from .benchmarks import benchmarks
from .benchmarks.base import UNIT_SUFFIX
from .render.common import with_ci
from .results import Run, protocol_tags


def protocol_of_run(run: Run) -> str:
    """How a run's numbers were produced, in a word or two: its ``--protocol`` (likelihood, generate) where
    the benchmark has several, "chat" for a chat run, else "paper's" (the benchmark's one protocol)."""
    results = run.results or {}
    config = results.get("config") or {}
    tags = protocol_tags(results.get("model") or {}, config)
    protocol = config.get("protocol")
    words = [protocol] if protocol and protocol not in tags else []
    return ", ".join([*words, *tags]) or "paper's"


def _row(run: Run | None, label: str, benchmark, record: dict, marks: list) -> dict:
    spec = benchmark.metric(record["metric"])
    value = record["value"]
    defined = value is not None and value == value
    return {"model": label, "benchmark": benchmark.display_name, "benchmark_id": benchmark.name, "metric": spec.id,
            "measure": spec.name, "value": value if defined else None, "ci": record.get("ci"), "ideal": spec.ideal,
            "distance": abs(value - spec.ideal) if defined else None, "unit": spec.unit, "decimals": spec.decimals,
            "protocol": protocol_of_run(run) if run is not None else "", "marks": marks,
            "partial": "; ".join(f"{what} {how}" for what, how in run.partial.items()) if run is not None else "",
            "reference": record.get("reference"), "scope": record.get("scope", "overall"), "paper": benchmark.paper}


def scorecard_rows(runs: Sequence[Run], labels: Sequence[str], *, references: bool = True) -> list[dict]:
    """The scorecard's rows for ``runs`` (``labels``: each run's display name), benchmark by benchmark in
    the registry's order: each run's headline measures, then (``references``) the benchmark's published
    figures. Each row: ``model``, ``benchmark``, ``measure``, ``value`` (None: undefined or not finished),
    ``ci``, ``ideal``, ``distance``, ``unit``, ``decimals``, ``protocol``, ``marks``, ``partial``,
    ``reference`` (the citation of a reference row, else None), ``scope``, ``paper``."""
    rows = []
    for benchmark in benchmarks():
        chosen = [(run, label) for run, label in zip(runs, labels) if run.benchmark == benchmark.name]
        for run, label in chosen:
            if run.results is None:
                rows.append({"model": label, "benchmark": benchmark.display_name, "benchmark_id": benchmark.name,
                             "metric": None, "measure": "-", "value": None, "ci": None, "ideal": None, "distance": None,
                             "unit": "", "decimals": 1, "protocol": protocol_of_run(run), "marks": ["not finished"],
                             "partial": "", "reference": None, "scope": "overall", "paper": benchmark.paper})
                continue
            marks = ["partial"] if run.partial else []
            each = [variant.field for variant in benchmark.variants if variant.each]
            for record in benchmark.headline_records(run.results.get("records", [])):
                row = _row(run, label, benchmark, record, marks + (["stand-in"] if record.get("stand_in") else [])
                           + ([record["caveat"]] if record.get("caveat") else []))
                rows.append({**row, "scope": " ".join(str(record[field]) for field in each if record.get(field)) or "overall"})
        if chosen and references and benchmark.baseline is not None:
            for run, label in chosen[:1]:  # the human baseline of the same prompts (BOLD's Wikipedia), from the first run
                for record in benchmark.headline_records((run.results or {}).get("records", []), source=benchmark.baseline.source):
                    rows.append(_row(None, benchmark.baseline.label, benchmark,
                                     {**record, "reference": benchmark.baseline.description, "scope": f"as in {label}'s run"},
                                     ["reference"]))
        if chosen and references:
            for reference in benchmark.references:
                record = {"metric": reference.metric, "value": reference.value, "reference": reference.citation,
                          "scope": reference.scope or reference.domain}
                row = _row(None, reference.model, benchmark, record, ["reference"])
                printed = len(repr(float(reference.value)).partition(".")[2])  # shown with the decimals printed
                rows.append({**row, "decimals": max(row["decimals"], printed)})
    return rows


def value_text(row: dict, *, interval: bool = True) -> str:
    """A row's value with its unit and (``interval``) its interval: "61.9 [58.2, 65.4] %"; "n/a" when undefined."""
    if row["value"] is None:
        return "n/a"
    text = with_ci(row["value"], row["ci"] if interval else None, row["decimals"])
    return text + UNIT_SUFFIX.get(row["unit"], "")


def number_text(value, row: dict, *, difference: bool = False) -> str:
    """``value`` (the ideal, a distance) in a row's unit and decimals; "" for None. A ``difference`` of two
    percentages is in percentage points."""
    unit = "pp" if difference and row["unit"] == "%" else row["unit"]
    return "" if value is None else f"{value:.{row['decimals']}f}{UNIT_SUFFIX.get(unit, '')}"
