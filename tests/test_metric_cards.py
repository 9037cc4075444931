"""Every evaluate module in metrics/: loads offline, has a Space-ready card whose examples run."""

import doctest
import re
from pathlib import Path

import evaluate
import pytest

from lmbias.data.export import read_card_metadata

REPO = Path(__file__).resolve().parents[1]
MODULES = sorted(p.name for p in (REPO / "metrics").iterdir() if (p / f"{p.name}.py").is_file())


def test_every_module_exists():
    bold = {"bold_sentiment", "bold_toxicity", "bold_regard", "bold_psycholinguistic_norms", "bold_gender_polarity"}
    assert bold | {"stereoset", "crows_pairs"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_loads_offline_and_documents_itself(name):
    module = evaluate.load(str(REPO / "metrics" / name))
    assert module.name == name
    assert "Args:" in module.inputs_description and "Returns:" in module.inputs_description
    assert "@inproceedings{" in module.citation


@pytest.mark.parametrize("name", MODULES)
def test_card_is_space_ready_and_its_examples_run(name, monkeypatch):
    folder = REPO / "metrics" / name
    metadata = read_card_metadata(folder / "README.md")
    assert metadata["sdk"] == "gradio" and metadata["app_file"] == "app.py" and (folder / "app.py").is_file()
    assert "lmbias" in (folder / "requirements.txt").read_text().split()
    card = (folder / "README.md").read_text()
    assert "## Citation" in card and "@inproceedings{" in card
    limitations = card.split("## Limitations and bias", 1)
    assert len(limitations) == 2 and len(limitations[1].split("\n## ")[0].split()) >= 40  # a section with substance
    monkeypatch.chdir(REPO)
    result = doctest.testfile(
        str(folder / "README.md"), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_every_option_of_a_module_is_in_its_kwargs_description(name):
    """What ``compute`` accepts is what the module's inputs description (shown on its Space) explains."""
    import inspect

    module = evaluate.load(str(REPO / "metrics" / name))
    options = [p for p in inspect.signature(module._compute).parameters if p not in ("self", "kwargs")]
    described = module.inputs_description
    missing = [option for option in options if not re.search(rf"^\s*{option}\b", described, re.MULTILINE)]
    assert options and not missing, f"{name}: {missing} not in its kwargs description"
