"""evaluate's streaming API on every module in metrics/: ``add`` / ``add_batch`` then ``compute()``
gives what one ``compute(...)`` over the same examples gives, per-example inputs (``groups`` ...)
included; nothing is left behind for the next call, even after an error; ``references=`` is refused."""

from pathlib import Path

import evaluate
import pytest

from test_toxicity_regard import save_tiny_model

REPO = Path(__file__).resolve().parents[1]
TEXTS = ["What a wonderful, happy day for her!", "He was an awful, angry man.", "The actress is a nurse.",
         "The actor fixed the engine.", "It is a table."]
GROUPS = ["a", "b", "a", "b", "a"]

# module: (examples as {input: list}, options passed to compute)
EXAMPLES = {
    "discrim_eval": ({"yes_probabilities": [0.6, 0.5, 0.7, 0.4, 0.55], "no_probabilities": [0.3, 0.45, 0.2, 0.5, 0.4],
                      "questions": [0, 0, 1, 1, 2], "ages": [20, 60, 30, 100, 60],
                      "genders": ["male", "female", "non-binary", "male", "female"],
                      "races": ["white", "Black", "Asian", "Hispanic", "Native American"]}, {}),
    "toxigen": ({"predictions": [0.9, 0.2, 0.6, 0.1, 0.3], "groups": ["women", "women", "jewish", "jewish", "asian"]},
                {"threshold": 0.5}),
    "real_toxicity_prompts": ({"predictions": [0.1, 0.7, 0.2, 0.3, 0.8], "prompts": ["a", "b", "c", "d", "e"]}, {}),
    "bold_sentiment": ({"predictions": TEXTS, "groups": GROUPS}, {}),
    "bold_gender_polarity": ({"predictions": TEXTS, "groups": GROUPS}, {"method": "unigram"}),
    "bold_psycholinguistic_norms": ({"predictions": TEXTS, "groups": GROUPS}, {"extend": False}),
    "bold_toxicity": ({"predictions": TEXTS, "groups": GROUPS}, {}),
    "bold_regard": ({"predictions": TEXTS, "groups": GROUPS, "domains": ["gender"] * 5,
                     "names": ["Amy_Adams", "Jacob_Zachar", "Amy_Adams", "Jacob_Zachar", "Amy_Adams"]}, {}),
    "stereoset": ({"stereotype_scores": [-1.0, -2.0, -1.0, -3.0], "anti_stereotype_scores": [-2.0, -1.0, -2.0, -2.0],
                   "unrelated_scores": [-3.0, -3.0, -3.0, -1.0], "targets": ["t", "t", "u", "u"],
                   "bias_types": ["gender", "gender", "race", "race"], "tasks": ["intrasentence"] * 4}, {}),
    "crows_pairs": ({"more_scores": [-1.0, -3.0, -2.0, -4.0], "less_scores": [-2.0, -2.0, -2.5, -3.0],
                     "directions": ["stereo", "antistereo", "stereo", "stereo"], "bias_types": ["age"] * 4}, {}),
    "counterfactual_sentiment_bias": ({"predictions": [0.1, 0.9, 0.4, 0.6, 0.2], "attribute_values": ["x", "y", "x", "y", "x"],
                                       "template_ids": [1, 1, 2, 2, 2], "subgroups": ["m", "f", "m", "f", "m"]}, {}),
    "counterfactual_semantic_similarity": ({"predictions": TEXTS, "prefixes": ["Her day was", "He was", "The actress is",
                                                                              "The actor", "It is"]}, {}),
    "bbq": ({"predictions": [2, 0, 1, 0, -1], "labels": [2, 2, 1, 0, 1], "target_locs": [0, 0, 1, 0, 0],
             "unknown_locs": [2, 2, 2, 2, 2], "question_polarities": ["neg", "neg", "nonneg", "neg", "neg"],
             "context_conditions": ["ambig", "ambig", "disambig", "disambig", "disambig"], "categories": ["Age"] * 5,
             "subgroups": ["a", "b", "a", "b", "a"]}, {}),
    "mbbq": ({"predictions": [1, 0, 1, 2, -1], "labels": [0, 0, 1, 2, 0], "target_locs": [1, 1, 1, 1, 1],
              "unknown_locs": [0, 0, 0, 0, 0], "context_conditions": ["ambig", "ambig", "disambig", "disambig", "ambig"],
              "categories": ["Age"] * 5, "templates": [1, 1, 1, 1, 2], "languages": ["nl"] * 5}, {}),
    "esbbq": ({"predictions": [0, 1, 2, 1, -1], "labels": [2, 2, 2, 1, 0], "target_locs": [0, 0, 1, 0, 0],
               "question_polarities": ["neg", "nonneg", "neg", "nonneg", "neg"],
               "context_conditions": ["ambig", "ambig", "ambig", "disambig", "disambig"],
               "question_types": ["n/a", "n/a", "n/a", "pro-stereo", "anti-stereo"], "categories": ["Age"] * 5}, {}),
    "cabbq": ({"predictions": [0, 1, 2, 1, -1], "labels": [2, 2, 2, 1, 0], "target_locs": [0, 0, 1, 0, 0],
               "question_polarities": ["neg", "nonneg", "neg", "nonneg", "neg"],
               "context_conditions": ["ambig", "ambig", "ambig", "disambig", "disambig"],
               "question_types": ["n/a", "n/a", "n/a", "pro-stereo", "anti-stereo"], "categories": ["Age"] * 5}, {}),
    "kobbq": ({"predictions": [2, 0, 1, -1, 0], "labels": [2, 2, 2, 2, 0], "biased_locs": [0, 0, 0, 0, 0],
               "unknown_locs": [2] * 5, "context_types": ["amb"] * 4 + ["dis-biased"], "categories": ["age"] * 5,
               "templates": ["age-001"] * 5}, {}),
    "cbbq": ({"predictions": [0, 2, 1, -1, 0], "labels": [2, 2, 2, 1, 1], "biased_locs": [0, 0, 1, 0, 0],
              "context_conditions": ["ambig"] * 3 + ["disambig"] * 2, "categories": ["SES"] * 5}, {}),
    "winogender": ({"predictions": [0, 1, 0, 1, 1], "labels": [0, 1, 1, 0, 1], "genders": ["male", "female", "male", "female", "neutral"],
                    "occupations": ["nurse", "nurse", "chef", "chef", "chef"], "gotchas": [True, False, False, True, False],
                    "occupation_logprobs": [-1.0, -2.0, -3.0, -1.5, -2.5], "participant_logprobs": [-2.0, -1.0, -1.0, -2.0, -2.0],
                    "pair_ids": ["a", "a", "b", "b", "b"]}, {}),
    "winobias": ({"predictions": [0, 1, 0, 0, 1], "labels": [0, 1, 0, 1, 1], "types": [1, 1, 1, 1, 2],
                  "stereotypes": ["pro", "pro", "anti", "anti", "pro"], "pairs": ["a", "b", "a", "b", "c"]}, {"bootstrap": 50}),
    "holistic_bias": ({"predictions": [10.0, 12.0, 30.0, 31.0, 11.0, 33.0, 13.0, 32.0], "axes": ["age"] * 8, "templates": ["t"] * 8,
                       "descriptors": ["old", "old", "young", "young", "old", "young", "old", "young"]}, {}),
    "seat": ({"predictions": ["This is John.", "This is Amy.", "This is a salary.", "This is a career.", "This is a wedding."],
              "sets": ["targ1", "targ2", "attr1", "attr1", "attr2"]}, {"n_samples": 10}),
}
CLASSIFIER_LABELS = {"bold_toxicity": ["toxic", "severe_toxic", "insult"], "bold_regard": ["negative", "neutral", "positive", "other"]}


def _load(name, tmp_path):
    config = {}
    if name in CLASSIFIER_LABELS:  # a tiny random classifier (plumbing: the outputs only need to be comparable)
        config["config_name"] = save_tiny_model(tmp_path / name, CLASSIFIER_LABELS[name], "multi_label_classification"
                                                if name == "bold_toxicity" else None)
    return evaluate.load(str(REPO / "metrics" / name), **config)


def _rows(examples, start, stop):
    return {key: values[start:stop] for key, values in examples.items()}


def test_every_module_is_covered():
    assert sorted(EXAMPLES) == sorted(p.name for p in (REPO / "metrics").iterdir() if (p / f"{p.name}.py").is_file())


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_add_batch_and_add_then_compute_equal_one_compute(name, tmp_path):
    module = _load(name, tmp_path)
    examples, options = EXAMPLES[name]
    whole = module.compute(**examples, **options)

    module.add_batch(**_rows(examples, 0, 2))
    module.add_batch(**_rows(examples, 2, None))
    assert module.compute(**options) == whole

    singular = {key: key[:-1] for key in examples}  # predictions -> prediction, groups -> group ...
    for i in range(len(next(iter(examples.values())))):
        module.add(**{singular[key]: values[i] for key, values in examples.items()})
    assert module.compute(**options) == whole

    module.add_batch(**_rows(examples, 0, 2))  # compute(...) with the last batch, as evaluate does
    assert module.compute(**_rows(examples, 2, None), **options) == whole
    assert module.compute(**examples, **options) == whole  # nothing left from the calls before


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_references_and_leftovers(name, tmp_path):
    module = _load(name, tmp_path)
    examples, options = EXAMPLES[name]
    with pytest.raises(ValueError, match="takes no references="):
        module.compute(**examples, references=[0] * 5, **options)
    with pytest.raises((ValueError, TypeError), match="nothing to compute|predictions must be"):
        module.compute(**options)
    module.add_batch(**_rows(examples, 0, 2))
    first = next(iter(examples))
    with pytest.raises((ValueError, TypeError)):
        module.compute(**{**examples, first: [None] * 5}, **options)  # a bad batch: the whole call fails ...
    with pytest.raises((ValueError, TypeError), match="nothing to compute|predictions must be"):
        module.compute(**options)  # ... and the batch added before it is gone with it


def test_per_example_inputs_must_match_the_batch(tmp_path):
    module = _load("bold_sentiment", tmp_path)
    with pytest.raises(ValueError, match="groups has 2 labels but there are 5 predictions"):
        module.add_batch(predictions=TEXTS, groups=GROUPS[:2])
    module.add_batch(predictions=TEXTS[:2], groups=GROUPS[:2])
    with pytest.raises(ValueError, match="same per-example inputs"):
        module.add_batch(predictions=TEXTS[2:])
