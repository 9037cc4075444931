"""`datasets` builder for discrim_eval (see lmbias.benchmarks.discrim_eval.data for the data and its layout)."""

from lmbias.benchmarks.discrim_eval.data import SPEC
from lmbias.data.builder import SpecBuilder


class DiscrimEval(SpecBuilder):
    """DiscrimEval as a `datasets.GeneratorBasedBuilder`; two configs (explicit, implicit); split train."""

    SPEC = SPEC
