"""`datasets` builder for cbbq (see lmbias.benchmarks.cbbq.data for the data and its layout)."""

from lmbias.benchmarks.cbbq.data import SPEC
from lmbias.data.builder import SpecBuilder


class CBBQ(SpecBuilder):
    """CBBQ as a `datasets.GeneratorBasedBuilder`; a config per category (both context types); split test."""

    SPEC = SPEC
