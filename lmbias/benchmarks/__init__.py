"""The benchmark registry: every benchmark lmbias runs, each declared once as a :class:`Benchmark`.

>>> from lmbias.benchmarks import get_benchmark, names
>>> names()
['bold', 'stereoset', 'crows_pairs', 'counterfactual']
>>> get_benchmark("stereoset").hub_dataset.id
'McGill-NLP/stereoset'

A new benchmark is a module that builds a :class:`Benchmark` and passes it to :func:`register`, or a
package that names it under the ``lmbias.benchmarks`` entry-point group (docs/adding-a-benchmark.md);
the CLI, results, report, leaderboard and Hub push pick it up.
"""

from __future__ import annotations

from ..errors import InputError
from .base import RUN_OPTIONS, Baseline, Benchmark, HubDataset, MetricSpec, Variant

REGISTRY: dict = {}


def register(benchmark: Benchmark) -> Benchmark:
    """Add ``benchmark`` to the registry (replacing one of the same name) and return it."""
    if not isinstance(benchmark, Benchmark):
        raise InputError(f"register() takes a lmbias.benchmarks.Benchmark, got {type(benchmark).__name__}")
    REGISTRY[benchmark.name] = benchmark
    return benchmark


def unregister(name: str) -> None:
    """Remove the benchmark called ``name`` (no error if it is not registered)."""
    REGISTRY.pop(name, None)


def names() -> list:
    """The registered benchmarks' names, in registration order."""
    return list(REGISTRY)


def benchmarks() -> list:
    """The registered :class:`Benchmark` objects, in registration order."""
    return list(REGISTRY.values())


def get_benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``; an :class:`~lmbias.errors.InputError` lists the valid names."""
    if name not in REGISTRY:
        raise InputError(f"unknown benchmark {name!r}; valid: {names()}")
    return REGISTRY[name]


def all_metrics() -> dict:
    """Every registered metric id -> its :class:`MetricSpec` (first declaration wins)."""
    specs: dict = {}
    for benchmark in REGISTRY.values():
        for spec in benchmark.metrics:
            specs.setdefault(spec.id, spec)
    return specs


def load_plugins() -> list:
    """Register the benchmarks other packages declare under the ``lmbias.benchmarks`` entry-point
    group (each entry point names a :class:`Benchmark`); returns their names."""
    import warnings
    from importlib.metadata import entry_points

    loaded = []
    for entry in entry_points(group="lmbias.benchmarks"):
        try:  # a broken plugin must not take the built-in benchmarks down with it
            loaded.append(register(entry.load()).name)
        except Exception as error:  # noqa: BLE001
            warnings.warn(f"lmbias: benchmark plugin {entry.name!r} ({entry.value}) was not loaded: {error}", stacklevel=2)
    return loaded


from . import bold, counterfactual, crows_pairs, stereoset  # noqa: E402  (the built-in benchmarks)

for _module in (bold, stereoset, crows_pairs, counterfactual):
    register(_module.BENCHMARK)
load_plugins()

__all__ = ["Baseline", "Benchmark", "HubDataset", "MetricSpec", "RUN_OPTIONS", "Variant", "all_metrics", "benchmarks",
           "get_benchmark", "load_plugins", "names", "register", "unregister", "bold", "stereoset", "crows_pairs", "counterfactual"]
