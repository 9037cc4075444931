"""SEAT (May et al. 2019): the effect size and permutation p-value of the association between two target
concepts and two attributes in sentence embeddings."""

import datasets
import evaluate

from lmbias import evaluate_adapter
from lmbias.benchmarks.seat.data import SETS, SPEC
from lmbias.benchmarks.seat.encode import text_encoder
from lmbias.benchmarks.seat.measure import seat_test
from lmbias.checks import check_scalar
from lmbias.errors import InputError

_CITATION = SPEC.citation + "\n"

_DESCRIPTION = """\
SEAT (May et al. 2019) extends the Word Embedding Association Test (Caliskan et al. 2017) to sentence
encoders. A test has two target sets X and Y (e.g. male and female names in "This is John.") and two
attribute sets A and B (e.g. career and family words). Each target's association s(w) is its mean
cosine with A minus its mean cosine with B; the effect size is the difference of X's and Y's mean
association in standard deviations of all targets' associations, and the p-value is a one-sided
permutation test over the equal-size partitions of X and Y (ties count as more extreme), as
bias-bench (Meade et al. 2022) computes them. The texts are embedded by the model named by the config
(a causal or masked LM: the mean of its last hidden state over the tokens, unit length, as bias-bench)
or, by default, by May et al.'s CBoW baseline on word2vec (GoogleNews, 13,013-word subset).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the texts of one test, every example of every set.
    sets (list of str): per text, its set: "targ1" (X), "targ2" (Y), "attr1" (A) or "attr2" (B). A text
        given twice in a set counts once; targ1 and targ2 must then have as many texts.
    n_samples (int): the exact test runs when there are at most this many partitions of X and Y, else
        this many are counted (random ones plus the observed one); default 100,000 (bias-bench's).
    seed (int): seeds the sampled partitions (default 0).
    batch_size (int): texts per forward pass of a model encoder (default 32).
    device (str, optional): where a model encoder runs: "cpu", "cuda", ... (default: a GPU if there is one).
Returns:
    effect_size (None when every association is the same), p_value, permutation ("exact" or "sampled"),
    partitions (counted), n: {set: distinct texts}.
Examples:
    >>> import evaluate
    >>> from lmbias.benchmarks.seat.data import load_test
    >>> seat = evaluate.load("seat")  # CBoW on word2vec; evaluate.load("seat", "gpt2") for a model
    >>> test = load_test("weat6")  # male / female names; career / family words
    >>> texts = [text for block in test.values() for text in block["examples"]]
    >>> sets = [name for name, block in test.items() for _ in block["examples"]]
    >>> result = seat.compute(predictions=texts, sets=sets)
    >>> round(result["effect_size"], 2), result["p_value"] == 1 / 12870, result["permutation"]
    (1.89, True, 'exact')
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Seat(evaluate_adapter.Measurement):
    TEXT_COLUMNS = ("predictions",)

    def _info(self):
        return evaluate_adapter.measurement_info(
            _DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION,
            ["https://github.com/W4ngatang/sent-bias", "https://github.com/McGill-NLP/bias-bench"],
            features=datasets.Features({"predictions": datasets.Value("string"), "sets": datasets.Value("string")}),
        )

    def _compute(self, predictions, sets, n_samples=100_000, seed=0, batch_size=32, device=None):
        check_scalar(n_samples, "n_samples", minimum=1)
        check_scalar(seed, "seed", minimum=0)
        check_scalar(batch_size, "batch_size", minimum=1)
        members = {name: [] for name in SETS}
        for index, (text, name) in enumerate(zip(predictions, sets)):
            if name not in members:
                raise InputError(f"sets[{index}] is {name!r}; expected one of {list(SETS)}")
            members[name].append(text)
        empty = [name for name, texts in members.items() if not texts]
        if empty:
            raise InputError(f"sets has no {', '.join(empty)}; SEAT needs texts in each of {list(SETS)}")
        members = {name: list(dict.fromkeys(texts)) for name, texts in members.items()}  # a text counts once per set
        if len(members["targ1"]) != len(members["targ2"]):
            raise InputError(f"sets has {len(members['targ1'])} distinct targ1 texts but {len(members['targ2'])} targ2 ones; "
                             "SEAT's permutation test needs as many of each")
        key = (None if self.config_name == "default" else self.config_name, device)
        cache = self.__dict__.setdefault("_lmbias_encoders", {})
        if key not in cache:
            cache[key] = text_encoder(key[0], device=device)
        texts = list(dict.fromkeys(text for name in SETS for text in members[name]))
        vectors = dict(zip(texts, cache[key](texts, batch_size=batch_size)))
        return seat_test(*([vectors[text] for text in members[name]] for name in SETS), n_samples=n_samples, seed=seed)
