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
from pathlib import Path

from ..benchmarks import benchmarks, get_benchmark
from ..checks import check_scalar
from ..errors import InputError
from ..files import output_folder, read_json, write_atomic
from ..model_source import looks_like_path
from ..render import html
from ..render.common import Figures, unique_labels
from ..resources import cache_dir
from ..results import Run, data_source, dataset_of, layout_checked, load_runs, protocol_description
from ..version import __version__

DPI = 200  # figures sharp enough for print; PNG files of a few hundred kB


def _flat(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{key}={_flat(v)}" for key, v in value.items())
    if isinstance(value, list):
        return ", ".join(_flat(v) for v in value)
    return "null" if value is None else str(value)


def model_origin(model: dict) -> str:
    """Where a run's model came from, in words: a Hub id (with its commit), a local folder or file, or
    a converted copy in this machine's cache (the embedded model), never a bare cache path."""
    name, source, revision = model.get("name"), model.get("source"), model.get("revision")
    if not source:
        return "not recorded"
    source = str(source)
    caches = [str(cache_dir()), str(Path("~/.cache").expanduser())]
    if source != name and any(source.startswith(folder) for folder in caches):
        return f"{name or 'the model'}, converted into this machine's cache (not a file to share)"
    if looks_like_path(source):
        return f"local folder or file {source}"
    return f"Hugging Face Hub model {source}" + (f" at revision {revision}" if revision else "")


def _header(run: Run, label: str, anchor: str) -> list:
    """The run's heading, a table of what produced it, and its Missing box."""
    results = run.results or {}
    config_file = run.path / "config.json"
    saved = read_json(config_file) if run.results is None and config_file.exists() else {}
    data = dataset_of(run)
    config = results.get("config") or saved.get("config", {})
    versions = results.get("versions") or saved.get("versions", {})
    counts = results.get("data", {}).get("counts", {})
    name = get_benchmark(run.benchmark).display_name
    rows = [["model", run.model], ["model source", model_origin(results.get("model") or {})],
            ["benchmark", name], ["run directory", str(run.path)],
            ["data", f"{data['name']}, split {data['split'] or 'not recorded'}, from {data_source(run)['text']}"],
            ["items", _flat(counts) or "not recorded"],
            ["protocol", protocol_description(results.get("model") or {}, config)],
            ["configuration", _flat(config) or "not recorded"],
            ["versions", _flat({k: versions.get(k, "?") for k in ("lmbias", "torch", "transformers", "accelerate", "python")})]]
    parts = [html.tag("h2", f"Run: {label} ({name})", id=anchor), html.table(["field", "value"], rows), html.missing_box(run.missing)]
    if run.partial:
        parts.insert(1, html.note("Partial run: it covers less than the paper's full setting, so its numbers are not "
                                  "comparable with the paper's or with full runs: "
                                  + "; ".join(f"{what}: {how}" for what, how in run.partial.items()) + "."))
    if run.results is None:
        parts.append(html.note("This run has no results.json, so nothing can be plotted for it; finish it first."))
    return parts


def build_report(run_dirs, out_dir, *, dpi: int = DPI, title: str | None = None, **options) -> Path:
    """Write ``OUT/report.html`` (self-contained) and one PNG per figure for the runs in ``run_dirs``.

    Args:
        run_dirs: run directories written by ``lmbias run ...`` (any mix of benchmarks; at least one).
        out_dir: folder for ``report.html`` and the PNGs (created if needed).
        dpi: resolution of the figures' PNG files (10 to 1200).
        title: the page's heading and title (default: "lmbias bias report" and the models).
        options: the benchmarks' report options (``lmbias report --help``), e.g. BOLD's ``compare``
            (psycholinguistic-norm pairs, ``["DOMAIN:A:B", ...]`` or ``{domain: (a, b)}``) and
            ``gender_method`` (the profession skew figure's method: unigram, wavg, max).

    Returns:
        The path of ``report.html``.

    Raises:
        ValueError: no run directories, a bad option, ``out_dir`` a file or not writable;
            :class:`lmbias.results.RunError` (a ValueError) for a folder that is not a run or has an
            unsupported schema version. Nothing is written then (a folder created for it is removed).
    """
    check_scalar(dpi, "--dpi", minimum=10, maximum=1200)
    if title is not None and (not isinstance(title, str) or not title.strip()):
        raise InputError(f"--title must be a non-empty text, got {title!r}")
    runs = load_runs(run_dirs)
    with output_folder(out_dir, "--out") as out:
        return _write_report(runs, out, Figures(out, dpi), title, options)


def _write_report(runs: list, out: Path, figures: Figures, title: str | None, options: dict) -> Path:
    labels = unique_labels(runs)
    overview = [[html.tag("a", label, href=f"#run-{i}"), get_benchmark(run.benchmark).display_name,
                 "unfinished" if run.results is None else (f"{len(run.missing)} missing" if run.missing else
                                                           "partial" if run.results.get("partial") else "complete")]
                for i, (run, label) in enumerate(zip(runs, labels))]
    body = [html.tag("h1", title or "lmbias bias report"),
            html.tag("p", f"Generated {datetime.datetime.now():%Y-%m-%d %H:%M} by lmbias {__version__} from {len(runs)} run(s)."),
            html.table(["model", "benchmark", "status"], overview, "Runs")]
    for i, (run, label) in enumerate(zip(runs, labels)):
        body += _header(run, label, f"run-{i}")
    for benchmark in benchmarks():
        chosen = [(run, label) for run, label in zip(runs, labels) if run.benchmark == benchmark.name and run.results is not None]
        if chosen:
            files = " or ".join(str(run.path / "results.json") for run, _ in chosen)
            with layout_checked(files, benchmark.name):  # a field no record reads, damaged
                body += benchmark.report_section([run for run, _ in chosen], [label for _, label in chosen], figures, options)
    return write_atomic(out / "report.html", html.page(title or "lmbias report: " + ", ".join(dict.fromkeys(labels)), body))


__all__ = ["build_report"]
