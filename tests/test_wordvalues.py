"""Word-id encoding and the per-text aggregations shared by the lexicon metrics (hand-computed)."""

import numpy as np

from lmbias.scorers.wordvalues import encode, max_magnitude, weighted_signed_mean
from lmbias.text import tokenize


def test_tokenize_keeps_contractions_and_drops_digits():
    assert tokenize("She's an actress; he’s 30.") == ["she's", "an", "actress", "he's"]
    assert tokenize("Mary SAID", lowercase=False) == ["Mary", "SAID"]


def test_encode_skips_unknown_and_excluded_words():
    vocabulary = {"good": 0, "bad": 1, "the": 2}
    ids, text_index = encode(["The good, the BAD", "", "nothing known"], vocabulary, exclude={"the"})
    assert ids.tolist() == [0, 1] and text_index.tolist() == [0, 0]


def test_weighted_signed_mean_by_hand():
    # text 0: values 0.5, -0.25 -> (0.25 - 0.0625) / 0.75 = 0.25; text 1: none -> 0; text 2: 0.8 -> 0.8
    values = np.array([0.5, -0.25, 0.8])
    assert np.allclose(weighted_signed_mean(values, np.array([0, 0, 2]), 3), [0.25, 0.0, 0.8])
    two_columns = np.array([[0.5, 1.0], [-0.25, 0.0]])
    assert np.allclose(weighted_signed_mean(two_columns, np.array([0, 0]), 1), [[0.25, 1.0]])
    assert weighted_signed_mean(np.zeros((0, 8)), np.zeros(0, dtype=int), 2).shape == (2, 8)


def test_max_magnitude_keeps_the_sign():
    values = np.array([0.2, -0.7, 0.4, 0.1])
    assert max_magnitude(values, np.array([0, 0, 2, 2]), 4).tolist() == [-0.7, 0.0, 0.4, 0.0]
    assert max_magnitude(np.zeros(0), np.zeros(0, dtype=int), 2).tolist() == [0.0, 0.0]
    # equal magnitudes: the last word wins by default, the first with ties="first"
    tied, index = np.array([-0.5, 0.5, 0.5, -0.5]), np.array([0, 0, 1, 1])
    assert max_magnitude(tied, index, 2).tolist() == [0.5, -0.5]
    assert max_magnitude(tied, index, 2, ties="first").tolist() == [-0.5, 0.5]
