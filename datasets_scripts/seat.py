"""`datasets` builder for seat (see lmbias.benchmarks.seat.data for the data and its layout)."""

from lmbias.benchmarks.seat.data import SPEC
from lmbias.data.builder import SpecBuilder


class Seat(SpecBuilder):
    """SEAT as a `datasets.GeneratorBasedBuilder`; configs: all, gender, race, religion; split test."""

    SPEC = SPEC
