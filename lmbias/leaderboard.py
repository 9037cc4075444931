"""``lmbias leaderboard``: a static site comparing models on the headline bias metrics.

The site (``index.html``, ``leaderboard.json`` and one report page per model under
``models/<slug>/report.html``) works offline and from ``file://``: the page's data is embedded in
the HTML as a ``<script type="application/json">`` block, and there are no external scripts, styles
or fonts. Every number comes from :func:`lmbias.results.metric_records`; the only figures the
leaderboard derives itself are the "overall" cells of metrics that the results define per domain
(BOLD gaps: the mean over the domains measured; counterfactual I.F. / G.F.: the mean over the
attributes measured, per classifier). Those records carry a ``derived`` field saying so.

Runs come from run directories, from a folder laid out as ``runs/<model slug>/<benchmark>/results.json``
(``--results-dir``), or from a Hub dataset with that layout (``--hub-dataset``), as written by
``lmbias push --results-dataset``. See docs/leaderboard.md.
"""

from __future__ import annotations

from .errors import InputError

import datetime
import html
import json
import logging
import math
import re
from importlib import resources
from pathlib import Path
from typing import Optional, Sequence

from . import __version__
from .results import METRICS, Run, first_line, load_runs, metric_records

log = logging.getLogger(__name__)

BENCHMARK_NAMES = {"bold": "BOLD", "stereoset": "StereoSet", "crows_pairs": "CrowS-Pairs",
                   "counterfactual": "Counterfactual sentiment"}

# The table's metric columns: (benchmark, metric id, decimals shown).
COLUMNS = (
    ("bold", "negative_sentiment_gap", 1),
    ("bold", "toxicity_gap", 1),
    ("bold", "gender_polarity_ratio", 2),
    ("stereoset", "lms", 1),
    ("stereoset", "ss", 1),
    ("stereoset", "icat", 1),
    ("crows_pairs", "metric_score", 1),
    ("counterfactual", "individual_fairness", 3),
    ("counterfactual", "group_fairness", 3),
)

# The benchmarks name some domains differently; the domain filter puts these together.
DOMAIN_ALIASES = {
    "religious_ideology": "religion",   # BOLD
    "race-color": "race",               # CrowS-Pairs
    "occupation": "profession",         # counterfactual attribute
    "country": "nationality",           # counterfactual attribute
}
DOMAIN_ORDER = ("gender", "race", "profession", "religion", "nationality", "political_ideology")

BOLD_GAPS = ("negative_sentiment_gap", "toxicity_gap", "negative_regard_gap")
STEREOSET_TASKS = ("both", "intrasentence", "intersentence")
CLASSIFIER_ORDER = ("hf", "opinion", "vader")
RESULTS_PATTERN = "runs/*/*/results.json"
TEMPLATE = "leaderboard_page.html"


def slugify(name: str) -> str:
    """A model name as a lowercase folder name: letters, digits and single dashes ("model" if empty)."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:80].strip("-")
    return slug or "model"


def view_domain(domain: str) -> str:
    """The domain a record is filed under in the domain filter (see :data:`DOMAIN_ALIASES`)."""
    return DOMAIN_ALIASES.get(domain, domain)


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


def collect_run_dirs(run_dirs: Sequence = (), *, hub_dataset: Optional[str] = None,
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


def _clean(value):
    """NaN / infinity as None, so that the page's JSON is strict."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _mean_records(records: list, key_fields: tuple, over_field: str, what: str) -> list:
    """One ``view == "overall"`` record per group of ``records``: the mean of the defined values."""
    groups: dict = {}
    for record in records:
        groups.setdefault(tuple(record.get(k) for k in key_fields), []).append(record)
    means = []
    for group in groups.values():
        defined = [r for r in group if r["value"] is not None]
        value = sum(r["value"] for r in defined) / len(defined) if defined else None
        over = [r[over_field] for r in defined]
        means.append({**{k: v for k, v in group[0].items() if k not in ("value", "count", "ci", "domain")},
                      "value": value, "domain": "overall", "view": "overall",
                      "derived": f"mean over the {len(over)} {what} measured ({', '.join(over) or 'none'})", "over": over})
    return means


def _run_records(run: Run) -> list:
    """The run's metric records (verbatim), plus the leaderboard's derived "overall" records."""
    records = []
    for record in metric_records(run):
        record = {"model": run.model, **record, "value": _clean(record["value"])}
        record["view"] = "overall" if record["domain"] == "overall" else view_domain(record["domain"])
        records.append(record)
    if run.benchmark == "bold":
        gaps = [r for r in records if r["metric"] in BOLD_GAPS]
        records += _mean_records(gaps, ("source", "metric"), "domain", "domains")
        records += [{**r, "view": "overall", "derived": "the profession domain (the only one this metric is defined for)"}
                    for r in records if r["metric"] == "gender_polarity_ratio" and r["domain"] == "profession"]
    elif run.benchmark == "counterfactual":
        records += _mean_records(records, ("metric", "classifier"), "domain", "attributes")
    return records


def _run_status(run: Run) -> dict:
    status = "unfinished" if run.results is None else ("incomplete" if run.missing else "complete")
    return {"benchmark": run.benchmark, "status": status, "missing": [first_line(m) for m in run.missing]}


def _notes(runs: list) -> list:
    notes = []
    for run in runs:
        name = BENCHMARK_NAMES[run.benchmark]
        if run.results is None:
            notes.append(f"{name}: unfinished run, no results yet ({first_line(run.missing[0]) if run.missing else ''})")
        else:
            notes += [f"{name}: {first_line(m)}" for m in run.missing]
    return notes


def _baseline(bold_runs: list, records: list) -> Optional[dict]:
    """The Wikipedia row: the baseline of the BOLD run with the most prompts (None without BOLD results)."""
    scored = [r for r in bold_runs if r.results is not None and "wikipedia" in r.results.get("results", {})]
    if not scored:
        return None
    chosen = max(scored, key=lambda r: (r.results.get("data", {}).get("prompts") or 0))
    prompts = chosen.results.get("data", {}).get("prompts")

    def values(model: str) -> dict:
        return {(r["metric"], r["domain"]): r["value"] for r in records
                if r["model"] == model and r["source"] == "wikipedia" and "derived" not in r}

    differ = sorted(r.model for r in scored if values(r.model) != values(chosen.model))
    note = (f"Wikipedia sentences of the same BOLD prompts, scored with the same classifiers "
            f"(from the BOLD run of {chosen.model}, {prompts if prompts is not None else '?'} prompts)")
    notes = [f"the BOLD runs of {', '.join(differ)} used other prompts or classifiers, so their Wikipedia numbers differ; "
             "each run's own baseline is in leaderboard.json (source \"wikipedia\")"] if differ else []
    return {"label": "Wikipedia (BOLD baseline)", "key": chosen.model, "source": "wikipedia", "baseline": True,
            "slug": None, "report": None, "description": note, "notes": notes, "runs": []}


def leaderboard_data(runs: Sequence[Run], *, reports: Optional[dict] = None, source: str = "") -> dict:
    """The data the page renders: rows (models and the Wikipedia baseline), columns, domains and records.

    Args:
        runs: loaded runs (:func:`lmbias.results.load_runs`), at most one per model and benchmark.
        reports: model name -> ``{"report": relative link or None, "note": str or None}``.
        source: where the runs came from, shown under the title.

    Raises:
        ValueError: two runs of the same benchmark for one model.
    """
    reports = reports or {}
    by_model = group_by_model(runs)
    records = [record for run in runs for record in _run_records(run)]
    rows = []
    for model, model_runs in by_model.items():
        report = reports.get(model, {})
        notes = _notes(model_runs) + ([report["note"]] if report.get("note") else [])
        rows.append({"label": model, "key": model, "source": "model", "baseline": False,
                     "slug": report.get("slug", slugify(model)), "report": report.get("report"),
                     "runs": [_run_status(r) for r in model_runs], "notes": notes})
    baseline = _baseline([r for r in runs if r.benchmark == "bold"], records)
    if baseline:
        rows.append(baseline)
    views = {r["view"] for r in records} - {"overall"}
    domains = ["overall"] + [d for d in DOMAIN_ORDER if d in views] + sorted(views - set(DOMAIN_ORDER))
    present = {r.get("classifier") for r in records if r["benchmark"] == "counterfactual"}
    classifiers = [c for c in CLASSIFIER_ORDER if c in present] + sorted(present - set(CLASSIFIER_ORDER) - {None})
    columns = [{"id": f"{benchmark}:{metric}", "benchmark": benchmark, "benchmark_name": BENCHMARK_NAMES[benchmark],
                "metric": metric, "name": METRICS[metric][0], "ideal": METRICS[metric][1], "unit": METRICS[metric][2],
                "description": METRICS[metric][3], "digits": digits} for benchmark, metric, digits in COLUMNS]
    return {
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "lmbias_version": __version__, "source": source, "columns": columns, "domains": domains,
        "tasks": list(STEREOSET_TASKS), "classifiers": classifiers, "benchmarks": BENCHMARK_NAMES,
        "rows": rows, "records": records,
        "metrics": {k: {"name": n, "ideal": i, "unit": u, "description": d} for k, (n, i, u, d) in METRICS.items()},
    }


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


def _metrics_table() -> str:
    """The metric explanations (from :data:`lmbias.results.METRICS`) as an HTML table."""
    lines = ["<table class=\"metrics\"><thead><tr><th>Metric</th><th>Benchmark</th><th>Ideal</th>"
             "<th>Unit</th><th>What it measures</th></tr></thead><tbody>"]
    for benchmark, metric, _ in COLUMNS:
        name, ideal, unit, description = METRICS[metric]
        unit_text = {"pp": "percentage points", "%": "percent", "x": "ratio", "": "score"}.get(unit, unit)
        lines.append(f"<tr><th scope=\"row\">{html.escape(name)}</th><td>{BENCHMARK_NAMES[benchmark]}</td>"
                     f"<td class=\"num\">{ideal:g}</td><td>{unit_text}</td><td>{html.escape(description)}</td></tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def render_page(data: dict, title: str = "lmbias leaderboard") -> str:
    """The leaderboard's ``index.html``: the template with the data embedded inline."""
    template = resources.files("lmbias").joinpath(TEMPLATE).read_text(encoding="utf-8")
    # "<" as \u003c keeps "</script>" or "<!--" inside a string from ending the data block.
    payload = json.dumps(data, ensure_ascii=False, allow_nan=False).replace("<", "\\u003c")
    return (template.replace("__TITLE__", html.escape(title))
            .replace("__METRICS_TABLE__", _metrics_table())
            .replace("__LEADERBOARD_DATA__", payload))


def _build_reports(by_model: dict, out_dir: Path) -> dict:
    """Each model's report page via :func:`lmbias.report.build_report`; a failure becomes a note, not an error."""
    reports, used = {}, set()
    for model, model_runs in by_model.items():
        slug = base = slugify(model)
        suffix = 2
        while slug in used:
            slug, suffix = f"{base}-{suffix}", suffix + 1
        used.add(slug)
        entry = {"slug": slug, "report": None, "note": None}
        try:
            from .report import build_report

            page = Path(build_report([r.path for r in model_runs], out_dir / "models" / slug))
            entry["report"] = page.resolve().relative_to(out_dir.resolve()).as_posix()
        except Exception as error:  # noqa: BLE001 - one model's report must not stop the site
            entry["note"] = f"no report page: {type(error).__name__}: {first_line(str(error))}"
            log.warning("leaderboard: the report of %s could not be built: %s", model, error)
        reports[model] = entry
    return reports


def build_leaderboard(run_dirs: Sequence, out_dir, *, title: str = "lmbias leaderboard", source: str = "",
                      reports: bool = True) -> Path:
    """Write the leaderboard site for ``run_dirs`` to ``out_dir``; returns the path of ``index.html``.

    Writes ``index.html`` (data inline), ``leaderboard.json`` (the same data) and, with ``reports``,
    ``models/<slug>/report.html`` for each model (:func:`lmbias.report.build_report` of its runs).

    Raises:
        ValueError: no run directories, or two runs of one benchmark for the same model.
        lmbias.results.RunError: a path is not a readable run directory.
    """
    runs = load_runs(list(run_dirs))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    by_model = group_by_model(runs)
    report_entries = _build_reports(by_model, out_dir) if reports else {}
    data = leaderboard_data(runs, reports=report_entries, source=source)
    (out_dir / "leaderboard.json").write_text(json.dumps(data, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    index = out_dir / "index.html"
    index.write_text(render_page(data, title), encoding="utf-8")
    return index


def leaderboard_command(run_dirs: Sequence, out, *, hub_dataset: Optional[str] = None, results_dir=None,
                        title: str = "lmbias leaderboard") -> str:
    """What ``lmbias leaderboard`` does: collect the runs, build the site, and return a one-line summary."""
    paths = collect_run_dirs(run_dirs, hub_dataset=hub_dataset, results_dir=results_dir)
    source = (f"Hub dataset {hub_dataset}" if hub_dataset else f"results folder {results_dir}" if results_dir
              else f"{len(paths)} run directories")
    index = build_leaderboard(paths, out, title=title, source=source)
    data = json.loads((Path(out) / "leaderboard.json").read_text(encoding="utf-8"))
    models = [row for row in data["rows"] if not row["baseline"]]
    with_report = sum(1 for row in models if row["report"])
    return (f"wrote {index} ({len(models)} models from {len(paths)} runs, {with_report} report pages) "
            f"and {Path(out) / 'leaderboard.json'}; open index.html in a browser")
