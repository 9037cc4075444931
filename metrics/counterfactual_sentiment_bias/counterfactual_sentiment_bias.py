"""Counterfactual sentiment bias (Huang et al. 2020): individual and group fairness from sentiment scores."""

import datasets
import evaluate

from lmbias import evaluate_adapter
from lmbias.benchmarks.counterfactual import measure as counterfactual
from lmbias.benchmarks.counterfactual.data import SPEC as COUNTERFACTUAL_SPEC

_CITATION = COUNTERFACTUAL_SPEC.citation + "\n"

_DESCRIPTION = """\
Counterfactual sentiment bias (Huang et al. 2020, §3). A language model continues template prefixes
in which a sensitive token is swapped (a country, an occupation, a name); a sentiment classifier
scores each continuation in [0, 1]. Unfairness between two score distributions is their
Wasserstein-1 distance W1 (= the demographic disparity |P(S > t) - P(S' > t)| averaged over t in [0, 1]).
Individual fairness (I.F., Eq. 3) is the mean over templates and unordered pairs of attribute values
of W1 between the two prefixes' score distributions; group fairness (G.F., Eq. 4) is the mean over
subgroups of W1 between the subgroup's scores and all scores. Lower is fairer; 0 is perfectly fair.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of float): one sentiment score in [0, 1] per sample (generated continuation).
    attribute_values (list of str): per sample, the sensitive value its prefix holds (e.g. "Syria").
    template_ids (list of int or str): per sample, the template of its prefix.
    subgroups (list of str, optional): per sample, its subgroup for G.F. (default: the attribute
        value; for names, "male" / "female").
    tau (float, optional): a threshold in [0, 1]; adds disparity_at_tau.
    bootstrap (int): resamples within each (template, value) cell for intervals (default 0: none).
    confidence (float): interval level (default 0.95).
    seed (int): resampling seed (default 0).
Returns:
    individual_fairness (float): Eq. 3, mean W1 over templates and unordered value pairs.
    group_fairness (float): Eq. 4, mean over subgroups of W1(subgroup's scores, all scores).
    pairs (list of dict): {"value_a", "value_b", "w1"}: each pair's W1 averaged over templates.
    templates (dict): template id -> mean W1 over its pairs.
    subgroups (dict): subgroup -> W1(subgroup's scores, all scores).
    disparity_at_tau (float, with tau): mean over templates and pairs of |P(S_a > tau) - P(S_b > tau)|.
    ci (dict, with bootstrap): figure -> [low, high].
Examples:
    >>> import evaluate
    >>> bias = evaluate.load("counterfactual_sentiment_bias")
    >>> result = bias.compute(
    ...     predictions=[0.0, 0.25, 0.5, 0.75], attribute_values=["a", "a", "b", "b"], template_ids=[1, 1, 1, 1])
    >>> result["individual_fairness"], result["group_fairness"]
    (0.5, 0.25)
"""


def _features(template_type: str) -> datasets.Features:
    return datasets.Features(
        {
            "predictions": datasets.Value("float64"),
            "attribute_values": datasets.Value("string"),
            "template_ids": datasets.Value(template_type),
        }
    )


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CounterfactualSentimentBias(evaluate_adapter.Measurement):
    PER_EXAMPLE = ("subgroups",)

    def _info(self):
        # string template ids, or integer ones (kept as integers); `subgroups` is a keyword
        # argument because evaluate requires every feature on every call
        return evaluate_adapter.measurement_info(
            _DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION,
            ["https://aclanthology.org/2020.findings-emnlp.7/", "https://arxiv.org/abs/1911.03064"],
            features=[_features("string"), _features("int64")],
        )

    def _check_features(self, features):
        """The scores in [0, 1] (attribute values and template ids are labels: an integer value is
        a label, not a number)."""
        features["predictions"] = counterfactual.check_scores(features["predictions"], "predictions").tolist()
        return features

    def _compute(
        self, predictions, attribute_values, template_ids, subgroups=None, tau=None, bootstrap=0, confidence=0.95, seed=0
    ):
        return counterfactual.counterfactual_fairness(
            predictions, attribute_values=attribute_values, template_ids=template_ids, subgroups=subgroups,
            tau=tau, bootstrap=bootstrap, confidence=confidence, seed=seed,
        )
