"""lmbias: social-bias benchmarks for language models (BOLD, StereoSet, CrowS-Pairs, counterfactual sentiment, BBQ,
Winogender, WinoBias, HolisticBias, SEAT); ``lmbias.run`` runs several on one loaded model."""

from .data import DATASETS, load_dataset, load_rows
from .version import __version__

__all__ = ["DATASETS", "load_dataset", "load_rows", "run", "__version__"]


def run(benchmarks, **options) -> dict:
    """Run several benchmarks (or a set: ``"model-card"``, ``"all"``) on one loaded model, each into
    its own folder; returns ``{benchmark: {"out", "status", "results" | "error"}}``.

    ``lmbias.run(["bbq", "winogender"], model="gpt2", name="GPT-2", bbq={"categories": ["Age"]})`` is
    ``lmbias run bbq winogender --model gpt2 --name GPT-2 --bbq.categories Age``; see
    :func:`lmbias.suite.run_suite` for every argument.
    """
    from .suite import run_suite

    return run_suite(benchmarks, **options)
