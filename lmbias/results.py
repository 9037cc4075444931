"""Reading run directories back: schema checks and migration, what is missing, the headline records.

Every ``lmbias run ...`` writes ``results.json`` through :func:`lmbias.run_result.write_run`
(docs/results-schema.md). The report, the Hub push and the leaderboard all read runs through
:func:`load_run`, and all take their numbers from :func:`metric_records`, so a figure has one
definition wherever it is shown. Each benchmark declares its headline metrics and how its records
are computed (:mod:`lmbias.benchmarks`); ``ideal`` is the value of an unbiased model.

Runs written with schema version 1 (lmbias before the run envelope) are read too: the common part
is moved to the version-2 keys here and each benchmark's ``migrate_v1`` moves its own part.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .benchmarks import benchmarks, get_benchmark, names
from .errors import InputError
from .run_result import SCHEMA_VERSION
from .text import first_line  # noqa: F401 (re-exported: readers of runs use it)

READABLE_VERSIONS = (1, SCHEMA_VERSION)


class RunError(InputError):
    """A run directory that cannot be read: missing, not a run, or from an unsupported schema version."""


@dataclass
class Run:
    """One run directory: its ``results.json`` (None if the run did not finish) and what is missing."""

    path: Path
    benchmark: str
    model: str
    results: dict | None
    missing: list = field(default_factory=list)

    @property
    def partial(self) -> dict:
        """{what: "covered of full (options)"} when the run covers less than the paper's full setting."""
        return (self.results or {}).get("partial") or {}

    @property
    def complete(self) -> bool:
        """Whether the run has results and nothing is marked missing."""
        return self.results is not None and not self.missing


def load_run(path) -> Run:
    """Read a run directory written by ``lmbias run``; incomplete runs come back with ``missing`` set.
    A version-1 ``results.json`` is migrated to version 2 in memory (the file is left as it is).

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
    results = _read_json(results_file)
    if not isinstance(results, dict) or results.get("benchmark") not in names():
        raise RunError(f"{results_file} is not an lmbias results file: 'benchmark' must be one of {names()}")
    version = results.get("schema_version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise RunError(f"{results_file} has schema_version {version!r}; expected an integer (this lmbias reads "
                       f"{list(READABLE_VERSIONS)}): the file was edited or is not an lmbias results file")
    if not isinstance(results.get("results"), dict):
        raise RunError(f"{results_file} has no 'results' object: the file was edited or cut short; rerun the command that wrote it")
    if version not in READABLE_VERSIONS:
        hint = ("it predates schema versions; rerun it with this lmbias" if version is None or version < min(READABLE_VERSIONS)
                else "it was written by a newer lmbias; upgrade lmbias to read it")
        raise RunError(f"{results_file} has schema_version {version!r}, this lmbias reads versions "
                       f"{list(READABLE_VERSIONS)}: {hint}")
    results = upgrade(results)
    run = Run(path, results["benchmark"], results["model"].get("name") or path.name, results)
    run.missing = [f"{what}: {reason}" for what, reason in results["skipped"].items()]
    return run


def upgrade(results: dict) -> dict:
    """A results dict of any readable version in the version-2 layout (a new dict): the benchmark's
    ``migrate_v1`` moves its own keys, absent envelope keys become empty, and the headline
    ``records`` are computed when the file has none."""
    benchmark = get_benchmark(results["benchmark"])
    if results.get("schema_version") == 1 or "skipped" not in results:
        results = dict(results)
        if "scores_file" in results:  # version 1 of the likelihood benchmarks
            results["outputs"] = {"scores_file": results.pop("scores_file")}
        results = benchmark.migrate_v1(results)
    results = {**{key: {} for key in ("model", "data", "config", "timing", "skipped", "partial", "outputs", "versions")}, **results,
               "schema_version": SCHEMA_VERSION}
    if "records" not in results:
        results["records"] = list(benchmark.records(results))
    return results


def load_runs(paths: Sequence) -> list:
    """:func:`load_run` of each path; at least one path is required."""
    if isinstance(paths, (str, Path)) or not paths:
        raise InputError("run_dirs must be a non-empty list of run directories")
    return [load_run(p) for p in paths]


def _read_json(path: Path):
    """The JSON content of a run file; a binary, cut-short or invalid file is a :class:`RunError` naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RunError(f"{path} is not valid JSON text ({type(error).__name__}: {str(error)[:120]}); "
                       "rerun the command that wrote it") from None


def _unfinished_run(path: Path) -> Run:
    config_file = path / "config.json"
    shards = sorted(path.glob("shard-*.jsonl"))
    if not config_file.exists() and not shards:
        raise RunError(f"{path} has no results.json and is not an unfinished lmbias run (no config.json or shards)")
    saved = _read_json(config_file) if config_file.exists() else {}
    if not isinstance(saved, dict) or not isinstance(saved.get("config", {}), dict):
        raise RunError(f"{config_file} is not an lmbias run configuration (expected an object with 'config'); "
                       "move the directory away and rerun")
    config = saved.get("config", {})
    benchmark = saved.get("benchmark") or _benchmark_of_preset(config.get("preset"), path)
    if "prompts" in config:  # a generation run: count the generations its shards hold (a line is a batch)
        from .lm.runner import finished_batches

        done = sum(len(items) for items in finished_batches(path).values())
        total = config["prompts"] * config.get("num_return_sequences", 1)
        progress = f"{done:,} of {total:,} generations written"
    else:
        progress = "nothing is kept of an unfinished likelihood run"
    missing = [f"results.json: the run did not finish ({progress}); rerun the same command to resume it"]
    return Run(path, benchmark, config.get("model", path.name), None, missing)


def _benchmark_of_preset(preset: str | None, path: Path) -> str:
    """The benchmark of an unfinished run whose ``config.json`` predates the ``benchmark`` key."""
    for benchmark in benchmarks():
        if preset in benchmark.unfinished_presets:
            return benchmark.name
    raise RunError(f"{path}/config.json names no benchmark and its preset {preset!r} belongs to none; "
                   "rerun the command that wrote it")


def metric_records(run: Run) -> list:
    """The run's headline metrics as flat records; [] for an unfinished run. They were computed when
    the run was written (by its benchmark's ``records``) and are read back as stored.

    Each record: ``benchmark``, ``metric`` (id), ``name``, ``value`` (None when undefined, e.g. a
    ratio with no female text), ``ideal``, ``unit``, ``domain``, ``task`` and ``source`` (BOLD:
    "model" or "wikipedia"), plus ``count`` / ``classifier`` / ``ci`` / ``args`` where they apply.
    """
    return [] if run.results is None else list(run.results["records"])


def dataset_of(run: Run) -> dict:
    """The Hub dataset a run measured: ``{"type": hub id, "name", "split" (the Hub's name), "revision"}``."""
    hub = get_benchmark(run.benchmark).hub_dataset
    data = (run.results or {}).get("data", {})
    return {"type": hub.id, "name": hub.name, "split": hub.split, "revision": data.get("revision")}
