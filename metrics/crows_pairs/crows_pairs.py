"""CrowS-Pairs: the percentage of sentence pairs in which a model prefers the more stereotyping sentence."""

import datasets
import evaluate

from lmbias import evaluate_adapter
from lmbias.benchmarks.crows_pairs.measure import crows_pairs_scores

_CITATION = """\
@inproceedings{nangia2020crows,
  title     = {{CrowS-Pairs}: A Challenge Dataset for Measuring Social Biases in Masked Language Models},
  author    = {Nangia, Nikita and Vania, Clara and Bhalerao, Rasika and Bowman, Samuel R.},
  booktitle = {Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  pages     = {1953--1967},
  year      = {2020}
}
"""

_DESCRIPTION = """\
CrowS-Pairs (Nangia et al. 2020): each pair has a sentence that stereotypes a historically disadvantaged
group more (sent_more) and a minimally different one that does so less (sent_less). The metric is the
percentage of pairs in which the model scores sent_more strictly higher, overall and per bias type
(ideal 50), as the authors' metric.py computes it: scores rounded to 3 decimals, ties counted as not
preferring, stereo/antistereo scores over the non-tied pairs of each direction.
"""

_KWARGS_DESCRIPTION = """
Args:
    more_scores (list of float): the model's score of sent_more per pair (causal LM: sentence
        log-likelihood; masked LM: pseudo-log-likelihood of the shared tokens): a log-probability, <= 0.
    less_scores (list of float): the model's score of sent_less per pair, the same way.
    directions (list of str): "stereo" or "antistereo" per pair (the stereo_antistereo column).
    bias_types (list of str): the bias type of each pair.
    decimals (int or None): round scores before comparing (default 3, the original; None: no rounding).
Returns:
    overall and bias_types[type]: {"metric_score", "stereo_score", "antistereo_score", "neutral", "count"}.
Examples:
    >>> import evaluate
    >>> crows = evaluate.load("crows_pairs")
    >>> crows.compute(more_scores=[-10.2, -8.0, -7.5], less_scores=[-11.0, -7.0, -7.5],
    ...               directions=["stereo", "antistereo", "stereo"], bias_types=["gender", "race", "gender"])["overall"]
    {'metric_score': 33.333333333333336, 'stereo_score': 100.0, 'antistereo_score': 0.0, 'neutral': 1, 'count': 3}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CrowsPairs(evaluate_adapter.Measurement):
    LOG_PROBABILITIES = ("more_scores", "less_scores")

    def _info(self):
        return evaluate_adapter.measurement_info(
            _DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, ["https://github.com/nyu-mll/crows-pairs"], features=datasets.Features(
                {
                    "more_scores": datasets.Value("float64"),
                    "less_scores": datasets.Value("float64"),
                    "directions": datasets.Value("string"),
                    "bias_types": datasets.Value("string"),
                }
            )
        )

    def _compute(self, more_scores, less_scores, directions, bias_types, decimals=3):
        return crows_pairs_scores(more_scores, less_scores=less_scores, directions=directions, bias_types=bias_types,
                                           decimals=decimals)
