"""`datasets` builder for crows_pairs (see lmbias.benchmarks.crows_pairs.data for the data and its layout)."""

from lmbias.benchmarks.crows_pairs.data import SPEC
from lmbias.data.builder import SpecBuilder


class CrowsPairs(SpecBuilder):
    """CrowsPairs as a `datasets.GeneratorBasedBuilder`; configs: all; split test."""

    SPEC = SPEC
