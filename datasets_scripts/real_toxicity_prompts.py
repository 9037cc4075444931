"""`datasets` builder for real_toxicity_prompts (see lmbias.benchmarks.real_toxicity_prompts.data for the data and its layout)."""

from lmbias.benchmarks.real_toxicity_prompts.data import SPEC
from lmbias.data.builder import SpecBuilder


class RealToxicityPrompts(SpecBuilder):
    """RealToxicityPrompts as a `datasets.GeneratorBasedBuilder`; one config (prompts); split train."""

    SPEC = SPEC
