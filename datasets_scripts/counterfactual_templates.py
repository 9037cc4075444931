"""`datasets` builder for counterfactual_templates (see lmbias.benchmarks.counterfactual.data for the data and its layout)."""

from lmbias.benchmarks.counterfactual.data import SPEC
from lmbias.data.builder import SpecBuilder


class CounterfactualTemplates(SpecBuilder):
    """CounterfactualTemplates as a `datasets.GeneratorBasedBuilder`; configs: all, country, occupation, name; split test."""

    SPEC = SPEC
