"""evaluate's streaming API on every module in metrics/: ``add`` / ``add_batch`` then ``compute()``
gives what one ``compute(...)`` over the same examples gives, per-example inputs (``groups`` ...)
included; nothing is left behind for the next call, even after an error; ``references=`` is refused.
Each module's examples are its benchmark's declaration (``Benchmark.examples``), read from the registry."""

from pathlib import Path

import evaluate
import pytest

from lmbias.benchmarks import benchmarks

from test_toxicity_regard import save_tiny_model

REPO = Path(__file__).resolve().parents[1]


def module_examples() -> dict:
    """Every evaluate module the registered benchmarks declare (``Benchmark.examples.modules``) -> its
    :class:`~lmbias.benchmarks.ModuleExample`; a module two benchmarks declare is an error."""
    found: dict = {}
    for benchmark in benchmarks():
        for name, example in benchmark.examples.modules.items():
            assert name not in found, f"{benchmark.name} declares the examples of {name}, which another benchmark declares"
            found[name] = example
    return found


EXAMPLES = module_examples()


def module_folders() -> list:
    """The evaluate modules in metrics/ (``metrics/<name>/<name>.py``)."""
    return sorted(p.name for p in (REPO / "metrics").iterdir() if (p / f"{p.name}.py").is_file())


def _load(name, tmp_path):
    config = {}
    classifier = EXAMPLES[name].classifier
    if classifier:  # a tiny random classifier (plumbing: the outputs only need to be comparable)
        config["config_name"] = save_tiny_model(tmp_path / name, list(classifier["labels"]),
                                                "multi_label_classification" if classifier.get("multi_label") else None)
    return evaluate.load(str(REPO / "metrics" / name), **config)


def _rows(examples, start, stop):
    return {key: values[start:stop] for key, values in examples.items()}


def test_every_module_is_covered():
    """Each module in metrics/ has its examples declared by its benchmark, and each declared module exists."""
    assert sorted(module_examples()) == module_folders()


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_add_batch_and_add_then_compute_equal_one_compute(name, tmp_path):
    module = _load(name, tmp_path)
    examples, options = dict(EXAMPLES[name].inputs), dict(EXAMPLES[name].options)
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
    examples, options = dict(EXAMPLES[name].inputs), dict(EXAMPLES[name].options)
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
    texts, groups = EXAMPLES["bold_sentiment"].inputs["predictions"], EXAMPLES["bold_sentiment"].inputs["groups"]
    with pytest.raises(ValueError, match="groups has 2 labels but there are 5 predictions"):
        module.add_batch(predictions=texts, groups=groups[:2])
    module.add_batch(predictions=texts[:2], groups=groups[:2])
    with pytest.raises(ValueError, match="same per-example inputs"):
        module.add_batch(predictions=texts[2:])
