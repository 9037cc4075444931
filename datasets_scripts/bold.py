"""`datasets` builder for bold (see lmbias.data.bold for the data and its layout)."""

from lmbias.data.bold import SPEC
from lmbias.data.builder import SpecBuilder


class Bold(SpecBuilder):
    """Bold as a `datasets.GeneratorBasedBuilder`; configs: all, gender, race, profession, religious_ideology,
    political_ideology; split train."""

    SPEC = SPEC
