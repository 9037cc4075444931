"""`datasets` builder for crows_pairs (see lmbias.data.crows_pairs for the data and its layout)."""

from lmbias.data.builder import SpecBuilder
from lmbias.data.crows_pairs import SPEC


class CrowsPairs(SpecBuilder):
    """CrowsPairs as a `datasets.GeneratorBasedBuilder`; configs: all; split test."""

    SPEC = SPEC
