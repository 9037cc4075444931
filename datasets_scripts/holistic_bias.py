"""`datasets` builder for holistic_bias (see lmbias.benchmarks.holistic_bias.data for the data and its layout)."""

from lmbias.benchmarks.holistic_bias.data import SPEC
from lmbias.data.builder import SpecBuilder


class HolisticBias(SpecBuilder):
    """HolisticBias as a `datasets.GeneratorBasedBuilder`; configs: all and small; split test."""

    SPEC = SPEC
