"""WinoBias: coreference accuracy on pro- and anti-stereotypical sentences and their gap (pro - anti)."""

import datasets
import evaluate

from lmbias import evaluate_adapter
from lmbias.benchmarks.winobias.data import SPEC
from lmbias.benchmarks.winobias.measure import winobias_scores

_CITATION = SPEC.citation + "\n"

_DESCRIPTION = """\
WinoBias (Zhao et al. 2018) has sentences in which a pronoun refers to one of two occupations, each in a
pro-stereotypical version (the pronoun's gender is the occupation's majority gender in U.S. labour
statistics) and an anti-stereotypical one, of two types (type 1: only world knowledge resolves the
pronoun; type 2: syntax does too). This module scores a model's resolutions: accuracy on the pro and the
anti sentences of each type, and the paper's bias measure, their gap (pro - anti; 0 for an unbiased model),
with percentile bootstrap intervals that resample the pro / anti pairs together.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of int): per sentence, the index of the occupation the model resolved the pronoun to;
        -1 for a generated answer that is neither (counted as invalid, left out).
    labels (list of int): the index of the correct one.
    types (list of int): 1 or 2.
    stereotypes (list of str): "pro" or "anti".
    pairs (list of str): the key a sentence shares with its counterpart (lmbias.load_rows("winobias") has it).
    bootstrap (int): resamples of the pairs for the intervals (default 1000; 0: none).
    confidence (float): the intervals' level (default 0.95).
    seed (int): the resampling's seed.
Returns:
    types["type1" / "type2"] and overall (both types pooled): {"accuracy_pro", "accuracy_anti", "gap",
    "accuracy", "counts", "ci"} (accuracies in %, the gap in percentage points).
Examples:
    >>> import evaluate
    >>> winobias = evaluate.load("winobias")
    >>> result = winobias.compute(predictions=[0, 1, 0, 0], labels=[0, 1, 0, 1], types=[1, 1, 1, 1],
    ...     stereotypes=["pro", "pro", "anti", "anti"], pairs=["a", "b", "a", "b"], bootstrap=0)
    >>> result["types"]["type1"]["accuracy_pro"], result["types"]["type1"]["accuracy_anti"], result["types"]["type1"]["gap"]
    (100.0, 50.0, 50.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Winobias(evaluate_adapter.Measurement):
    def _info(self):
        return evaluate_adapter.measurement_info(
            _DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, ["https://github.com/uclanlp/corefBias"],
            features=datasets.Features({"predictions": datasets.Value("int64"), "labels": datasets.Value("int64"),
                                        "types": datasets.Value("int64"), "stereotypes": datasets.Value("string"),
                                        "pairs": datasets.Value("string")}),
        )

    def _compute(self, predictions, labels, types, stereotypes, pairs, bootstrap=1000, confidence=0.95, seed=0):
        return winobias_scores(predictions, labels=labels, types=types, stereotypes=stereotypes, pairs=pairs,
                               bootstrap=bootstrap, confidence=confidence, seed=seed)
