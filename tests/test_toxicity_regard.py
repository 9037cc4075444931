"""Toxicity and regard: the classifier plumbing on tiny random models built here (no real
classifier is available offline), with values made exact by fixing the classification head."""

import evaluate
import numpy as np
import pytest
import torch
import transformers

from lmbias.scorers import classifier as clf
from lmbias.scorers import regard, toxicity
from lmbias.scorers.stand_in import save_stand_in_classifier

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + "you are a kind person idiot the he she was xyz good bad".split()


def save_tiny_model(folder, labels, problem_type=None, head=True, bias=None):
    """The library's stand-in classifier (:mod:`lmbias.scorers.stand_in`: a 2-layer, 16-wide random
    BERT; plumbing only) with this file's vocabulary. With ``bias`` the head's weights are zeroed and
    its bias set, so every text gets exactly the logits ``bias``; ``head=False`` keeps the encoder only."""
    path = save_stand_in_classifier(folder, labels, multi_label=problem_type == "multi_label_classification", words=WORDS[5:])
    if head and bias is None:
        return path
    model = transformers.BertForSequenceClassification.from_pretrained(path)
    if bias is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(torch.tensor(bias))
    (model if head else model.bert).save_pretrained(folder)
    return path


TEXTS = ["you are a kind person", "idiot", "the xyz was good", "he was bad bad bad bad bad bad bad", "she"]


@pytest.fixture(scope="module")
def random_toxic_model(tmp_path_factory):
    return save_tiny_model(tmp_path_factory.mktemp("tox"), ["toxic", "severe_toxic", "insult"], "multi_label_classification")


def test_plumbing_batched_equals_one_at_a_time_in_input_order(random_toxic_model):
    model = clf.load_classifier(random_toxic_model, device="cpu")
    batched = model.probabilities(TEXTS, batch_size=3)
    single = np.stack([model.probabilities([t], batch_size=1)[0] for t in TEXTS])
    assert np.abs(batched - single).max() < 1e-5
    assert np.abs(batched[0] - batched[3]).max() > 1e-3  # different texts, different outputs: order kept


def test_sigmoid_for_multi_label_softmax_otherwise(tmp_path):
    logits = [2.0, -1.0, 0.0]
    multi = clf.load_classifier(save_tiny_model(tmp_path / "m", ["a", "b", "c"], "multi_label_classification", bias=logits), device="cpu")
    single = clf.load_classifier(save_tiny_model(tmp_path / "s", ["a", "b", "c"], "single_label_classification", bias=logits), device="cpu")
    sigmoid = 1 / (1 + np.exp(-np.array(logits)))
    softmax = np.exp(logits) / np.exp(logits).sum()
    assert np.allclose(multi.probabilities(["you"])[0], sigmoid, atol=1e-6)
    assert np.allclose(single.probabilities(["you"])[0], softmax, atol=1e-6)
    assert np.allclose(single.probabilities(["you"], activation="sigmoid")[0], sigmoid, atol=1e-6)


def test_toxic_if_any_toxic_label_reaches_the_threshold(tmp_path):
    # sigmoid(0.2) = 0.5498 for "insult"; the other labels are far below 0.5.
    path = save_tiny_model(tmp_path / "t", ["toxic", "severe_toxic", "insult"], "multi_label_classification", bias=[-3.0, -4.0, 0.2])
    model = clf.load_classifier(path, device="cpu")
    scores, labels, probabilities = toxicity.toxicity(TEXTS + [""], model)
    assert np.allclose(scores[:-1], 1 / (1 + np.exp(-0.2)), atol=1e-6)
    assert labels.tolist() == ["toxic"] * 5 + ["non-toxic"]  # the empty text is not scored
    assert scores[-1] == 0 and probabilities.shape == (6, 3)
    _, labels, _ = toxicity.toxicity(TEXTS, model, threshold=0.6)
    assert set(labels) == {"non-toxic"}
    scores, _, _ = toxicity.toxicity(TEXTS, model, toxic_labels=["toxic"])
    assert np.allclose(scores, 1 / (1 + np.exp(3.0)), atol=1e-6)


def test_binary_model_counts_only_its_toxic_class(tmp_path):
    path = save_tiny_model(tmp_path / "b", ["non-toxic", "toxic"], "single_label_classification", bias=[1.0, 0.0])
    model = clf.load_classifier(path, device="cpu")
    assert toxicity.toxic_label_indices(model) == [1]
    scores, labels, _ = toxicity.toxicity(["you"], model)
    assert np.isclose(scores[0], 1 / (1 + np.e)) and labels.tolist() == ["non-toxic"]


def test_model_without_classification_head_is_refused(tmp_path):
    path = save_tiny_model(tmp_path / "base", ["a", "b"], head=False)
    with pytest.raises(clf.ClassifierError, match="no trained sequence-classification head.*classifier"):
        clf.load_classifier(path, device="cpu")


def test_regard_labels_scores_and_masking(tmp_path):
    path = save_tiny_model(tmp_path / "r", ["negative", "neutral", "positive", "other"], bias=[0.0, 0.5, 2.0, -1.0])
    model = clf.load_classifier(path, device="cpu")
    scores, labels, probabilities = regard.regard(["he was good", ""], model)
    expected = np.exp([0.0, 0.5, 2.0, -1.0]) / np.exp([0.0, 0.5, 2.0, -1.0]).sum()
    assert np.allclose(probabilities[0], expected, atol=1e-6)
    assert np.isclose(scores[0], expected[2] - expected[0], atol=1e-6)
    assert labels.tolist() == ["positive", "neutral"] and scores[1] == 0
    masked = regard.mask_demographics(["Jacob Zachar was kind."], domains=["gender"], names=["Jacob_Zachar"])
    assert masked == ["XYZ was kind."]
    wrong = clf.load_classifier(save_tiny_model(tmp_path / "w", ["toxic", "insult"]), device="cpu")
    with pytest.raises(clf.ClassifierError, match="not a regard classifier"):
        regard.regard(["x"], wrong)


def test_evaluate_modules_take_the_model_from_config_name(tmp_path):
    tox_path = save_tiny_model(tmp_path / "t", ["toxic", "insult"], "multi_label_classification", bias=[0.3, -2.0])
    module = evaluate.load("metrics/bold_toxicity", config_name=tox_path)
    result = module.compute(predictions=["you are kind", "idiot", "she"], groups=["a", "b", "b"], batch_size=2)
    assert result["labels"] == ["toxic", "toxic", "toxic"]
    assert np.allclose(result["scores"], 1 / (1 + np.exp(-0.3)), atol=1e-6)
    assert result["per_group"] == {"a": {"n": 1, "non-toxic": 0.0, "toxic": 1.0}, "b": {"n": 2, "non-toxic": 0.0, "toxic": 1.0}}
    assert result["test"]["per_label"]["toxic"] == {"statistic": 0.0, "p_value": 1.0}
    assert set(result["label_probabilities"]) == {"toxic", "insult"}

    regard_path = save_tiny_model(tmp_path / "r", ["negative", "neutral", "positive"], bias=[2.0, 0.0, 0.0])
    module = evaluate.load("metrics/bold_regard", config_name=regard_path)
    result = module.compute(
        predictions=["Jacob Zachar was bad.", "XYZ is good"], domains=["gender", "gender"], names=["Jacob_Zachar", "Amy_Adams"]
    )
    assert result["labels"] == ["negative", "negative"]
    with pytest.raises(ValueError, match="domains and names go together"):
        module.compute(predictions=["x"], domains=["gender"])
    with pytest.raises(ValueError, match="groups has 1 labels but there are 2 predictions"):
        module.compute(predictions=["x", "y"], groups=["a"])


def test_missing_model_offline_is_a_clear_error(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(OSError, match="cannot load the classifier 'no-such-org/no-such-toxicity-model'.*save_pretrained"):
        clf.load_classifier("no-such-org/no-such-toxicity-model", device="cpu")


def test_stand_in_classifier_is_seeded_and_has_the_real_labels(tmp_path):
    """The cards' offline stand-in (lmbias.scorers.stand_in): the real classifiers' labels and
    activation, and the same model for the same seed (so the cards' printed output is reproducible)."""
    import doctest

    from lmbias.scorers import stand_in

    def saved(folder, seed=0):
        path = stand_in.save_stand_in_classifier(tmp_path / folder, stand_in.TOXIC_BERT_LABELS, multi_label=True, seed=seed)
        return clf.load_classifier(path, device="cpu")

    first, again, other = saved("a"), saved("b"), saved("c", seed=1)
    assert first.labels == list(stand_in.TOXIC_BERT_LABELS) and first.multi_label
    assert np.array_equal(first.probabilities(TEXTS), again.probabilities(TEXTS))
    assert not np.allclose(first.probabilities(TEXTS), other.probabilities(TEXTS))
    assert doctest.testmod(stand_in).failed == 0
    with pytest.raises(TypeError, match="labels must be a list of strings"):
        stand_in.save_stand_in_classifier(tmp_path / "d", "toxic")
