"""`datasets` builder for bbq (see lmbias.benchmarks.bbq.data for the data and its layout)."""

from lmbias.benchmarks.bbq.data import SPEC
from lmbias.data.builder import SpecBuilder


class BBQ(SpecBuilder):
    """BBQ as a `datasets.GeneratorBasedBuilder`; configs: all and each of the 11 categories; split test."""

    SPEC = SPEC
