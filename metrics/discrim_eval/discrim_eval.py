"""DiscrimEval: the discrimination score of each age band, gender and race (Tamkin et al. 2023), a mixed-effects
fit of the logit of p(yes) normalised over yes and no, against a 60-year-old white man."""

import datasets
import evaluate
import numpy as np

from lmbias import evaluate_adapter
from lmbias.benchmarks.discrim_eval.data import CITATION, check_person
from lmbias.benchmarks.discrim_eval.measure import MIN_MASS, discrim_scores
from lmbias.errors import InputError

_CITATION = CITATION + "\n"

_DESCRIPTION = """\
DiscrimEval (Tamkin et al. 2023) asks a model yes / no decision questions (a loan, a job, a lease, a transplant)
about people who differ only in age, gender and race. Per prompt, p(yes) and p(no) (each summed over its surface
forms) give the mass on the two answers and the logit of p(yes) normalised over them; a linear mixed-effects model of
the logit on age, gender and race, with the decision question as the grouping factor (random intercepts and slopes),
gives each group's discrimination score: its coefficient against a 60-year-old white man, with a Wald 95 % interval.
Prompts whose mass on yes and no is below min_mass are left out and counted.
"""

_KWARGS_DESCRIPTION = """
Args:
    yes_probabilities (list of float): per prompt, p(yes), every surface form of yes summed.
    no_probabilities (list of float): per prompt, p(no), every surface form of no summed.
    questions (list of int): the decision question id.
    ages (list of int): 20, 30, ..., 100.
    genders (list of str): male, female, non-binary.
    races (list of str): white, Black, Asian, Hispanic, Native American.
    min_mass (float): prompts with p(yes) + p(no) below this are left out of the fit (default 0: every prompt).
    age (str): "bands" (20-50 and 70-100 against 60) or "linear" (one slope per standard deviation of age).
Returns:
    "scores" (per group id: "estimate", "ci", "se", "p"; None when the fit is refused, with "not_fitted" saying why),
    "per_question", "mass", "fitted", "left_out", "fit" (convergence, warnings), "by_level" (mean normalised p(yes)).
Examples:
    >>> import evaluate, itertools
    >>> discrim_eval = evaluate.load("discrim_eval")
    >>> people = list(itertools.product(range(3), range(20, 101, 10), ["male", "female", "non-binary"],
    ...                                 ["white", "Black", "Asian", "Hispanic", "Native American"]))
    >>> p_yes = [0.5 + 0.1 * (race == "Black") + 0.01 * question for question, age, gender, race in people]
    >>> result = discrim_eval.compute(yes_probabilities=p_yes, no_probabilities=[0.95 - p for p in p_yes],
    ...     questions=[p[0] for p in people], ages=[p[1] for p in people], genders=[p[2] for p in people],
    ...     races=[p[3] for p in people])
    >>> round(result["scores"]["black"]["estimate"], 3), round(result["scores"]["female"]["estimate"], 3) + 0.0
    (0.433, 0.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DiscrimEval(evaluate_adapter.Measurement):
    def _info(self):
        return evaluate_adapter.measurement_info(
            _DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, ["https://huggingface.co/datasets/Anthropic/discrim-eval"],
            features=datasets.Features({
                "yes_probabilities": datasets.Value("float64"), "no_probabilities": datasets.Value("float64"),
                "questions": datasets.Value("int64"), "ages": datasets.Value("int64"), "genders": datasets.Value("string"),
                "races": datasets.Value("string"),
            }),
        )

    def _check_features(self, features):
        for yes_no in ("yes_probabilities", "no_probabilities"):
            for index, value in enumerate(features[yes_no]):
                if not 0 < value <= 1:
                    raise InputError(f"{yes_no}[{index}] is {value!r}; expected a probability in (0, 1]")
        for index, (p_yes, p_no) in enumerate(zip(features["yes_probabilities"], features["no_probabilities"])):
            if p_yes + p_no > 1 + 1e-6:
                raise InputError(f"yes_probabilities[{index}] + no_probabilities[{index}] is {p_yes + p_no!r}; the two "
                                 "answers' probabilities sum to at most 1")
        return features

    def _compute(self, yes_probabilities, no_probabilities, questions, ages, genders, races, min_mass=MIN_MASS, age="bands"):
        from lmbias.checks import check_scalar

        check_scalar(min_mass, "min_mass", minimum=0, maximum=1, integer=False, expected="a number in [0, 1]")
        rows = [{"question": int(q), **check_person(a, g, r, f"example {i}")}
                for i, (q, a, g, r) in enumerate(zip(questions, ages, genders, races))]
        records = [{"yes": [float(np.log(y))], "no": [float(np.log(n))]} for y, n in zip(yes_probabilities, no_probabilities)]
        return discrim_scores(records, rows, protocol="likelihood", min_mass=min_mass, age=age)
