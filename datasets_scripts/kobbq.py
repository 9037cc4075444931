"""`datasets` builder for kobbq (see lmbias.benchmarks.kobbq.data for the data and its layout)."""

from lmbias.benchmarks.kobbq.data import SPEC
from lmbias.data.builder import SpecBuilder


class KoBBQ(SpecBuilder):
    """KoBBQ as a `datasets.GeneratorBasedBuilder`; one config (the test samples); split test."""

    SPEC = SPEC
