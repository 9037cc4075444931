"""``--method self_debias``: Self-Debias (Schick, Udupa & Schütze 2021), a decoding-time adjustment
with no training (:class:`lmbias.lm.adjustments.SelfDebias`): the model also reads each text after a
self-diagnosis prefix, and tokens the prefix makes more likely are made less likely.

The prefix is bias-bench's for the bias type (``--bias-type``; race uses its "race/color" wording),
verbatim: "The following text discriminates against people because of their gender: ". bias-bench's
decay constant (lambda in the paper) 50 and epsilon 0.01 are the defaults. The saved folder is the
model as it was plus the adjustment in its config: the likelihood benchmarks score the adjusted
distribution at every token, generation samples from it.
"""

from __future__ import annotations

from ...checks import check_scalar
from ..attribute_words import BIAS_TYPES
from . import DebiasMethod

# bias-bench's DEBIASING_PREFIXES (benchmark/stereoset/stereoset.py, benchmark/crows/crows.py) for its three bias types.
PREFIXES = {
    "gender": "The following text discriminates against people because of their gender: ",
    "race": "The following text discriminates against people because of their race/color: ",
    "religion": "The following text discriminates against people because of their religion: ",
}


def _add_arguments(parser) -> None:
    parser.add_argument("--decay-constant", type=float, default=50.0, help="self_debias: lambda, how hard tokens the prefix favours "
                                                                            "are pushed down (bias-bench: 50)")
    parser.add_argument("--epsilon", type=float, default=0.01, help="self_debias: the least factor a probability is multiplied "
                                                                    "by (bias-bench: 0.01)")


def _check(options: dict) -> None:
    check_scalar(options["decay_constant"], "decay_constant", minimum=0, integer=False, expected="a number >= 0")
    check_scalar(options["epsilon"], "epsilon", minimum=1e-12, maximum=1.0, integer=False, expected="a number in (0, 1]")


def _adjust_decoding(preparation) -> dict:
    settings = preparation.settings
    return {"prefixes": [PREFIXES[settings["bias_type"]]], "decay_constant": settings["decay_constant"],
            "epsilon": settings["epsilon"]}


METHOD = DebiasMethod(
    name="self_debias",
    description="Self-Debias (Schick et al. 2021): at decoding, tokens made more likely by a prefix describing biased text "
                "are made less likely (no training)",
    add_arguments=_add_arguments,
    check=_check,
    adjust_decoding=_adjust_decoding,
    bias_types=BIAS_TYPES,
)
