"""The benchmark registry: every benchmark lmbias runs, each declared once as a :class:`Benchmark`.

>>> from lmbias.benchmarks import get_benchmark, names
>>> names()
['bbq', 'bold', 'counterfactual', 'crows_pairs', 'holistic_bias', 'seat', 'stereoset', 'winobias', 'winogender']
>>> get_benchmark("stereoset").hub_dataset.id
'McGill-NLP/stereoset'

A benchmark is a package (``lmbias/benchmarks/<name>/`` for the built-in ones: its declaration in
``__init__.py``, its data in ``data.py``, its task in ``task.py``, its report section in
``report.py``) whose :class:`Benchmark` is named under the ``lmbias.benchmarks`` entry-point group:
the built-in ones in lmbias's ``setup.cfg``, another package's in its own (docs/adding-a-benchmark.md).
:func:`register` adds one at run time. The CLI, results, report, leaderboard and Hub push read this
registry; none of them names a benchmark, and this module imports none.
"""

from __future__ import annotations

from ..plugins import Registry
from ..run_result import RunResult, write_run
from .base import RUN_OPTIONS, Baseline, Benchmark, Examples, HubDataset, MetricSpec, ModuleExample, Readout, Share, Variant

REGISTRY = Registry("lmbias.benchmarks", Benchmark, "benchmark")


def register(benchmark: Benchmark) -> Benchmark:
    """Add ``benchmark`` to the registry (replacing one of the same name) and return it."""
    return REGISTRY.register(benchmark)


def unregister(name: str) -> None:
    """Remove the benchmark called ``name`` (no error if it is not registered)."""
    REGISTRY.unregister(name)


def names() -> list:
    """The registered benchmarks' names, in registration order."""
    return REGISTRY.names()


def benchmarks() -> list:
    """The registered :class:`Benchmark` objects, in registration order."""
    return list(REGISTRY.values())


def get_benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``; an :class:`~lmbias.errors.UnknownNameError` (a ValueError) lists the valid names."""
    return REGISTRY.get(name)


def save_run(result: RunResult) -> dict:
    """Write a run a benchmark returned (its ``results.json``, with the benchmark's headline records,
    and the files beside it) into ``result.out``; returns the results dict. The command line does
    this after ``Benchmark.run``; in Python, ``save_run(run_task(BENCHMARK, model=..., out=...))``."""
    return write_run(result, get_benchmark(result.benchmark).records)


def all_metrics() -> dict:
    """Every registered metric id -> its :class:`MetricSpec` (first declaration wins)."""
    specs: dict = {}
    for benchmark in benchmarks():
        for spec in benchmark.metrics:
            specs.setdefault(spec.id, spec)
    return specs


__all__ = ["Baseline", "Benchmark", "Examples", "HubDataset", "MetricSpec", "ModuleExample", "RUN_OPTIONS", "Readout", "Share",
           "Variant", "REGISTRY", "all_metrics", "benchmarks", "get_benchmark", "names", "register", "save_run", "unregister"]
