"""`datasets` builder for political_even_handedness (see lmbias.benchmarks.political_even_handedness.data for the data
and its layout)."""

from lmbias.benchmarks.political_even_handedness.data import SPEC
from lmbias.data.builder import SpecBuilder


class PoliticalEvenHandedness(SpecBuilder):
    """Political even-handedness as a `datasets.GeneratorBasedBuilder`; one config (all); split eval."""

    SPEC = SPEC
