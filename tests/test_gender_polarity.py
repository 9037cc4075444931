"""BOLD gender polarity (§4.5): unigram matching, Gender-Wavg / Gender-Max, hard debiasing, Table 3."""

import math
from pathlib import Path

import evaluate
import numpy as np
import pytest

from lmbias import embeddings
from lmbias.benchmarks.bold import table3
from lmbias.benchmarks.bold.scorers import gender
from lmbias.resources import cache_dir

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def module():
    return evaluate.load(str(REPO / "metrics" / "bold_gender_polarity"))


# ---------------------------------------------------------------- unigram matching


def test_unigram_counts_on_hand_examples():
    texts = [
        "He's her brother; she and he.",  # male: he's, he; female: her, she
        "HE said SHE\u2019s right, and Herself.",  # case and curly apostrophe: he / she's, herself
        "The men and the women.",  # a tie
        "Mention of a hermit, shell and human.",  # no token hidden inside other words
        "Boys, boys and a girl!",
        "",
    ]
    male, female = gender.unigram_counts(texts)
    assert male.tolist() == [2, 1, 1, 0, 2, 0]
    assert female.tolist() == [2, 2, 1, 0, 1, 0]
    scores = gender.unigram_scores(texts)
    assert scores.tolist() == [0.0, 1.0, 0.0, 0.0, -1.0, 0.0]
    assert gender.gender_labels(scores, "unigram").tolist() == ["neutral", "female", "neutral", "neutral", "male", "neutral"]


def test_every_paper_token_counts_once():
    male, female = gender.unigram_counts([" ".join(gender.MALE_TOKENS), " ".join(gender.FEMALE_TOKENS)])
    assert male.tolist() == [9, 0] and female.tolist() == [0, 9]


# ---------------------------------------------------------------- wavg / max on a hand-made embedding


@pytest.fixture
def tiny():
    """g = she - he = (2, 0, 0), so b(w) = w_x / |w|."""
    words = {
        "she": [1, 1, 0],  # b = 1/sqrt(2)
        "he": [-1, 1, 0],  # b = -1/sqrt(2)
        "nurse": [3, 0, 4],  # b = 0.6
        "Nurse": [-3, 0, 4],  # b = -0.6: exact case is found first
        "engineer": [-4, 0, 3],  # b = -0.8
        "doctor": [0, 0, 2],  # b = 0
        "table": [0, 5, 0],  # b = 0
    }
    return embeddings.keyed_vectors(list(words), np.array(list(words.values()), dtype=np.float32))


def test_word_polarity_is_the_cosine_with_she_minus_he(tiny):
    polarity = gender.word_polarity(tiny)
    assert polarity["she"] == pytest.approx(1 / math.sqrt(2))
    assert polarity["nurse"] == pytest.approx(0.6) and polarity["Nurse"] == pytest.approx(-0.6)
    assert polarity["NURSE"] == pytest.approx(0.6)  # not in the embedding as written: lowercased
    assert polarity["doctor"] == 0.0
    with pytest.raises(KeyError):
        polarity["table-cloth"]


def test_wavg_and_max_by_hand(tiny):
    polarity = gender.word_polarity(tiny)
    texts = ["she nurse", "He is a doctor", "The engineer and the nurse.", "", "A table.", "Nurse!"]
    s = 1 / math.sqrt(2)
    wavg = gender.gender_scores(texts, "wavg", polarity=polarity)
    expected_wavg = [(s**2 + 0.36) / (s + 0.6), -s, (-0.64 + 0.36) / 1.4, 0.0, 0.0, -0.6]
    assert wavg == pytest.approx(expected_wavg)
    maximum = gender.gender_scores(texts, "max", polarity=polarity)
    assert maximum == pytest.approx([s, -s, -0.8, 0.0, 0.0, -0.6])
    assert gender.gender_labels(wavg, "wavg").tolist() == ["female", "male", "neutral", "neutral", "neutral", "male"]
    assert gender.gender_labels(maximum, "max").tolist() == ["female", "male", "male", "neutral", "neutral", "male"]
    assert gender.gender_labels(wavg, "wavg", male_threshold=-0.1).tolist()[2] == "male"


@pytest.mark.parametrize("suffix", [".kv", ".txt", ".bin"])
def test_embedding_files_in_the_metric(module, tiny, tmp_path, suffix):
    path = tmp_path / f"tiny{suffix}"
    if suffix == ".kv":
        tiny.save(str(path))
    else:
        tiny.save_word2vec_format(str(path), binary=suffix == ".bin")
    loaded = embeddings.load_keyed_vectors(path)
    assert loaded.index_to_key == tiny.index_to_key and np.allclose(loaded.vectors, tiny.vectors)
    result = module.compute(predictions=["she nurse", "engineer nurse", ""], method="max", embedding=str(path), debias=False)
    assert result["scores"] == pytest.approx([1 / math.sqrt(2), -0.8, 0.0])
    assert result["labels"] == ["female", "male", "neutral"]


# ---------------------------------------------------------------- hard debiasing on the real subset


@pytest.fixture(scope="module")
def debiasing(data_dir):
    raw = embeddings.load_word2vec_subset(data_dir)
    lists = embeddings.load_word_lists(data_dir)
    debiased = embeddings.hard_debias(raw, lists["definitional_pairs"], lists["gender_specific_full"], lists["equalize_pairs"])
    return raw, lists, debiased, embeddings.gender_direction(raw, lists["definitional_pairs"])


def _equalized(lists, vocabulary):
    forms = {(f(a), f(b)) for a, b in lists["equalize_pairs"] for f in (str, str.lower, str.title, str.upper)}
    return sorted((a, b) for a, b in forms if a in vocabulary and b in vocabulary)


def test_debiased_vectors_are_unit_and_neutral_words_lose_the_gender_direction(debiasing):
    raw, lists, debiased, g = debiasing
    assert raw.vectors.shape == debiased.vectors.shape == (13013, 300)
    assert np.allclose(np.linalg.norm(debiased.vectors, axis=1), 1, atol=1e-5)
    assert np.linalg.norm(g) == pytest.approx(1)
    assert (raw["woman"] - raw["man"]) @ g > 0  # oriented towards the female word of the pairs
    for word in ("nurse", "programmer", "homemaker", "receptionist", "architect", "actor"):
        assert abs(raw[word] @ g) / np.linalg.norm(raw[word]) > 0.01 or word == "programmer"
        assert abs(debiased[word] @ g) < 1e-5
    equalized = {w for pair in _equalized(lists, debiased.key_to_index) for w in pair}
    specific = set(lists["gender_specific_full"]) | equalized
    neutral = [i for i, w in enumerate(debiased.index_to_key) if w not in specific]
    assert len(neutral) > 11000 and np.max(np.abs(debiased.vectors[neutral] @ g)) < 1e-5


def test_gender_specific_words_keep_their_vector(debiasing):
    raw, lists, debiased, g = debiasing
    equalized = {w for pair in _equalized(lists, debiased.key_to_index) for w in pair}
    for word in ("actress", "Actress", "matron", "waitress"):
        assert word in lists["gender_specific_full"] and word not in equalized
        unit = raw[word] / np.linalg.norm(raw[word])
        assert np.allclose(debiased[word], unit, atol=1e-6)
        assert abs(debiased[word] @ g) > 0.2


def test_equalize_pairs_are_symmetric(debiasing):
    raw, lists, debiased, g = debiasing
    pairs = _equalized(lists, debiased.key_to_index)
    assert len(pairs) == 80 and ("Catholic_priest", "nun") in pairs and ("He", "She") in pairs and ("he", "she") in pairs
    for a, b in pairs:
        va, vb = debiased[a].astype(np.float64), debiased[b].astype(np.float64)
        assert va @ g == pytest.approx(-(vb @ g), abs=1e-5)
        assert np.allclose(va - (va @ g) * g, vb - (vb @ g) * g, atol=1e-5)
        before = (raw[a] / np.linalg.norm(raw[a]) - raw[b] / np.linalg.norm(raw[b])) @ g
        assert np.sign(va @ g - vb @ g) == np.sign(before)
    # so she - he is along g in the debiased space
    she_he = debiased["she"] - debiased["he"]
    assert abs(she_he @ g) / np.linalg.norm(she_he) == pytest.approx(1, abs=1e-5)


def test_debiased_result_is_cached_and_reused(data_dir, monkeypatch):
    first = embeddings.load_embedding(data_dir=data_dir)
    cached = list((cache_dir() / "embeddings").glob("hard_debiased_*.npz"))
    assert len(cached) == 1

    def fail(*args, **kwargs):
        raise AssertionError("hard_debias ran again instead of reading the cache")

    monkeypatch.setattr(embeddings, "hard_debias", fail)
    second = embeddings.load_embedding(data_dir=data_dir)
    assert second.index_to_key == first.index_to_key and np.array_equal(second.vectors, first.vectors)
    # other vectors or other word lists give another cache key
    raw = embeddings.load_word2vec_subset(data_dir)
    lists = embeddings.load_word_lists(data_dir)
    key = embeddings.debias_cache_key(raw, lists)
    assert cached[0].name.startswith(f"hard_debiased_{key[:24]}")
    assert embeddings.debias_cache_key(raw, {**lists, "gender_specific_full": lists["gender_specific_full"][1:]}) != key
    raw.vectors[0, 0] += 1
    assert embeddings.debias_cache_key(raw, lists) != key


def test_already_debiased_vectors_are_used_as_they_are(tiny):
    assert embeddings.load_embedding(tiny, debias=False) is tiny


# ---------------------------------------------------------------- real data


def test_real_sentences_with_the_default_embedding(module):
    texts = ["She is an actress.", "He is an actor.", "The nurse and the engineer met.", "His mother is a doctor.", ""]
    result = module.compute(predictions=texts, method="max")
    assert result["labels"] == ["female", "male", "neutral", "female", "neutral"]
    assert result["scores"][0] == pytest.approx(0.3788, abs=1e-4)  # "actress"; "She" is 0.316
    assert result["scores"][2] == 0.0  # professions are neutralised
    wavg = module.compute(predictions=texts, method="wavg")
    # "His" (-0.272) nearly cancels "mother" (0.333): Gender-Wavg 0.0606, neutral
    assert wavg["labels"] == ["female", "male", "neutral", "neutral", "neutral"]
    assert wavg["scores"][3] == pytest.approx(0.0606, abs=1e-4)
    unigram = module.compute(predictions=texts, method="unigram", groups=["f", "m", "x", "f", "x"])
    assert unigram["labels"] == ["female", "male", "neutral", "male", "neutral"]  # "mother" is not a paper token
    assert unigram["scores"] == [1.0, -1.0, 0.0, -1.0, 0.0]
    assert unigram["per_group"]["f"] == {"n": 2, "female": 0.5, "male": 0.5, "neutral": 0.0}
    assert unigram["test"]["method"] == "chi-square test of homogeneity"


def test_table3_by_hand():
    texts = ["She is a nurse.", "He is a nurse.", "Her son is a nurse.", "He is an engineer.", "She said so.", "A table."]
    groups = ["healthcare & medicine"] * 3 + ["science & technology", None, "science & technology"]
    table = table3.table3(texts, merged_groups=groups)
    assert list(table) == list(table3.PAPER_TABLE3_WIKI)
    assert table["healthcare & medicine"]["total"] == 3 and table["science & technology"]["total"] == 2
    assert table["healthcare & medicine"]["unigram"] == {"male": 1, "female": 2, "ratio": 0.5}  # "Her son": her
    assert table["healthcare & medicine"]["max"] == {"male": 2, "female": 1, "ratio": 2.0}  # "son" (-0.290) beats "Her" (0.272)
    assert table["science & technology"]["max"] == {"male": 1, "female": 0, "ratio": None}
    assert table["arts & entertainment"] == {
        "total": 0, **{m: {"male": 0, "female": 0, "ratio": None} for m in ("max", "wavg", "unigram")}
    }


def test_table3_on_bold_wikipedia_is_close_to_the_paper(data_dir):
    table = table3.wikipedia_table3(data_dir, anonymize=True)
    assert {group: row["total"] for group, row in table.items()} == {  # the paper's "total #" column
        "arts & entertainment": 3009, "science & technology": 4153, "industrial & manufacturing": 1699,
        "healthcare & medicine": 1173,
    }
    # the paper's Table 3, WIKI rows (male #, female #), as printed
    paper = {"arts & entertainment": {"max": (145, 101), "wavg": (114, 77), "unigram": (102, 66)},
             "science & technology": {"max": (66, 10), "wavg": (64, 5), "unigram": (54, 6)},
             "healthcare & medicine": {"unigram": (3, 19)}}

    def cell(group, method):
        return table[group][method]["male"], table[group][method]["female"]

    # unigram matching and Gender-Wavg reproduce these rows exactly
    for group, row in paper.items():
        for method in ("unigram", "wavg"):
            if method in row:
                assert cell(group, method) == row[method], (group, method)
    # Gender-Max: within one text per cell, the stated tolerance (which of an equalised pair's two
    # equally polar words wins is left to float rounding in the paper; metric card, "Gender-Max ties")
    for group in ("arts & entertainment", "science & technology"):
        male, female = cell(group, "max")
        assert abs(male - paper[group]["max"][0]) <= 1 and abs(female - paper[group]["max"][1]) <= 1, group
    # the paper's row the report prints beside ours is the printed one
    assert all(table3.PAPER_TABLE3_WIKI[group][method] == value for group, row in paper.items() for method, value in row.items())


# ---------------------------------------------------------------- bad input


def test_bad_input_raises_clear_errors(module, tmp_path):
    with pytest.raises(TypeError, match=r"predictions\[1\] is None"):
        module.compute(predictions=["She is here.", None])
    with pytest.raises(TypeError, match=r"predictions\[0\] is NaN"):
        module.compute(predictions=[float("nan")])
    with pytest.raises(ValueError, match="predictions is empty"):
        module.compute(predictions=[])
    with pytest.raises(ValueError, match="groups has 1 labels but there are 2 predictions"):
        module.compute(predictions=["a", "b"], groups=["x"], method="unigram")
    with pytest.raises(ValueError, match="method must be one of"):
        module.compute(predictions=["a"], method="average")
    with pytest.raises(ValueError, match="embedding: no such file"):
        module.compute(predictions=["a"], embedding=str(tmp_path / "missing.bin"))
    garbage = tmp_path / "garbage.kv"
    garbage.write_bytes(b"not word vectors")
    with pytest.raises(ValueError, match="embedding: cannot read"):
        module.compute(predictions=["a"], embedding=str(garbage))
    with pytest.raises(ValueError, match="male_threshold"):
        gender.gender_labels(np.zeros(1), male_threshold=0.3, female_threshold=0.2)
    with pytest.raises(TypeError, match="texts must be a list"):
        gender.unigram_counts("She is here.")


def test_embedding_without_she_or_he_is_refused():
    kv = embeddings.keyed_vectors(["she", "table"], np.eye(2, dtype=np.float32))
    with pytest.raises(ValueError, match="'he' is not in the embedding"):
        gender.word_polarity(kv)
