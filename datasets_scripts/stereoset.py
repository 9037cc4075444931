"""`datasets` builder for stereoset (see lmbias.data.stereoset for the data and its layout)."""

from lmbias.data.builder import SpecBuilder
from lmbias.data.stereoset import SPEC


class StereoSet(SpecBuilder):
    """StereoSet as a `datasets.GeneratorBasedBuilder`; configs: all, intrasentence, intersentence; split validation."""

    SPEC = SPEC
