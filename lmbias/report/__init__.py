"""``lmbias report``: one self-contained HTML page with the papers' figures for one or more runs.

>>> build_report(["runs/bold-gpt2", "runs/bold-smollm2"], "report")   # doctest: +SKIP
PosixPath('report/report.html')

Several runs of a benchmark are drawn side by side (one bar or panel per model; BOLD always adds
the Wikipedia baseline). Each run gets a header (model, data revision, configuration, versions)
and a "Missing" box listing what the run lacks (skipped metrics, tasks not run, an unfinished
run). Every figure is also written as a PNG next to ``report.html``. See docs/report.md.
"""

from __future__ import annotations

from ..errors import InputError

import datetime
import json
from pathlib import Path
from typing import Iterable, Mapping, Union

from .. import __version__
from ..data.bold import DOMAINS
from ..results import BENCHMARKS, Run, dataset_of, load_runs
from . import bold, html, scores
from .common import Figures, unique_labels

GENDER_METHODS = ("unigram", "wavg", "max")
NAMES = {"bold": "BOLD", "stereoset": "StereoSet", "crows_pairs": "CrowS-Pairs", "counterfactual": "Counterfactual sentiment"}


def parse_compare(compare: Union[None, Iterable[str], Mapping[str, tuple]]) -> dict:
    """``{domain: (group_a, group_b)}`` from ``DOMAIN:GROUP_A:GROUP_B`` strings (or such a dict).

    Raises:
        ValueError: a string not of that form, or a domain BOLD does not have.
    """
    if compare is None:
        return {}
    items = compare.items() if isinstance(compare, Mapping) else []
    if not isinstance(compare, Mapping):
        if isinstance(compare, str):
            compare = [compare]
        for text in compare:
            parts = text.split(":")
            if len(parts) != 3 or not all(parts):
                raise InputError(f"--compare expects DOMAIN:GROUP_A:GROUP_B, e.g. gender:American_actors:American_actresses; got {text!r}")
            items.append((parts[0], (parts[1], parts[2])))
    pairs = {}
    for domain, (a, b) in items:
        if domain not in DOMAINS:
            raise InputError(f"--compare: unknown BOLD domain {domain!r}; choose from {list(DOMAINS)}")
        pairs[domain] = (a, b)
    return pairs


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
    if run.benchmark in ("bold", "counterfactual") and results:
        config = {**{k: v for k, v in results.get("generation", {}).items() if k != "file"}, **results.get("selection", {})}
        options = results.get("results", {}).get("model", {}).get("options", {})
        config.update({k: v for k, v in options.items() if k != "lmbias_version"})
    else:
        config = results.get("config") or saved.get("config", {})
    versions = results.get("versions") or saved.get("versions", {})
    counts = results.get("data", {}).get("counts") or {k: v for k, v in results.get("data", {}).items() if k in ("prompts", "domains", "attributes")}
    rows = [["model", label], ["model source", results.get("model", {}).get("source", "not recorded")],
            ["benchmark", NAMES[run.benchmark]], ["run directory", str(run.path)],
            ["data", f"{data['name']} ({data['type']}), split {data['split']}, revision {data['revision'] or 'not recorded'}"],
            ["items", _flat(counts) or "not recorded"], ["configuration", _flat(config) or "not recorded"],
            ["versions", _flat({k: versions.get(k, "?") for k in ("lmbias", "torch", "transformers", "python")})]]
    parts = [html.tag("h2", f"Run: {label} ({NAMES[run.benchmark]})", id=anchor), html.table(["field", "value"], rows), html.missing_box(run.missing)]
    if run.results is None:
        parts.append(html.note("This run has no results.json, so nothing can be plotted for it; finish it first."))
    return parts


def build_report(run_dirs, out_dir, *, compare=None, gender_method: str = "max", dpi: int = 110) -> Path:
    """Write ``OUT/report.html`` (self-contained) and one PNG per figure for the runs in ``run_dirs``.

    Args:
        run_dirs: run directories written by ``lmbias run ...`` (any mix of benchmarks; at least one).
        out_dir: folder for ``report.html`` and the PNGs (created if needed).
        compare: BOLD psycholinguistic-norm pairs overriding the defaults, as ``["DOMAIN:A:B", ...]``
            or ``{domain: (a, b)}`` (defaults: :data:`lmbias.report.bold.DEFAULT_COMPARE`).
        gender_method: the gender-polarity method of the profession skew figure (unigram, wavg, max).
        dpi: resolution of the figures.

    Returns:
        The path of ``report.html``.

    Raises:
        ValueError: no run directories, a bad ``compare`` or ``gender_method``; :class:`lmbias.results.RunError`
            (a ValueError) for a folder that is not a run or has an unsupported schema version.
    """
    if gender_method not in GENDER_METHODS:
        raise InputError(f"gender_method must be one of {GENDER_METHODS}, got {gender_method!r}")
    pairs = parse_compare(compare)
    runs = load_runs(run_dirs)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = Figures(out, dpi)
    labels = unique_labels(runs)
    overview = [[html.tag("a", label, href=f"#run-{i}"), NAMES[run.benchmark],
                 "unfinished" if run.results is None else (f"{len(run.missing)} missing" if run.missing else "complete")]
                for i, (run, label) in enumerate(zip(runs, labels))]
    body = [html.tag("h1", "lmbias bias report"),
            html.tag("p", f"Generated {datetime.datetime.now():%Y-%m-%d %H:%M} by lmbias {__version__} from {len(runs)} run(s)."),
            html.table(["model", "benchmark", "status"], overview, "Runs")]
    for i, (run, label) in enumerate(zip(runs, labels)):
        body += _header(run, label, f"run-{i}")
    sections = {"bold": lambda r, l: bold.section(r, l, figures, pairs, gender_method),
                "stereoset": lambda r, l: scores.stereoset(r, l, figures),
                "crows_pairs": lambda r, l: scores.crows_pairs(r, l, figures),
                "counterfactual": lambda r, l: scores.counterfactual(r, l, figures)}
    for benchmark in BENCHMARKS:
        chosen = [(run, label) for run, label in zip(runs, labels) if run.benchmark == benchmark and run.results is not None]
        if chosen:
            body += sections[benchmark]([run for run, _ in chosen], [label for _, label in chosen])
    path = out / "report.html"
    path.write_text(html.page("lmbias report: " + ", ".join(dict.fromkeys(labels)), body), encoding="utf-8")
    return path


__all__ = ["build_report", "parse_compare"]
