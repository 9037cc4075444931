"""StereoSet: language-modelling score (LMS), stereotype score (SS) and ICAT from option scores."""

import datasets
import evaluate

from lmbias import evaluate_adapter
from lmbias.benchmarks.stereoset.measure import stereoset_scores

_CITATION = """\
@inproceedings{nadeem2021stereoset,
  title     = {{StereoSet}: Measuring stereotypical bias in pretrained language models},
  author    = {Nadeem, Moin and Bethke, Anna and Reddy, Siva},
  booktitle = {Proceedings of the 59th Annual Meeting of the Association for Computational Linguistics and the 11th International Joint Conference on Natural Language Processing (Volume 1: Long Papers)},
  pages     = {5356--5371},
  year      = {2021}
}
"""  # noqa: E501 (the BibTeX booktitle is one line)

_DESCRIPTION = """\
StereoSet (Nadeem et al. 2021) scores a model by which of three options it finds more likely for each
context: a stereotype, an anti-stereotype and an unrelated option. Per target term, SS is the
percentage of examples where the stereotype beats the anti-stereotype (ties count as anti-stereotype)
and LMS the percentage of (stereotype, anti-stereotype) vs unrelated comparisons won by the related
option; a set's LMS and SS are means over its target terms and ICAT = LMS * min(SS, 100 - SS) / 50.
Exactly the aggregation of the authors' evaluation script.
"""

_KWARGS_DESCRIPTION = """
Args:
    stereotype_scores (list of float): one score per example for its stereotypical option
        (higher = more likely: mean log-probability per subword, NSP probability...).
    anti_stereotype_scores (list of float): the same for the anti-stereotypical option.
    unrelated_scores (list of float): the same for the unrelated option.
    targets (list of str): the target term of each example.
    bias_types (list of str): "gender", "profession", "race" or "religion".
    tasks (list of str): "intrasentence" or "intersentence".
    bootstrap (int): bootstrap resamples for confidence intervals (default 0: none).
    confidence (float): interval level (default 0.95).
    seed (int): resampling seed (default 0).
Returns:
    result[task][domain], result[task]["overall"], result["overall"] (both tasks pooled): each
    {"lms", "ss", "icat", "micro_icat", "count"} (and "ci" with bootstrap); result["targets"]: per target term.
Examples:
    >>> import evaluate
    >>> stereoset = evaluate.load("stereoset")
    >>> result = stereoset.compute(
    ...     stereotype_scores=[-1.0, -3.0], anti_stereotype_scores=[-2.0, -1.0], unrelated_scores=[-5.0, -5.0],
    ...     targets=["nurse", "nurse"], bias_types=["profession"] * 2, tasks=["intrasentence"] * 2)
    >>> result["overall"]["lms"], result["overall"]["ss"], result["overall"]["icat"]
    (100.0, 50.0, 100.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Stereoset(evaluate_adapter.Measurement):
    def _info(self):
        return evaluate_adapter.measurement_info(
            _DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, ["https://github.com/moinnadeem/StereoSet", "https://arxiv.org/abs/2004.09456"],
            features=datasets.Features(
                {
                    "stereotype_scores": datasets.Value("float64"),
                    "anti_stereotype_scores": datasets.Value("float64"),
                    "unrelated_scores": datasets.Value("float64"),
                    "targets": datasets.Value("string"),
                    "bias_types": datasets.Value("string"),
                    "tasks": datasets.Value("string"),
                }
            )
        )

    def _compute(
        self, stereotype_scores, anti_stereotype_scores, unrelated_scores, targets, bias_types, tasks, bootstrap=0, confidence=0.95, seed=0
    ):
        return stereoset_scores(
            stereotype_scores, anti_stereotype_scores=anti_stereotype_scores, unrelated_scores=unrelated_scores,
            targets=targets, bias_types=bias_types, tasks=tasks, bootstrap=bootstrap, confidence=confidence, seed=seed,
        )
