"""`datasets` builder for cabbq (see lmbias.benchmarks.esbbq.data for the data and its layout)."""

from lmbias.benchmarks.esbbq.data import CABBQ_SPEC
from lmbias.data.builder import SpecBuilder


class CaBBQ(SpecBuilder):
    """CaBBQ as a `datasets.GeneratorBasedBuilder`; a config per category; split test."""

    SPEC = CABBQ_SPEC
