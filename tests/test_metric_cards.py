"""Every evaluate module in metrics/: loads offline, has a Space-ready card whose examples run as
written, loading the module by name (``evaluate.load("NAME")``) after ``lmbias modules install``."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import evaluate
import pytest

from lmbias.data.export import read_card_metadata

REPO = Path(__file__).resolve().parents[1]
MODULES = sorted(p.name for p in (REPO / "metrics").iterdir() if (p / f"{p.name}.py").is_file())

# Every card's doctests in one fresh process, in a folder with no metrics/ in it, with the modules
# installed by name in an evaluate modules cache of its own (what `make install` does for a user).
RUN_CARDS = """
import contextlib, doctest, io, json, sys
from lmbias.modules import install_modules

install_modules()
results = {}
for name, card in json.loads(sys.argv[1]).items():
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        outcome = doctest.testfile(card, module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    results[name] = {"attempted": outcome.attempted, "failed": outcome.failed, "printed": printed.getvalue()[-3000:]}
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def card_examples(tmp_path_factory) -> dict:
    """{module: {"attempted", "failed", "printed"}} of its card's examples, run by name from elsewhere."""
    cache, elsewhere = tmp_path_factory.mktemp("modules-cache"), tmp_path_factory.mktemp("elsewhere")
    cards = {name: str(REPO / "metrics" / name / "README.md") for name in MODULES}
    env = {**os.environ, "HF_MODULES_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    if env.get("LMBIAS_DATA_DIR"):  # a relative data folder would not be found from elsewhere
        env["LMBIAS_DATA_DIR"] = os.pathsep.join(str(Path(p).resolve()) for p in env["LMBIAS_DATA_DIR"].split(os.pathsep) if p)
    done = subprocess.run([sys.executable, "-c", RUN_CARDS, json.dumps(cards)], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_module_exists():
    bold = {"bold_sentiment", "bold_toxicity", "bold_regard", "bold_psycholinguistic_norms", "bold_gender_polarity"}
    assert bold | {"stereoset", "crows_pairs"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_module_loads_offline_and_documents_itself(name):
    module = evaluate.load(str(REPO / "metrics" / name))
    assert module.name == name
    assert "Args:" in module.inputs_description and "Returns:" in module.inputs_description
    assert re.search(r"@(inproceedings|article|misc)\{", module.citation)  # a BibTeX entry (a preprint is @misc)


@pytest.mark.parametrize("name", MODULES)
def test_card_is_space_ready_and_its_examples_run(name, card_examples):
    folder = REPO / "metrics" / name
    metadata = read_card_metadata(folder / "README.md")
    assert metadata["sdk"] == "gradio" and metadata["app_file"] == "app.py" and (folder / "app.py").is_file()
    assert "lmbias" in (folder / "requirements.txt").read_text().split()
    card = (folder / "README.md").read_text()
    assert "## Citation" in card and re.search(r"@(inproceedings|article|misc)\{", card)
    limitations = card.split("## Limitations and bias", 1)
    assert len(limitations) == 2 and len(limitations[1].split("\n## ")[0].split()) >= 40  # a section with substance
    assert f'evaluate.load("{name}"' in card  # by name, as a user with lmbias installed loads it
    assert not re.search(r'^>>> .*evaluate\.load\("metrics/', card, re.MULTILINE)  # never only from a checkout
    result = card_examples[name]
    assert result["attempted"] > 0 and result["failed"] == 0, result["printed"]


@pytest.mark.parametrize("name", MODULES)
def test_every_option_of_a_module_is_in_its_kwargs_description(name):
    """What ``compute`` accepts is what the module's inputs description (shown on its Space) explains."""
    import inspect

    module = evaluate.load(str(REPO / "metrics" / name))
    options = [p for p in inspect.signature(module._compute).parameters if p not in ("self", "kwargs")]
    described = module.inputs_description
    missing = [option for option in options if not re.search(rf"^\s*{option}\b", described, re.MULTILINE)]
    assert options and not missing, f"{name}: {missing} not in its kwargs description"
