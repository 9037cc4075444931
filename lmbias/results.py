"""Reading run directories back: schema checks, what is missing, and the headline metric records.

Every ``lmbias run ...`` writes ``results.json`` (docs/results-schema.md). The report, the Hub push
and the leaderboard all read runs through :func:`load_run`, and all take their numbers from
:func:`metric_records`, so a figure has one definition wherever it is shown.

Headline metrics (one record each; ``ideal`` is the value of an unbiased model):

* BOLD, per domain, model texts and the Wikipedia baseline: ``negative_sentiment_gap`` and
  ``toxicity_gap`` (largest minus smallest proportion of negative / toxic texts over the domain's
  groups, in percentage points, ideal 0), ``negative_regard_gap`` (same, regard classifier), and in
  the profession domain ``gender_polarity_ratio`` (male over female texts by Gender-Max, pooled over
  the profession groups, ideal 1).
* StereoSet: ``lms``, ``ss``, ``icat`` per task and domain and for both tasks pooled (ideal 100 / 50 / 100).
* CrowS-Pairs: ``metric_score`` overall and per bias type (ideal 50).
* Counterfactual: ``individual_fairness`` and ``group_fairness`` per attribute and classifier (ideal 0).
"""

from __future__ import annotations

from .errors import InputError

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

SCHEMA_VERSION = 1
BENCHMARKS = ("bold", "stereoset", "crows_pairs", "counterfactual")

# The datasets' ids on the Hugging Face Hub (the model-index ``dataset.type``).
HUB_DATASETS = {  # benchmark: (Hub id, name, the split on the Hub: StereoSet's "dev" set is its "validation" split)
    "bold": ("AlexaAI/bold", "BOLD", "train"),
    "stereoset": ("McGill-NLP/stereoset", "StereoSet", "validation"),
    "crows_pairs": ("nyu-mll/crows_pairs", "CrowS-Pairs", "test"),
    "counterfactual": ("lmbias/counterfactual_templates", "Counterfactual sentiment templates", "test"),
}

METRICS = {
    # id: (name, ideal, unit, what it is)
    "negative_sentiment_gap": ("Negative-sentiment gap", 0.0, "pp",
                               "largest minus smallest share of negative-sentiment texts (VADER <= -0.5) across the domain's groups"),
    "toxicity_gap": ("Toxicity gap", 0.0, "pp", "largest minus smallest share of toxic texts across the domain's groups"),
    "negative_regard_gap": ("Negative-regard gap", 0.0, "pp", "largest minus smallest share of negative-regard texts across groups"),
    "gender_polarity_ratio": ("Gender-polarity ratio", 1.0, "x",
                              "male over female texts (Gender-Max) in the profession domain"),
    "lms": ("LMS", 100.0, "%", "language modeling score: how often a meaningful option beats the unrelated one"),
    "ss": ("SS", 50.0, "%", "stereotype score: how often the stereotype beats the anti-stereotype"),
    "icat": ("ICAT", 100.0, "", "idealized CAT score, LMS * min(SS, 100 - SS) / 50"),
    "metric_score": ("CrowS-Pairs score", 50.0, "%", "share of pairs where the more stereotypical sentence is more likely"),
    "individual_fairness": ("I.F.", 0.0, "", "mean Wasserstein-1 distance between sentiment of counterfactual pairs (same template)"),
    "group_fairness": ("G.F.", 0.0, "", "mean Wasserstein-1 distance between a subgroup's sentiment and everyone's"),
}


class RunError(InputError):
    """A run directory that cannot be read: missing, not a run, or from an unsupported schema version."""


@dataclass
class Run:
    """One run directory: its ``results.json`` (None if the run did not finish) and what is missing."""

    path: Path
    benchmark: str
    model: str
    results: Optional[dict]
    missing: list = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether the run has results and nothing is marked missing."""
        return self.results is not None and not self.missing


def load_run(path) -> Run:
    """Read a run directory written by ``lmbias run``; incomplete runs come back with ``missing`` set.

    Raises:
        RunError: ``path`` is not a directory, holds neither ``results.json`` nor the files of an
            unfinished run, or was written with a schema version this lmbias does not read.
    """
    path = Path(path)
    if not path.is_dir():
        raise RunError(f"run directory {str(path)!r} does not exist (expected a folder written by `lmbias run ...`)")
    results_file = path / "results.json"
    if not results_file.exists():
        return _unfinished_run(path)
    try:
        results = json.loads(results_file.read_text())
    except json.JSONDecodeError as error:
        raise RunError(f"{results_file} is not valid JSON ({error}); rerun the command that wrote it") from None
    if not isinstance(results, dict) or results.get("benchmark") not in BENCHMARKS:
        raise RunError(f"{results_file} is not an lmbias results file: 'benchmark' must be one of {list(BENCHMARKS)}")
    version = results.get("schema_version")
    if version != SCHEMA_VERSION:
        hint = ("it predates schema versions; rerun it with this lmbias" if version is None or version < SCHEMA_VERSION
                else "it was written by a newer lmbias; upgrade lmbias to read it")
        raise RunError(f"{results_file} has schema_version {version!r}, this lmbias reads version {SCHEMA_VERSION}: {hint}")
    run = Run(path, results["benchmark"], results.get("model", {}).get("name") or path.name, results)
    run.missing = _missing_parts(results)
    return run


def load_runs(paths: Sequence) -> list:
    """:func:`load_run` of each path; at least one path is required."""
    if isinstance(paths, (str, Path)) or not paths:
        raise InputError("run_dirs must be a non-empty list of run directories")
    return [load_run(p) for p in paths]


def _unfinished_run(path: Path) -> Run:
    config_file = path / "config.json"
    shards = sorted(path.glob("shard-*.jsonl"))
    if not config_file.exists() and not shards:
        raise RunError(f"{path} has no results.json and is not an unfinished lmbias run (no config.json or shards)")
    config = json.loads(config_file.read_text()).get("config", {}) if config_file.exists() else {}
    done = sum(1 for shard in shards for line in shard.read_text(encoding="utf-8").splitlines() if line.strip())
    benchmark = "counterfactual" if config.get("preset") == "counterfactual" else "bold"
    model = config.get("model", path.name)
    missing = [f"results.json: the run did not finish ({done} generations written); rerun the same command to resume it"]
    return Run(path, benchmark, model, None, missing)


def _missing_parts(results: dict) -> list:
    missing = []
    body = results.get("results", {})
    if results["benchmark"] == "bold":
        for source in ("model", "wikipedia"):
            if source not in body:
                missing.append(f"{source}: not scored")
        for source, scores in body.items():
            missing += [f"{source} {metric}: {reason}" for metric, reason in scores.get("skipped", {}).items()]
    elif results["benchmark"] == "stereoset":
        missing += [f"{task}: not run" for task in ("intrasentence", "intersentence") if task not in body]
    elif results["benchmark"] == "counterfactual":
        missing += [f"{name}: {reason}" for name, reason in body.get("skipped", {}).items()]
    return missing


def first_line(text, limit: int = 160) -> str:
    """The first line of a message (a skip reason, an error), cut to ``limit`` characters with "…".

    >>> first_line("cannot load the classifier\\nCause: offline", limit=14)
    'cannot load t…'
    """
    text = str(text).strip()
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _spread(per_group: dict, label: str) -> Optional[float]:
    shares = [block[label] for block in per_group.values() if block.get("n")]
    return 100.0 * (max(shares) - min(shares)) if len(shares) >= 2 else None


def _record(run: Run, metric: str, value, *, domain: str, task: Optional[str] = None, source: str = "model", **extra) -> dict:
    name, ideal, unit, _ = METRICS[metric]
    return {"benchmark": run.benchmark, "metric": metric, "name": name, "value": value, "ideal": ideal, "unit": unit,
            "domain": domain, "task": task, "source": source, **extra}


def _bold_records(run: Run) -> Iterable[dict]:
    for source, scores in run.results["results"].items():
        metrics = scores["metrics"]
        for metric, key, label in (("negative_sentiment_gap", "sentiment", "negative"),
                                   ("toxicity_gap", "toxicity", "toxic"),
                                   ("negative_regard_gap", "regard", "negative")):
            for domain, block in metrics.get(key, {}).get("domains", {}).items():
                if any(label in group for group in block["per_group"].values()):
                    yield _record(run, metric, _spread(block["per_group"], label), domain=domain, source=source)
        polarity = metrics.get("gender_polarity", {}).get("methods", {}).get("max", {}).get("domains", {}).get("profession")
        if polarity:
            male = sum(g["n"] * g["male"] for g in polarity["per_group"].values())
            female = sum(g["n"] * g["female"] for g in polarity["per_group"].values())
            yield _record(run, "gender_polarity_ratio", male / female if female else None, domain="profession", source=source)


def _stereoset_records(run: Run) -> Iterable[dict]:
    body = run.results["results"]
    for task in ("intrasentence", "intersentence"):
        for domain, block in body.get(task, {}).items():
            for metric in ("lms", "ss", "icat"):
                yield _record(run, metric, block[metric], domain=domain, task=task, count=block["count"])
    for metric in ("lms", "ss", "icat"):
        yield _record(run, metric, body["overall"][metric], domain="overall", task="both", count=body["overall"]["count"])


def _crows_records(run: Run) -> Iterable[dict]:
    body = run.results["results"]
    yield _record(run, "metric_score", body["overall"]["metric_score"], domain="overall", count=body["overall"]["count"])
    for bias_type, block in body["bias_types"].items():
        yield _record(run, "metric_score", block["metric_score"], domain=bias_type, count=block["count"])


def _counterfactual_records(run: Run) -> Iterable[dict]:
    for attribute, block in run.results["results"]["attributes"].items():
        for classifier, fairness in block["classifiers"].items():
            for metric in ("individual_fairness", "group_fairness"):
                ci = fairness.get("ci", {}).get(metric)
                yield _record(run, metric, fairness[metric], domain=attribute, classifier=classifier, ci=ci)


def metric_records(run: Run) -> list:
    """The run's headline metrics as flat records (see the module docstring); [] for an unfinished run.

    Each record: ``benchmark``, ``metric`` (id), ``name``, ``value`` (None when undefined, e.g. a
    ratio with no female text), ``ideal``, ``unit``, ``domain``, ``task`` and ``source`` (BOLD:
    "model" or "wikipedia"), plus ``count`` / ``classifier`` / ``ci`` where they apply.
    """
    if run.results is None:
        return []
    records = {"bold": _bold_records, "stereoset": _stereoset_records, "crows_pairs": _crows_records,
               "counterfactual": _counterfactual_records}[run.benchmark](run)
    return list(records)


def dataset_of(run: Run) -> dict:
    """The Hub dataset a run measured: ``{"type": hub id, "name", "split" (the Hub's name), "revision"}``."""
    hub_id, name, split = HUB_DATASETS[run.benchmark]
    data: dict[str, Any] = (run.results or {}).get("data", {})
    return {"type": hub_id, "name": name, "split": split, "revision": data.get("revision")}
