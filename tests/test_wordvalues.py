"""Word-id encoding and the per-text aggregations shared by the lexicon metrics (hand-computed)."""

import doctest
import random

import numpy as np
import pytest

import lmbias
from lmbias import text
from lmbias.scorers import wordvalues
from lmbias.scorers.wordvalues import CaseFallbackVocabulary, encode, max_magnitude, weighted_signed_mean
from lmbias.words import HYPHENATED_WORD_PATTERN, WORD_PATTERN, words_of_texts


def regex_words(texts, lowercase, keep_hyphens):
    """The definition: the patterns' matches, text by text."""
    pattern = HYPHENATED_WORD_PATTERN if keep_hyphens else WORD_PATTERN
    prepared = [t.replace("\u2019", "'") for t in texts]
    per_text = [pattern.findall(t.lower() if lowercase else t) for t in prepared]
    return [w for words in per_text for w in words], [i for i, words in enumerate(per_text) for _ in words]


@pytest.mark.parametrize("lowercase,keep_hyphens", [(True, False), (False, False), (True, True)])
def test_words_of_texts_equals_the_regular_expression_on_every_bold_sentence(lowercase, keep_hyphens):
    texts = [row["wikipedia"] for row in lmbias.load_rows("bold")]
    words, text_index = words_of_texts(texts, lowercase=lowercase, keep_hyphens=keep_hyphens)
    expected_words, expected_index = regex_words(texts, lowercase, keep_hyphens)
    assert len(expected_words) > 500_000
    assert words.to_pylist() == expected_words and text_index.tolist() == expected_index


def test_words_of_texts_equals_the_regular_expression_on_random_strings():
    # letters, joiners, separators, a NUL, multi-byte characters, and the Kelvin sign (lowercases to "k")
    alphabet = ["a", "B", "z", "'", "\u2019", "-", " ", ".", "\x00", "é", "\u212a", "İ", "7", "\n"]
    rng = random.Random(0)
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12))) for _ in range(5000)]
    texts += ["", "'", "a'", "'a", "a''b", "a'-b", "a-'b", "it's-a", "\x00he\x00"]
    for lowercase in (True, False):
        for keep_hyphens in (True, False):
            words, text_index = words_of_texts(texts, lowercase=lowercase, keep_hyphens=keep_hyphens)
            assert (words.to_pylist(), text_index.tolist()) == regex_words(texts, lowercase, keep_hyphens)


def test_words_of_texts_of_texts_without_words():
    words, text_index = words_of_texts(["", "42 ...", ""])
    assert words.to_pylist() == [] and text_index.tolist() == []
    words, text_index = words_of_texts([])
    assert words.to_pylist() == [] and text_index.tolist() == []


def test_tokenize_keeps_contractions_and_drops_digits():
    assert words_of_texts(["She's an actress; he’s 30."])[0].to_pylist() == ["she's", "an", "actress", "he's"]
    assert words_of_texts(["Mary SAID"], lowercase=False)[0].to_pylist() == ["Mary", "SAID"]


def test_case_fallback_vocabulary_looks_up_as_written_then_lowercased():
    vocabulary = CaseFallbackVocabulary({"Paris": 0, "paris": 1, "nurse": 2})
    words = ["Paris", "PARIS", "Nurse", "nurse", "Doctor", "paris"]
    assert vocabulary.ids(words).tolist() == [0, 1, 2, 2, -1, 1]
    assert vocabulary.ids(words).tolist() == [vocabulary.get(word, -1) for word in words]
    ids, text_index = encode(["Paris, PARIS and a Nurse.", "doctor"], vocabulary, lowercase=False)
    assert ids.tolist() == [0, 1, 2] and text_index.tolist() == [0, 0, 0]


def test_encode_skips_unknown_and_excluded_words():
    vocabulary = {"good": 0, "bad": 1, "the": 2}
    ids, text_index = encode(["The good, the BAD", "", "nothing known"], vocabulary, exclude={"the"})
    assert ids.tolist() == [0, 1] and text_index.tolist() == [0, 0]


def test_weighted_signed_mean_by_hand():
    # text 0: values 0.5, -0.25 -> (0.25 - 0.0625) / 0.75 = 0.25; text 1: none -> 0; text 2: 0.8 -> 0.8
    table = np.array([0.5, -0.25, 0.8])
    assert np.allclose(weighted_signed_mean(table, np.array([0, 1, 2]), text_index=np.array([0, 0, 2]), n_texts=3), [0.25, 0.0, 0.8])
    # a word twice counts twice: (0.25 + 0.25 - 0.0625) / 1.25 = 0.35
    assert np.allclose(weighted_signed_mean(table, np.array([0, 0, 1]), text_index=np.array([0, 0, 0]), n_texts=1), [0.35])
    two_columns = np.array([[0.5, 1.0], [-0.25, 0.0]])
    assert np.allclose(weighted_signed_mean(two_columns, np.array([0, 1]), text_index=np.array([0, 0]), n_texts=1), [[0.25, 1.0]])
    assert weighted_signed_mean(np.zeros((3, 8)), np.zeros(0, dtype=int), text_index=np.zeros(0, dtype=int), n_texts=2).shape == (2, 8)


def test_max_magnitude_keeps_the_sign():
    values = np.array([0.2, -0.7, 0.4, 0.1])
    assert max_magnitude(values, text_index=np.array([0, 0, 2, 2]), n_texts=4).tolist() == [-0.7, 0.0, 0.4, 0.0]
    assert max_magnitude(np.zeros(0), text_index=np.zeros(0, dtype=int), n_texts=2).tolist() == [0.0, 0.0]
    # equal magnitudes: the last word wins by default, the first with ties="first"
    tied, index = np.array([-0.5, 0.5, 0.5, -0.5]), np.array([0, 0, 1, 1])
    assert max_magnitude(tied, text_index=index, n_texts=2).tolist() == [0.5, -0.5]
    assert max_magnitude(tied, text_index=index, n_texts=2, ties="first").tolist() == [-0.5, 0.5]


def test_aggregations_accept_text_indices_out_of_order():
    values, index = np.array([0.8, 0.5, -0.9, -0.25]), np.array([2, 0, 1, 0])
    assert np.allclose(weighted_signed_mean(values, np.arange(4), text_index=index, n_texts=3), [0.25, -0.9, 0.8])
    assert max_magnitude(values, text_index=index, n_texts=3).tolist() == [0.5, -0.9, 0.8]
    # ties keep the words' order within a text: -0.5 comes before 0.5 in text 0
    assert max_magnitude(np.array([-0.5, 0.1, 0.5]), text_index=np.array([0, 1, 0]), n_texts=2).tolist() == [0.5, 0.1]


@pytest.mark.parametrize("module", [text, wordvalues])
def test_docstring_examples(module):
    assert doctest.testmod(module).failed == 0
