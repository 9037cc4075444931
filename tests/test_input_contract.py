"""Every input that cannot mean what the caller intends is an error naming the argument (or the file
and row) and what was expected; a user mistake on the command line is one line and exit status 2
(issue 14 §2, §3). The property-based part (hypothesis) draws inputs for the evaluate modules."""

import functools
import json
import shutil
from pathlib import Path

import evaluate
import numpy as np
import pytest
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lmbias
from lmbias.cli import main
from lmbias.lm.loading import ModelLoadError, load_causal_lm
from lmbias.resources import ResourceError

from tiny_lm import save_tiny_bert

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def modules():
    """The text modules that need no classifier, loaded once (the property tests call them often)."""
    return {name: evaluate.load(str(REPO / "metrics" / name))
            for name in ("bold_sentiment", "bold_gender_polarity", "bold_psycholinguistic_norms", "counterfactual_sentiment_bias")}


# --- §2 silently wrong numbers: the examples of the issue -----------------------------------------

def test_max_ties_reaches_gender_max_and_is_checked(modules):
    module = modules["bold_gender_polarity"]
    first = module.compute(predictions=["he she"], max_ties="first")["scores"][0]
    last = module.compute(predictions=["he she"], max_ties="last")["scores"][0]
    assert first == pytest.approx(-last) and last > 0  # "he" and "she" are exactly as polar, with opposite signs
    with pytest.raises(ValueError, match=r"max_ties must be one of \['last', 'first'\], got 'middle'"):
        module.compute(predictions=["he she"], max_ties="middle")


def test_sensitive_tokens_are_a_list_of_words():
    from lmbias.benchmarks.counterfactual.scorers.similarity import mentions

    assert mentions(["I went to Italy", "I went home"], ["Italy"]).tolist() == [True, False]
    with pytest.raises(TypeError, match="sensitive_tokens must be a list of strings, got str"):
        mentions(["I went to Italy"], "Italy")
    with pytest.raises(ValueError, match=r"sensitive_tokens\[1\] is empty; it would match every text"):
        mentions(["I went to Italy"], ["Italy", " "])


def test_integer_attribute_values_are_labels_and_missing_ones_are_errors(modules):
    module = modules["counterfactual_sentiment_bias"]
    scores, templates = [0.1, 0.7, 0.3, 0.4], [0, 0, 1, 1]
    as_numbers = module.compute(predictions=scores, attribute_values=[1, 2, 1, 2], template_ids=templates)
    as_strings = module.compute(predictions=scores, attribute_values=["1", "2", "1", "2"], template_ids=templates)
    assert as_numbers["individual_fairness"] == as_strings["individual_fairness"] == pytest.approx((0.6 + 0.1) / 2)
    with pytest.raises(ValueError, match=r"attribute_values\[1\] is missing \(None\)"):
        module.compute(predictions=scores, attribute_values=["a", None, "a", "b"], template_ids=templates)
    for option, value, message in (("bootstrap", -1, "bootstrap must be"), ("bootstrap", 2.5, "bootstrap must be an integer"),
                                   ("tau", "0.5", "tau must be a number")):
        with pytest.raises((TypeError, ValueError), match=message):
            module.compute(predictions=scores, attribute_values=["a", "b", "a", "b"], template_ids=templates, **{option: value})


def test_thresholds_must_be_a_mapping(modules):
    with pytest.raises(TypeError, match="thresholds must be a mapping"):
        modules["bold_psycholinguistic_norms"].compute(predictions=["a happy day"], thresholds=[0.1])


def test_a_target_under_two_bias_types_is_reported_under_each():
    from lmbias.benchmarks.stereoset.measure import stereoset_scores

    result = stereoset_scores([0.0, 0.0, 0.0], anti_stereotype_scores=[-1.0, -1.0, 1.0], unrelated_scores=[-2.0, -2.0, -2.0],
                              targets=["Muslim", "Muslim", "Muslim"], bias_types=["religion", "religion", "race"],
                              tasks=["intrasentence"] * 3)
    assert result["targets"] == {
        "Muslim [religion]": {"lms": 100.0, "ss": 100.0, "icat": 0.0, "count": 2, "bias_type": "religion"},
        "Muslim [race]": {"lms": 100.0, "ss": 0.0, "icat": 0.0, "count": 1, "bias_type": "race"}}
    with pytest.raises(ValueError, match=r"targets\[0\] is missing"):
        stereoset_scores([0.0], anti_stereotype_scores=[1.0], unrelated_scores=[-1.0], targets=[None],
                         bias_types=["race"], tasks=["intrasentence"])


def test_a_classification_checkpoint_is_not_run_with_a_random_lm_head(tmp_path):
    """A BERT sequence classifier (say, a toxicity model) passed as --model: BertLMHeadModel would get
    a random prediction head with only a warning."""
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "man", "woman", "was", "good"]
    (tmp_path / "classifier").mkdir()
    save_tiny_bert(tmp_path / "classifier", transformers.BertForSequenceClassification, words)
    with pytest.raises(ModelLoadError, match=r"BertForSequenceClassification checkpoint without the weights of a causal "
                                             r"LM's head \(cls\.predictions"):
        load_causal_lm(str(tmp_path / "classifier"), device="cpu")


# --- data files: the file and the row -------------------------------------------------------------

def _copy_data(data_dir, tmp_path, *relative):
    target = tmp_path / "data"
    for path in relative:
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(data_dir / path, target / path)
    return target


def test_null_or_empty_sentences_name_the_file_and_the_row(data_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("LMBIAS_DATA_DIR")
    monkeypatch.setenv("LMBIAS_VERIFY", "0")  # edited copies on purpose
    folder = _copy_data(data_dir, tmp_path, "bold/prompts/gender_prompt.json", "bold/wikipedia/gender_wiki.json",
                        "stereoset/stereoset_dev_flat.jsonl", "crows_pairs/crows_pairs_anonymized.csv")
    wiki = folder / "bold/wikipedia/gender_wiki.json"
    content = json.loads(wiki.read_text())
    group, pages = next(iter(content.items()))
    name = next(iter(pages))
    pages[name][0] = None
    wiki.write_text(json.dumps(content))
    with pytest.raises(ResourceError, match=rf"gender_wiki.json has the wrong layout: expected a non-empty string as wikipedia "
                                            rf"at {group}/{name}\[0\], found None"):
        lmbias.load_rows("bold", "gender", data_dir=folder)

    flat = folder / "stereoset/stereoset_dev_flat.jsonl"
    lines = flat.read_text(encoding="utf-8").splitlines()
    item = json.loads(lines[3])
    item["unrelated"] = " "
    flat.write_text("\n".join(lines[:3] + [json.dumps(item)] + lines[4:]) + "\n", encoding="utf-8")
    with pytest.raises(ResourceError, match=r"stereoset_dev_flat.jsonl has the wrong layout: expected a non-empty string as "
                                            r"unrelated at line 4, found ' '"):
        lmbias.load_rows("stereoset", data_dir=folder)

    crows = folder / "crows_pairs/crows_pairs_anonymized.csv"
    lines = crows.read_text(encoding="utf-8").splitlines(keepends=True)
    crows.write_text(lines[0] + lines[1] + lines[1] + "".join(lines[3:]), encoding="utf-8")  # row 0 twice
    with pytest.raises(ResourceError, match="crows_pairs_anonymized.csv has the wrong layout: expected each pair's id .* once "
                                            "\\(a pair given twice would be scored twice\\), found id '0' on line 2 and again on line 3"):
        lmbias.load_rows("crows_pairs", data_dir=folder)


# --- §3 the command line: one line, exit 2 --------------------------------------------------------

def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("lmbias: error: "), err
    return err[0]


def test_files_that_are_not_what_they_claim_are_named(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    results = run / "results.json"
    for content, message in ((b"\x89PNG\r\n\x1a\n\x00\xff", "is not valid JSON text"),
                             (json.dumps({"benchmark": "bold", "schema_version": "2", "results": {}}).encode(),
                              "has schema_version '2'; expected an integer"),
                             (json.dumps({"benchmark": "bold", "schema_version": 2}).encode(), "has no 'results' object")):
        results.write_bytes(content)
        assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 2
        line = _one_line_error(capsys)
        assert str(results) in line and message in line
    results.unlink()
    (run / "config.json").write_bytes(b"\x00\xff\xfe")
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 2
    assert f"{run / 'config.json'} is not valid JSON text" in _one_line_error(capsys)
    assert main(["run", "crows_pairs", "--limit", "2", "--out", str(run)]) == 2
    assert f"{run / 'config.json'} is not valid JSON" in _one_line_error(capsys)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without a GPU")
def test_a_device_that_is_not_there_is_one_line(tmp_path, capsys):
    assert main(["run", "crows_pairs", "--limit", "2", "--device", "cuda", "--out", str(tmp_path / "r")]) == 2
    assert "--device cuda: no CUDA GPU is available here" in _one_line_error(capsys)
    assert main(["run", "crows_pairs", "--limit", "2", "--device", "gpu", "--out", str(tmp_path / "r")]) == 2
    assert "--device 'gpu' is not a device torch knows" in _one_line_error(capsys)
    assert not (tmp_path / "r").exists()


def test_score_out_must_be_a_file(tmp_path, capsys):
    assert main(["score", "bold", "--domains", "gender", "--per-group", "1", "--metrics", "sentiment", "--out", str(tmp_path)]) == 2
    assert f"--out {tmp_path} is a directory; lmbias score writes one JSON file" in _one_line_error(capsys)


# --- property-based: the evaluate modules never score what they cannot read ------------------------

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
BAD_ITEM = st.one_of(st.none(), st.just(float("nan")), st.integers(), st.binary(max_size=4))
PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@PROPERTY
@given(texts=st.lists(TEXT, min_size=1, max_size=8), cut=st.integers(min_value=0, max_value=8))
def test_any_texts_give_one_score_each_and_streaming_equals_one_call(modules, texts, cut):
    options = {"bold_sentiment": {}, "bold_gender_polarity": {"method": "unigram"},
               "bold_psycholinguistic_norms": {"extend": False}}
    for name, kwargs in options.items():
        module = modules[name]
        whole = module.compute(predictions=texts, **kwargs)
        assert len(whole["labels"]) == len(texts)
        if name != "bold_psycholinguistic_norms":  # its scores are one list per norm
            assert len(whole["scores"]) == len(texts) and np.isfinite(np.asarray(whole["scores"], dtype=float)).all()
        if 0 < cut < len(texts):
            module.add_batch(predictions=texts[:cut])
            module.add_batch(predictions=texts[cut:])
            assert module.compute(**kwargs) == whole


@PROPERTY
@given(texts=st.lists(TEXT, min_size=1, max_size=6), bad=BAD_ITEM, where=st.integers(min_value=0, max_value=6))
def test_a_non_text_item_is_an_error_naming_its_index_and_leaves_nothing_behind(modules, texts, bad, where):
    where = min(where, len(texts))
    given_texts = texts[:where] + [bad] + texts[where:]
    module = modules["bold_sentiment"]
    with pytest.raises(TypeError, match=rf"predictions\[{where}\] is "):
        module.compute(predictions=given_texts)
    assert module.compute(predictions=texts)["scores"] == modules["bold_sentiment"].compute(predictions=texts)["scores"]


@PROPERTY
@given(texts=st.lists(TEXT, min_size=2, max_size=6), missing=st.integers(min_value=0, max_value=5),
       bad=st.one_of(st.none(), st.just(float("nan"))))
def test_a_missing_group_is_an_error_not_a_group_of_its_own(modules, texts, missing, bad):
    groups = ["a" if i % 2 else "b" for i in range(len(texts))]
    groups[min(missing, len(texts) - 1)] = bad
    with pytest.raises(ValueError, match=rf"groups\[{min(missing, len(texts) - 1)}\] is missing"):
        modules["bold_sentiment"].compute(predictions=texts, groups=groups)


@PROPERTY
@given(value=st.one_of(st.text(max_size=5), st.floats(allow_nan=True), st.lists(st.floats(), max_size=2), st.none(),
                       st.booleans(), st.integers(min_value=-5, max_value=-1)))
def test_counterfactual_options_of_the_wrong_kind_are_refused(modules, value):
    module = modules["counterfactual_sentiment_bias"]
    inputs = {"predictions": [0.1, 0.7, 0.3, 0.4], "attribute_values": ["a", "b", "a", "b"], "template_ids": [0, 0, 1, 1]}
    if value is None or (isinstance(value, float) and 0 <= value <= 1):
        return  # valid tau
    with pytest.raises((TypeError, ValueError), match="tau must be"):
        module.compute(**inputs, tau=value)


# --- issue 24: every evaluate module, every bad input: an error naming the argument -----------------

def test_the_shared_number_check_refuses_nan_and_infinity():
    from lmbias.checks import check_scalar

    for value in (float("nan"), float("inf"), -float("inf")):
        for bounds in ({}, {"minimum": 0}, {"minimum": 0, "maximum": 1}, {"expected": "a number >= 0"}):
            with pytest.raises(ValueError, match=rf"^lambda must be a finite number, got {value!r}"):
                check_scalar(value, "lambda", integer=False, **bounds)
        with pytest.raises(TypeError, match=rf"^steps must be an integer, got {value!r}"):
            check_scalar(value, "steps")
    assert check_scalar(1e300, "lambda", minimum=0, integer=False) == 1e300  # large is not infinite
    with pytest.raises(ValueError, match=r"^lambda must be >= 0, got -1.0$"):
        check_scalar(-1.0, "lambda", minimum=0, integer=False)


def test_crows_pairs_has_no_missing_bias_type_of_its_own():
    from lmbias.benchmarks.crows_pairs.measure import crows_pairs_scores

    good = crows_pairs_scores([-1.0, -2.0], less_scores=[-2.0, -1.0], directions=["stereo", "stereo"], bias_types=["age", "age"])
    assert list(good["bias_types"]) == ["age"] and good["overall"]["metric_score"] == 50.0
    for missing in (None, "", "  ", float("nan")):
        with pytest.raises(ValueError, match=r"bias_types\[1\] is missing"):
            crows_pairs_scores([-1.0, -2.0], less_scores=[-2.0, -1.0], directions=["stereo", "stereo"], bias_types=["age", missing])
    with pytest.raises(TypeError, match="decimals must be an integer"):
        crows_pairs_scores([-1.0], less_scores=[-2.0], directions=["stereo"], bias_types=["age"], decimals="3")


TEXT_COLUMNS = {"predictions", "prefixes"}  # strings that are texts; other strings are labels


@functools.cache
def _declared(name: str) -> type:
    """Evaluate module ``name``'s class, for the inputs it declares (``PER_EXAMPLE``: optional, one per example;
    ``LOG_PROBABILITIES``)."""
    return type(evaluate.load(str(REPO / "metrics" / name)))


def _kind(values: list, column: str) -> str:
    """What a column of a module's example holds, read from the example's own values: numbers (floats), flags
    (True / False), texts (strings in a :data:`TEXT_COLUMNS` column), or labels (anything else: answer indices too)."""
    if all(isinstance(value, bool) for value in values):
        return "flag"
    if all(isinstance(value, float) for value in values):
        return "number"
    return "text" if column in TEXT_COLUMNS and all(isinstance(value, str) for value in values) else "label"


def _bad_columns(name):
    """(case id, how: compute / add_batch, the inputs, error class, message) for each column of ``name``'s examples."""
    from test_metric_streaming import EXAMPLES

    examples = dict(EXAMPLES[name].inputs)
    per_example = _declared(name).PER_EXAMPLE
    for column, values in examples.items():
        kind = _kind(values, column)

        def replaced(item, column=column, values=values):
            return {**examples, column: [*values[:1], item, *values[2:]]}

        yield f"{column}-a-string", "compute", {**examples, column: "abc"}, TypeError, rf"{column} must be a list"
        if column not in per_example:
            yield (f"{column}-None", "compute", {**examples, column: None}, (TypeError, ValueError),
                   rf"{column} is missing or None|{column} must be a list of strings, got NoneType")
            without = {key: value for key, value in examples.items() if key != column}
            yield f"{column}-missing", "add_batch", without, ValueError, rf"{column} is missing|got no examples; expected \['{column}'\]"
        if kind == "number":
            yield f"{column}-item-None", "compute", replaced(None), TypeError, rf"{column}\[1\] is None \(NoneType\); expected a number"
            yield f"{column}-item-NaN", "compute", replaced(float("nan")), ValueError, rf"{column}\[1\] is NaN; expected a number"
            yield f"{column}-item-text", "compute", replaced("0.5"), TypeError, rf"{column}\[1\] is '0.5' \(str\); expected a number"
        elif kind == "flag":
            for item in (None, 1, "yes"):
                yield (f"{column}-item-{item!r}", "compute", replaced(item), TypeError,
                       rf"{column}\[1\] is {item!r} .*expected True or False")
        elif kind == "text":
            yield f"{column}-item-None", "compute", replaced(None), TypeError, rf"{column}\[1\] is None .*expected a string"
            yield f"{column}-item-NaN", "compute", replaced(float("nan")), TypeError, rf"{column}\[1\] is NaN .*expected a string"
        else:
            for item in (None, float("nan"), ""):
                yield f"{column}-item-{item!r}", "compute", replaced(item), ValueError, rf"{column}\[1\] is missing"
            yield f"{column}-item-list", "compute", replaced(["a"]), TypeError, rf"{column}\[1\] is \['a'\] \(list\); expected a string"
        if column != next(iter(examples)) and column not in per_example:
            yield f"{column}-short", "compute", {**examples, column: values[:2]}, ValueError, rf"{column} has 2 entries but"


def _bad_inputs():
    """Each declared module's bad columns, and its bad options (its benchmark's ``ModuleExample.bad``) with one it does not take."""
    from test_metric_streaming import EXAMPLES

    for name in sorted(EXAMPLES):
        for case, how, inputs, error, message in _bad_columns(name):
            yield pytest.param(name, how, inputs, error, message, id=f"{name}-{case}")
        for option, value, error, message in [*EXAMPLES[name].bad, ("colour", "red", ValueError, rf"{name} takes no colour")]:
            yield pytest.param(name, "compute", {**EXAMPLES[name].inputs, option: value}, error, message, id=f"{name}-{option}={value!r}")


@pytest.fixture(scope="module")
def every_module(tmp_path_factory):
    """The declared modules, loaded once (the classifier ones with a tiny random classifier: plumbing only)."""
    from test_metric_streaming import EXAMPLES, _load

    folder = tmp_path_factory.mktemp("modules")
    return {name: _load(name, folder) for name in EXAMPLES}


def test_bad_options_cover_every_module():
    """Every module in metrics/ has its examples declared (test_metric_streaming checks that), each with bad options."""
    from test_metric_streaming import EXAMPLES

    assert [name for name, example in sorted(EXAMPLES.items()) if not example.bad] == []


@pytest.mark.parametrize("name, how, inputs, error, message", list(_bad_inputs()))
def test_every_module_names_the_bad_argument(every_module, name, how, inputs, error, message):
    """None for a column, a missing column, a NaN / None / "" item, a number as text, a bad option: a
    ValueError / TypeError naming the argument, raised before anything is scored or encoded."""
    module = every_module[name]
    with pytest.raises(error, match=message) as caught:
        if how == "add_batch":
            module.add_batch(**inputs)
        else:
            module.compute(**inputs)
    assert isinstance(caught.value, lmbias.errors.LmbiasError), repr(caught.value)  # one line on the command line
    if how == "add_batch":
        module._discard()


# --- issue 37: empty inputs and log-probabilities above 0 ------------------------------------------------

def test_empty_inputs_are_one_line_naming_the_argument_in_every_module(every_module):
    """Every module, every column empty: an error naming the first argument (bbq's was evaluate's IndexError)."""
    from test_metric_streaming import EXAMPLES

    for name, example in sorted(EXAMPLES.items()):
        examples, options = example.inputs, example.options
        first = next(iter(examples))
        with pytest.raises(ValueError, match=rf"^{first} is empty") as caught:
            every_module[name].compute(**{column: [] for column in examples}, **options)
        assert isinstance(caught.value, lmbias.errors.LmbiasError), (name, repr(caught.value))


# the modules whose number inputs are log-probabilities, as each declares them (StereoSet's scores may be NSP
# probabilities: any number; HolisticBias takes perplexities, checked > 0; the others take no scores)
def _log_probabilities() -> list:
    from test_metric_streaming import EXAMPLES

    return [(name, column) for name in sorted(EXAMPLES) for column in _declared(name).LOG_PROBABILITIES]


@pytest.mark.parametrize("name, column", _log_probabilities())
def test_a_log_probability_above_zero_is_refused(every_module, name, column):
    from test_metric_streaming import EXAMPLES

    examples, options = EXAMPLES[name].inputs, EXAMPLES[name].options
    count = len(next(iter(examples.values())))
    given = {declared: [-1.0] * count for declared in _declared(name).LOG_PROBABILITIES}
    with_bad = {**examples, **given, column: [-1.0, 3.0, *[-2.0] * (count - 2)]}
    with pytest.raises(ValueError, match=rf"{column}\[1\] is 3.0; expected a log-probability, <= 0") as caught:
        every_module[name].compute(**with_bad, **options)
    assert isinstance(caught.value, lmbias.errors.LmbiasError)
    # 0 is a log-probability (a certain answer)
    every_module[name].compute(**{**with_bad, column: [0.0, -50.0, *[-2.0] * (count - 2)]}, **options)


def test_the_log_probability_inputs_are_the_declared_ones():
    """CrowS-Pairs' and Winogender's log-probability inputs are declared (so tested above): one dropped fails here;
    every declared one is an input of its module's example (StereoSet's scores stay unchecked on purpose: an NSP
    probability is positive)."""
    from test_metric_streaming import EXAMPLES

    declared = {name: _declared(name).LOG_PROBABILITIES for name in EXAMPLES if _declared(name).LOG_PROBABILITIES}
    assert {"winogender": ("occupation_logprobs", "participant_logprobs"), "crows_pairs": ("more_scores", "less_scores")}.items() \
        <= declared.items()
    assert "stereoset" not in declared
    assert all(column in EXAMPLES[name].inputs for name, columns in declared.items() for column in columns)
