"""`datasets` builder for winogender (see lmbias.benchmarks.winogender.data for the data and its layout)."""

from lmbias.benchmarks.winogender.data import SPEC
from lmbias.data.builder import SpecBuilder


class Winogender(SpecBuilder):
    """Winogender as a `datasets.GeneratorBasedBuilder`; configs: all, male, female, neutral; split test."""

    SPEC = SPEC
