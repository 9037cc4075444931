"""BOLD regard: a regard classifier's label per text (demographic masked as XYZ), per group."""

import evaluate

from lmbias import evaluate_adapter
from lmbias.benchmarks.bold.data import SPEC
from lmbias.errors import InputError
from lmbias.scorers import regard

_CITATION = SPEC.citation + "\n" + """\
@inproceedings{sheng2019woman,
  title     = {The Woman Worked as a Babysitter: On Biases in Language Generation},
  author    = {Sheng, Emily and Chang, Kai-Wei and Natarajan, Premkumar and Peng, Nanyun},
  booktitle = {Proceedings of the 2019 Conference on Empirical Methods in Natural Language Processing and the 9th International Joint Conference on Natural Language Processing (EMNLP-IJCNLP)},
  pages     = {3407--3412},
  year      = {2019}
}
"""  # noqa: E501 (the BibTeX booktitle is one line)

_DESCRIPTION = """\
Regard of generated texts as in BOLD (Dhamala et al. 2021, §4.3): a classifier trained on Sheng et
al.'s annotations labels the regard a text shows towards the demographic it mentions as negative,
neutral, positive or other. The demographic is masked as "XYZ" first when domains and names are
given. Choose the model with config_name (default "sasha/regardv3").
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the texts to score.
    groups (list of str, optional): one group label per text.
    domains (list of str, optional): the BOLD domain of each text, with names.
    names (list of str, optional): the BOLD Wikipedia page of each text, with domains; when both are
        given, the person / group is masked as "XYZ" before scoring (BOLD §3.3, Sheng et al.'s convention).
    device (str, optional): "cpu", "cuda", ... (default: a GPU if there is one).
    dtype (str, optional): "float32", "float16" or "bfloat16" (default: float16 on a GPU, float32 on a CPU).
    batch_size (int): texts per forward pass. Default 32.
    max_length (int): tokens per text, longer texts are truncated. Default 256.
Returns:
    scores (list of float): P(positive) - P(negative) per text.
    labels (list of str): the most probable regard label per text.
    label_probabilities (dict): for each model label, its probability per text.
    per_group, test (with groups): label proportions per group and the paper's significance tests.
Examples:
    >>> import evaluate
    >>> regard = evaluate.load("bold_regard")  # sasha/regardv3 from the Hub  # doctest: +SKIP
    >>> regard.compute(predictions=["XYZ was known for her kindness."])["labels"]  # doctest: +SKIP
    ['positive']

    Offline, a random stand-in with regardv3's labels shows the output (its labels mean nothing):
    >>> import tempfile
    >>> from lmbias.scorers.stand_in import REGARD_LABELS, save_stand_in_classifier
    >>> stand_in = save_stand_in_classifier(tempfile.mkdtemp(), REGARD_LABELS)
    >>> sorted(evaluate.load("bold_regard", config_name=stand_in).compute(predictions=["XYZ was kind."]))
    ['label_probabilities', 'labels', 'per_group', 'scores', 'test']
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BoldRegard(evaluate_adapter.TextMeasurement):
    PER_EXAMPLE = ("groups", "domains", "names")

    def _info(self):
        return evaluate_adapter.measurement_info(
            _DESCRIPTION,
            _CITATION,
            _KWARGS_DESCRIPTION,
            ["https://github.com/amazon-science/bold", "https://github.com/ewsheng/nlg-bias"],
        )

    def _compute(
        self, predictions, groups=None, domains=None, names=None, device=None, dtype=None, batch_size=32, max_length=256
    ):
        if (domains is None) != (names is None):
            raise InputError("domains and names go together: give both (to mask the demographic as XYZ) or neither")
        if domains is not None:
            predictions = regard.mask_demographics(predictions, domains=domains, names=names, groups=groups)
        model = evaluate_adapter.cached_classifier(self, regard.DEFAULT_MODEL, device=device, dtype=dtype)
        scores, labels, probabilities = regard.regard(predictions, model, batch_size=batch_size, max_length=max_length)
        return evaluate_adapter.classifier_result(scores, labels, model.labels, probabilities, model, groups)
