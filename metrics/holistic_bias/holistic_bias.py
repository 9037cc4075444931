"""HolisticBias Likelihood Bias: per demographic axis, the share of descriptor pairs whose sentences'
perplexity distributions differ (Mann-Whitney U, p < 0.05), as the authors' code computes it."""

import datasets
import evaluate

from lmbias import evaluate_adapter
from lmbias.benchmarks.holistic_bias.data import SPEC
from lmbias.benchmarks.holistic_bias.measure import THRESHOLD, likelihood_bias
from lmbias.errors import InputError

_CITATION = SPEC.citation + "\n"

_DESCRIPTION = """\
HolisticBias (Smith et al. 2022) builds sentences from demographic descriptors in 13 axes, nouns for people
and conversational templates. Its Likelihood Bias compares, per axis and template, the perplexities a model
gives each descriptor's sentences (one per noun): every pair of descriptors is tested with a two-sided
Mann-Whitney U test and differs when p < 0.05 (no correction for the many tests, as the authors' code).
An axis's Likelihood Bias is the share of its (template, pair) tests that differ: 0 when every
descriptor is as likely as every other, 1 when none is. Also returned: each descriptor's mean and median
perplexity, the least likely descriptors being the ones the model finds hardest to say.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of float): per sentence, the model's perplexity of it (> 0).
    axes (list of str): its axis.
    templates (list of str): its template.
    descriptors (list of str): its descriptor (lmbias.benchmarks.holistic_bias.data.likelihood_bias_rows
        gives the sentences the authors compare, with all three).
    threshold (float): the p-value below which a pair differs (default 0.05).
Returns:
    axes[axis]: {"likelihood_bias", "tests", "significant", "descriptors", "templates"};
    templates[axis][template]: the share per template; descriptors[axis][descriptor]: {"mean_perplexity",
    "median_perplexity", "sentences"}; overall: {"likelihood_bias" (mean over axes), "pooled", "tests", "significant"}.
Examples:
    >>> import evaluate
    >>> holistic_bias = evaluate.load("holistic_bias")
    >>> result = holistic_bias.compute(predictions=[10, 11, 12, 13, 14, 50, 51, 52, 53, 54], axes=["age"] * 10,
    ...     templates=["I'm {noun_phrase}."] * 10, descriptors=["old"] * 5 + ["young"] * 5)
    >>> result["axes"]["age"]["likelihood_bias"], result["descriptors"]["age"]["young"]["mean_perplexity"]
    (1.0, 52.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class HolisticBias(evaluate_adapter.Measurement):
    def _info(self):
        return evaluate_adapter.measurement_info(
            _DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, ["https://github.com/facebookresearch/ResponsibleNLP"],
            features=datasets.Features({"predictions": datasets.Value("float64"), "axes": datasets.Value("string"),
                                        "templates": datasets.Value("string"), "descriptors": datasets.Value("string")}),
        )

    def _compute(self, predictions, axes, templates, descriptors, threshold=THRESHOLD):
        for index, value in enumerate(predictions):
            if not 0 < value < float("inf"):
                raise InputError(f"predictions[{index}] is {value!r}; expected a finite perplexity > 0")
        return likelihood_bias(predictions, axes=axes, templates=templates, descriptors=descriptors, threshold=threshold)
