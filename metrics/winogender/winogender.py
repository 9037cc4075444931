"""Winogender: pronoun-resolution accuracy by pronoun gender and on the "gotcha" sentences, and the
correlation of a model's per-occupation gender preference with the occupations' share of women."""

import datasets
import evaluate

from lmbias import evaluate_adapter
from lmbias.benchmarks.winogender.data import SPEC
from lmbias.benchmarks.winogender.measure import winogender_scores
from lmbias.errors import InputError

_CITATION = SPEC.citation + "\n"

_DESCRIPTION = """\
Winogender (Rudinger et al. 2018) has 720 sentences in which a pronoun refers either to an occupation or
to another participant; each comes with a male, a female and a neutral pronoun. This module scores a
model's resolutions: accuracy overall, per pronoun gender and on the "gotcha" sentences (those whose answer
goes against the occupation's majority gender, the paper's Table 2), and the paper's occupation measure
(its Figure 4): per occupation, the share of female-pronoun sentences resolved to the occupation minus
that of male-pronoun ones, correlated (Pearson r) with the occupation's share of women (Table 1).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of int): per sentence, 0 if the model resolved the pronoun to the occupation, 1 if
        to the participant; -1 for a generated answer that is neither (counted as invalid, left out).
    labels (list of int): the correct answer (0 / 1).
    genders (list of str): "male", "female" or "neutral".
    occupations (list of str): the sentence's occupation.
    gotchas (list of bool): whether it is a gotcha sentence (lmbias.load_rows("winogender") has it as "gotcha").
    occupation_logprobs (list of float, optional): the log-probability (<= 0) of the occupation as the
        answer, for the per-occupation log-odds measure (with participant_logprobs).
    participant_logprobs (list of float, optional): that of the participant (<= 0).
    pair_ids (list of str, optional): the key a sentence's male, female and neutral versions share (the
        row's "pair"), for the share of male / female versions resolved differently.
    statistics (dict, optional): occupation -> {"bls_pct_female", "bergsma_pct_female"}, for the
        correlations (lmbias.benchmarks.winogender.data.occupation_statistics()).
Returns:
    overall, by_gender[gender], gotcha, gotcha_by_gender, not_gotcha, not_gotcha_by_gender:
    {"accuracy" (%), "items", "correct"}; occupations[name]: {"resolution_gap", "logodds_gap", ...};
    correlations (with statistics); minimal_pairs_differ (with pair_ids).
Examples:
    >>> import evaluate
    >>> winogender = evaluate.load("winogender")
    >>> result = winogender.compute(predictions=[0, 0, 1, 1], labels=[0, 1, 0, 1],
    ...     genders=["male", "male", "female", "female"], occupations=["nurse"] * 4, gotchas=[True, False, False, True])
    >>> result["overall"]["accuracy"], result["gotcha"]["accuracy"], result["occupations"]["nurse"]["resolution_gap"]
    (50.0, 100.0, -100.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Winogender(evaluate_adapter.Measurement):
    PER_EXAMPLE = ("occupation_logprobs", "participant_logprobs", "pair_ids")
    PER_EXAMPLE_NUMBERS = ("occupation_logprobs", "participant_logprobs")
    LOG_PROBABILITIES = ("occupation_logprobs", "participant_logprobs")

    def _info(self):
        return evaluate_adapter.measurement_info(
            _DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, ["https://github.com/rudinger/winogender-schemas"],
            features=datasets.Features({"predictions": datasets.Value("int64"), "labels": datasets.Value("int64"),
                                        "genders": datasets.Value("string"), "occupations": datasets.Value("string"),
                                        "gotchas": datasets.Value("bool")}),
        )

    def _compute(self, predictions, labels, genders, occupations, gotchas, occupation_logprobs=None, participant_logprobs=None,
                 pair_ids=None, statistics=None):
        if (occupation_logprobs is None) != (participant_logprobs is None):
            raise InputError("occupation_logprobs and participant_logprobs go together (the log-odds of one over the other)")
        scores = None if occupation_logprobs is None else [list(pair) for pair in zip(occupation_logprobs, participant_logprobs)]
        return winogender_scores(predictions, labels=labels, genders=genders, occupations=occupations, gotcha=gotchas,
                                 statistics=statistics, scores=scores, pairs=pair_ids)
