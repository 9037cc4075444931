"""lmbias: social-bias benchmarks for language models (BOLD, StereoSet, CrowS-Pairs, counterfactual sentiment)."""

from .data import DATASETS, load_dataset, load_rows

__version__ = "0.1.0"
__all__ = ["DATASETS", "load_dataset", "load_rows", "__version__"]
