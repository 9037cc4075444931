"""`datasets` builder for winobias (see lmbias.benchmarks.winobias.data for the data and its layout)."""

from lmbias.benchmarks.winobias.data import SPEC
from lmbias.data.builder import SpecBuilder


class WinoBias(SpecBuilder):
    """WinoBias as a `datasets.GeneratorBasedBuilder`; configs: test (split test) and dev (split validation)."""

    SPEC = SPEC
