"""`datasets` builder for esbbq (see lmbias.benchmarks.esbbq.data for the data and its layout)."""

from lmbias.benchmarks.esbbq.data import ESBBQ_SPEC
from lmbias.data.builder import SpecBuilder


class EsBBQ(SpecBuilder):
    """EsBBQ as a `datasets.GeneratorBasedBuilder`; a config per category; split test."""

    SPEC = ESBBQ_SPEC
