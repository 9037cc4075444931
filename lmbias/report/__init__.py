"""``lmbias report``: one self-contained HTML page with the papers' figures for one or more runs.

>>> build_report(["runs/bold-gpt2", "runs/bold-smollm2"], "report")   # doctest: +SKIP
PosixPath('report/report.html')

Several runs of a benchmark are drawn side by side (one bar or panel per model; BOLD always adds
the Wikipedia baseline). Each run gets a header (model, data revision, configuration, versions)
and a "Missing" box listing what the run lacks (skipped metrics, tasks not run, an unfinished
run). Every figure is also written as a PNG next to ``report.html``. See docs/report.md.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from .. import __version__
from ..benchmarks import benchmarks, get_benchmark
from ..files import write_atomic
from ..results import Run, dataset_of, load_runs
from . import html
from .common import Figures, unique_labels


def _flat(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{key}={_flat(v)}" for key, v in value.items())
    if isinstance(value, list):
        return ", ".join(_flat(v) for v in value)
    return "null" if value is None else str(value)


def _header(run: Run, label: str, anchor: str) -> list:
    """The run's heading, a table of what produced it, and its Missing box."""
    results = run.results or {}
    config_file = run.path / "config.json"
    saved = json.loads(config_file.read_text()) if run.results is None and config_file.exists() else {}
    data = dataset_of(run)
    config = results.get("config") or saved.get("config", {})
    versions = results.get("versions") or saved.get("versions", {})
    counts = results.get("data", {}).get("counts", {})
    name = get_benchmark(run.benchmark).display_name
    rows = [["model", label], ["model source", results.get("model", {}).get("source", "not recorded")],
            ["benchmark", name], ["run directory", str(run.path)],
            ["data", f"{data['name']} ({data['type']}), split {data['split']}, revision {data['revision'] or 'not recorded'}"],
            ["items", _flat(counts) or "not recorded"], ["configuration", _flat(config) or "not recorded"],
            ["versions", _flat({k: versions.get(k, "?") for k in ("lmbias", "torch", "transformers", "accelerate", "python")})]]
    parts = [html.tag("h2", f"Run: {label} ({name})", id=anchor), html.table(["field", "value"], rows), html.missing_box(run.missing)]
    if run.partial:
        parts.insert(1, html.note("Partial run: it covers less than the paper's full setting, so its numbers are not "
                                  "comparable with the paper's or with full runs: "
                                  + "; ".join(f"{what}: {how}" for what, how in run.partial.items()) + "."))
    if run.results is None:
        parts.append(html.note("This run has no results.json, so nothing can be plotted for it; finish it first."))
    return parts


def build_report(run_dirs, out_dir, *, dpi: int = 110, **options) -> Path:
    """Write ``OUT/report.html`` (self-contained) and one PNG per figure for the runs in ``run_dirs``.

    Args:
        run_dirs: run directories written by ``lmbias run ...`` (any mix of benchmarks; at least one).
        out_dir: folder for ``report.html`` and the PNGs (created if needed).
        dpi: resolution of the figures.
        options: the benchmarks' report options (``lmbias report --help``), e.g. BOLD's ``compare``
            (psycholinguistic-norm pairs, ``["DOMAIN:A:B", ...]`` or ``{domain: (a, b)}``) and
            ``gender_method`` (the profession skew figure's method: unigram, wavg, max).

    Returns:
        The path of ``report.html``.

    Raises:
        ValueError: no run directories or a bad option; :class:`lmbias.results.RunError` (a ValueError)
            for a folder that is not a run or has an unsupported schema version.
    """
    runs = load_runs(run_dirs)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = Figures(out, dpi)
    labels = unique_labels(runs)
    overview = [[html.tag("a", label, href=f"#run-{i}"), get_benchmark(run.benchmark).display_name,
                 "unfinished" if run.results is None else (f"{len(run.missing)} missing" if run.missing else "complete")]
                for i, (run, label) in enumerate(zip(runs, labels))]
    body = [html.tag("h1", "lmbias bias report"),
            html.tag("p", f"Generated {datetime.datetime.now():%Y-%m-%d %H:%M} by lmbias {__version__} from {len(runs)} run(s)."),
            html.table(["model", "benchmark", "status"], overview, "Runs")]
    for i, (run, label) in enumerate(zip(runs, labels)):
        body += _header(run, label, f"run-{i}")
    for benchmark in benchmarks():
        chosen = [(run, label) for run, label in zip(runs, labels) if run.benchmark == benchmark.name and run.results is not None]
        if chosen:
            body += benchmark.report_section([run for run, _ in chosen], [label for _, label in chosen], figures, options)
    path = write_atomic(out / "report.html", html.page("lmbias report: " + ", ".join(dict.fromkeys(labels)), body))
    return path


__all__ = ["build_report"]
