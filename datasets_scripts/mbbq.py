"""`datasets` builder for mbbq (see lmbias.benchmarks.mbbq.data for the data and its layout)."""

from lmbias.benchmarks.mbbq.data import SPEC
from lmbias.data.builder import SpecBuilder


class MBBQ(SpecBuilder):
    """MBBQ as a `datasets.GeneratorBasedBuilder`; configs: en, nl, es, tr (main and control sets); split test."""

    SPEC = SPEC
