"""`datasets` builder for stereoset (see lmbias.benchmarks.stereoset.data for the data and its layout)."""

from lmbias.benchmarks.stereoset.data import SPEC
from lmbias.data.builder import SpecBuilder


class StereoSet(SpecBuilder):
    """StereoSet as a `datasets.GeneratorBasedBuilder`; configs: all, intrasentence, intersentence; split validation."""

    SPEC = SPEC
