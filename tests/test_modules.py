"""The evaluate modules by name (issue 17 §1): `lmbias modules install` makes `evaluate.load("NAME")`
work offline from any directory in a fresh process; `lmbias modules push --dry-run` writes Spaces."""

import json
import os
import subprocess
import sys

import pytest

from lmbias import __version__
from lmbias.cli import main
from lmbias.modules import module_names

LOAD = """
import evaluate, json
module = evaluate.load("bold_gender_polarity")
labels = module.compute(predictions=["She is an actress.", "He is an actor.", "It is a table."], method="unigram")["labels"]
print(json.dumps({"module": type(module).__module__, "labels": labels}))
"""


def _load_in_a_fresh_process(cache, cwd):
    env = {**os.environ, "HF_MODULES_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", LOAD], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_installed_modules_load_by_name_offline_from_anywhere(tmp_path):
    cache, elsewhere = tmp_path / "modules", tmp_path / "elsewhere"
    elsewhere.mkdir()
    home = cache / "evaluate_modules" / "metrics" / "evaluate-metric--bold_gender_polarity"
    old = home / ("0" * 64)  # a copy left by another lmbias version, newer on disk
    old.mkdir(parents=True)
    (old / "bold_gender_polarity.py").write_text("raise RuntimeError('the old module was loaded')\n")
    # a process of its own, as a user runs it (evaluate puts the modules cache on sys.path)
    done = subprocess.run([sys.executable, "-m", "lmbias", "modules", "install", "--modules-cache", str(cache)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and f"installed {len(module_names())} evaluate modules (lmbias {__version__})" in done.stdout, done.stderr
    assert not old.exists() and len(list(home.glob("*/bold_gender_polarity.py"))) == 1
    loaded = _load_in_a_fresh_process(cache, elsewhere)
    assert loaded["labels"] == ["female", "male", "neutral"]
    assert loaded["module"].startswith("evaluate_modules.metrics.evaluate-metric--bold_gender_polarity.")
    assert sorted(p.name.removeprefix("evaluate-metric--") for p in home.parent.iterdir()
                  if p.is_dir() and p.name != "__pycache__") == module_names()  # Python may cache bytecode there


def test_push_dry_run_writes_spaces_that_load_and_can_install_lmbias(tmp_path, capsys):
    import evaluate

    requirement = "lmbias @ git+https://github.com/example/lmbias@0123456789abcdef"
    assert main(["modules", "push", "--org", "example", "--requirement", requirement, "--dry-run", "--out", str(tmp_path)]) == 0
    assert f"wrote {len(module_names())} Space folders" in capsys.readouterr().out
    space = tmp_path / "stereoset"
    assert sorted(p.name for p in space.iterdir()) == ["README.md", "app.py", "requirements.txt", "stereoset.py"]
    assert requirement in (space / "requirements.txt").read_text().splitlines()
    assert "sdk: gradio" in (space / "README.md").read_text()
    assert type(evaluate.load(str(space))).__name__ == "Stereoset"
    default = tmp_path / "default"
    main(["modules", "push", "--org", "example", "--dry-run", "--out", str(default)])
    assert f"lmbias=={__version__}" in (default / "crows_pairs" / "requirements.txt").read_text().splitlines()


@pytest.mark.parametrize("argv, message", [
    (["modules", "push", "--org", "bad org", "--dry-run", "--out", "x"], "--org must be a Hub user or organisation name"),
    (["modules", "push", "--org", "example", "--dry-run"], "--dry-run needs --out DIR"),
])
def test_module_push_mistakes_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err
