"""`datasets` builder for toxigen (see lmbias.benchmarks.toxigen.data for the data and its layout)."""

from lmbias.benchmarks.toxigen.data import SPEC
from lmbias.data.builder import SpecBuilder


class ToxiGen(SpecBuilder):
    """ToxiGen as a `datasets.GeneratorBasedBuilder`; two configs (hate, neutral prompts); split train."""

    SPEC = SPEC
