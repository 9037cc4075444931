"""`datasets` builder for bold (see lmbias.benchmarks.bold.data for the data and its layout)."""

from lmbias.benchmarks.bold.data import SPEC
from lmbias.data.builder import SpecBuilder


class Bold(SpecBuilder):
    """Bold as a `datasets.GeneratorBasedBuilder`; configs: all, gender, race, profession, religious_ideology,
    political_ideology; split train."""

    SPEC = SPEC
