"""The run envelope: a benchmark's run returns a :class:`RunResult`, and the command line (or
:func:`lmbias.benchmarks.save_run` in Python) writes it as ``results.json`` with :func:`write_run`.

Schema version 2 (docs/results-schema.md), the same top-level keys for every benchmark::

    schema_version  2
    benchmark       the benchmark's name (lmbias.benchmarks)
    model           {"name", "source", "revision", "dtype", ...}: what was evaluated
    data            the dataset, its revision and citation, and "counts" of what was covered
    config          every setting that produced the numbers
    timing          seconds spent (where measured)
    skipped         {what: why} for every metric, task or source left out
    partial         {what: "covered of full (option)"} when the run covers less than the paper's full
                    setting (``--limit``, ``--per-group``, fewer domains or samples); {} for a full run
    outputs         the files written beside results.json and what they hold (texts, mean tokens ...)
    results         the benchmark's own scores (its layout is the benchmark's)
    records         the headline records (lmbias.results.metric_records), computed here, at write time
    versions        python, lmbias, torch, transformers, accelerate

The JSON is strict: NaN and infinities are written as ``null``.
"""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .credentials import without_credentials
from .files import write_atomic
from .lm.adjustments import CONFIG_KEY
from .version import __version__

SCHEMA_VERSION = 2
RESULTS_FILE = "results.json"
MODEL_KEYS = ("name", "source", "revision", "dtype")


def library_versions() -> dict:
    """Versions of Python, lmbias, torch, transformers and accelerate (recorded in every run)."""
    import accelerate
    import torch
    import transformers

    return {"python": platform.python_version(), "lmbias": __version__, "torch": torch.__version__,
            "transformers": transformers.__version__, "accelerate": accelerate.__version__}


def strict_json(value: Any) -> Any:
    """``value`` with every NaN or infinite float as None (tuples as lists), ready for strict JSON.

    >>> strict_json({"a": [1.0, float("nan")], "b": (float("inf"),)})
    {'a': [1.0, None], 'b': [None]}
    """
    if isinstance(value, Mapping):
        return {key: strict_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass
class RunResult:
    """What one run produced, in the envelope every benchmark shares (see the module docstring), and
    where it goes: ``out`` (the run directory), ``files`` ({name: content} written beside
    ``results.json``, e.g. the per-item scores) and ``obsolete`` (glob patterns of the files in
    ``out`` that those replace, e.g. the saved batches, removed once ``results.json`` is written)."""

    benchmark: str
    model: dict
    data: dict
    config: dict
    results: dict
    skipped: dict = field(default_factory=dict)
    timing: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    partial: dict = field(default_factory=dict)
    versions: dict | None = None
    out: str | None = None
    files: dict = field(default_factory=dict)
    obsolete: tuple = ()

    def to_dict(self, records: Callable[[dict], Iterable[dict]]) -> dict:
        """The strict-JSON ``results.json`` content, with the headline records (``records(content)``,
        the benchmark's :attr:`~lmbias.benchmarks.Benchmark.records`) computed now; a chat run's
        records carry ``"prompt_format": "chat"``."""
        model = {**{key: self.model.get(key) for key in MODEL_KEYS}, **self.model}
        content = strict_json({
            "schema_version": SCHEMA_VERSION, "benchmark": self.benchmark, "model": model, "data": self.data,
            "config": self.config, "timing": self.timing, "skipped": self.skipped, "partial": self.partial, "outputs": self.outputs,
            "results": self.results, "versions": self.versions or library_versions(),
        })
        # a chat run's numbers are another protocol's: its records say so (the Hub keys them apart)
        chat = {"prompt_format": "chat"} if isinstance(model.get("chat"), dict) else {}
        content["records"] = strict_json([{**record, **chat} for record in records(content)])
        return content


def write_run(result: RunResult, records: Callable[[dict], Iterable[dict]]) -> dict:
    """Write ``result.files`` and then ``<result.out>/results.json`` (headline records from
    ``records``), each atomically, so that a results.json on disk always describes complete files;
    then remove the files ``result.obsolete`` names. Returns the results dict as written.

    A finished run that a rerun only read back (the same files and results, only its timing differing:
    nothing was computed again) is left as it is, every file byte for byte, and its results dict returned."""
    out = Path(result.out)
    content = result.to_dict(records)
    finished = _finished(out, result.files, content)
    if finished is not None:
        return finished
    for name, content_of_file in result.files.items():
        write_atomic(out / name, content_of_file)
    write_atomic(out / RESULTS_FILE, json.dumps(content, indent=2, allow_nan=False) + "\n")
    for pattern in result.obsolete:
        for path in out.glob(pattern):
            path.unlink()
    return content


def _finished(out: Path, files: Mapping[str, str | bytes], content: dict) -> dict | None:
    """The results dict already in ``out`` when it holds these ``files`` byte for byte and the same
    results as ``content`` but for the timing; None otherwise (a new run, or one whose numbers changed)."""
    try:
        saved = json.loads((out / RESULTS_FILE).read_text(encoding="utf-8"))
        same_files = all((out / name).read_bytes() == (data.encode("utf-8") if isinstance(data, str) else data)
                         for name, data in files.items())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not same_files or not isinstance(saved, dict):
        return None
    return saved if {**saved, "timing": None} == {**content, "timing": None} else None


def default_run_dir(benchmark: str, model: str | None, settings: Mapping[str, Any] | None = None) -> str:
    """``runs/<benchmark>-<model slug>[-<settings>]``: runs of two models, or of one model with
    different ``settings`` (the options given with values other than their defaults, by flag), never
    share a default folder. The settings are spelled out while that stays short, else a digest.

    >>> default_run_dir("bold", "openai-community/gpt2")
    'runs/bold-openai-community-gpt2'
    >>> default_run_dir("stereoset", None, {"--limit": 20})
    'runs/stereoset-smollm2-135m-instruct-limit-20'
    >>> default_run_dir("bold", None, {"--per-group": 5, "--domains": ["gender", "race"], "--preset": "bold-ctrl"})
    'runs/bold-smollm2-135m-instruct-per-group-5-domains-gender-race-preset-bold-ctrl'
    >>> default_run_dir("bold", "gpt2", {"--domains": ["gender", "race", "profession"], "--metrics": ["sentiment", "regard"],
    ...                                  "--preset": "bold-ctrl"})
    'runs/bold-gpt2-settings-7e16da06'
    """
    import hashlib

    from .files import slugify

    settings = without_credentials(dict(settings or {}))  # a URL's key never names a folder
    name = f"runs/{benchmark}-{slugify(model or 'smollm2-135m-instruct')}"
    spelled = [slugify(flag if value is True else f"{flag} {' '.join(map(str, value)) if isinstance(value, (list, tuple)) else value}")
               for flag, value in (settings or {}).items()]
    suffix = "-".join(spelled)
    if len(suffix) > 60:
        suffix = "settings-" + hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{name}-{suffix}" if suffix else name


def coverage(counted: dict, options: str) -> dict:
    """The ``partial`` entry: ``{what: "covered of full (options)"}`` for every ``what: (covered, full)``
    of ``counted`` that falls short; {} when everything is covered.

    >>> coverage({"prompts": (430, 23679), "domains": (5, 5)}, "--per-group 10")
    {'prompts': '430 of 23,679 (--per-group 10)'}
    """
    return {what: f"{covered:,} of {full:,} ({options})" for what, (covered, full) in counted.items() if covered < full}


def model_description(lm: Any, **extra) -> dict:
    """The ``model`` entry of a loaded :class:`~lmbias.lm.loading.LanguageModel`: name (its display
    name, :meth:`lmbias.lm.spec.ModelSpec.shown_name`), source,
    revision (the Hub commit when it came from the Hub) and dtype, plus ``extra``; in a chat run also
    ``chat`` (:meth:`lmbias.lm.chat.ChatFormat.record`: the system prompt and the template's digest), and for
    a debiased folder ``adjustment`` (the projection or Self-Debias the hf backend applied, :mod:`lmbias.lm.adjustments`)."""
    config = getattr(lm.model, "config", None)
    dtype = getattr(lm.model, "dtype", None)
    revision = getattr(lm, "revision", None) or getattr(config, "_commit_hash", None)  # the latter: transformers < 5
    adjustment = getattr(config, CONFIG_KEY, None)
    return {"name": getattr(lm, "display_name", None) or lm.name, "source": lm.source, "revision": revision,
            "dtype": str(dtype).replace("torch.", "") if dtype is not None else None,
            **({"chat": lm.chat.record()} if getattr(lm, "chat", None) is not None else {}),
            **({"adjustment": adjustment} if adjustment else {}), **extra}
