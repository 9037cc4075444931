"""`datasets` builder for counterfactual_templates (see lmbias.data.counterfactual_templates for the data and its layout)."""

from lmbias.data.builder import SpecBuilder
from lmbias.data.counterfactual_templates import SPEC


class CounterfactualTemplates(SpecBuilder):
    """CounterfactualTemplates as a `datasets.GeneratorBasedBuilder`; configs: all, country, occupation, name; split test."""

    SPEC = SPEC
