"""The installable wheel (issue 17 §3): built with `python -m build`, checked with `twine check`, and
installed into a fresh virtualenv outside the repository, where it does what the checkout does."""

import subprocess
import sys
import venv
from pathlib import Path

import pytest

from lmbias import __version__

REPO = Path(__file__).resolve().parents[1]
# The installed lmbias's requirements (no extras) that the environment does not satisfy.
REQUIREMENTS_MET = """
from importlib.metadata import PackageNotFoundError, distribution, version
from packaging.requirements import Requirement
unmet = []
for line in distribution("lmbias").requires or []:
    requirement = Requirement(line)
    if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
        try:
            if not requirement.specifier.contains(version(requirement.name), prereleases=True):
                unmet.append(f"{requirement}: {version(requirement.name)}")
        except PackageNotFoundError:
            unmet.append(f"{requirement}: missing")
print(unmet)
"""


def _run(command, **kwargs):
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, **kwargs)
    assert done.returncode == 0, f"{command[:4]}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh venv with the built wheel installed.

    Its dependencies are this environment's (a .pth line puts our site-packages after the venv's own,
    and a check proves they satisfy the wheel's requirements): a full install from the package
    index repeats `make install` (minutes) and tests pip rather than the wheel. The lmbias it imports
    is the wheel's: the checkout's editable hook lives in a .pth file of our site-packages, which a
    path added that way does not run."""
    import sysconfig

    root = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(root / "dist"), str(REPO)])
    wheel = next((root / "dist").glob("lmbias-*.whl"))
    _run([sys.executable, "-m", "twine", "check", "--strict", str(wheel)])
    venv.create(root / "venv", with_pip=True)
    python = root / "venv" / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--force-reinstall",
          str(wheel)])  # the wheel even where the .pth line shows an lmbias installed already (an editable checkout)
    unmet = _run([str(python), "-c", REQUIREMENTS_MET], cwd=root).strip()
    assert unmet == "[]", unmet
    (root / "work").mkdir()
    return wheel, root / "venv" / "bin", root / "work"


def test_the_wheel_is_named_by_the_one_version(installed):
    wheel, bin_dir, work = installed
    assert wheel.name == f"lmbias-{__version__}-py3-none-any.whl"
    assert _run([str(bin_dir / "lmbias"), "--version"], cwd=work).strip() == f"lmbias {__version__}"


def test_the_installed_wheel_exports_datasets_and_loads_modules_by_name(installed):
    _, bin_dir, work = installed
    python = str(bin_dir / "python")
    where = _run([python, "-c", "import lmbias; print(lmbias.__file__)"], cwd=work)
    assert str(REPO) not in where  # the installed copy, not the checkout
    out = _run([str(bin_dir / "lmbias"), "export-dataset", "counterfactual_templates", "--out", "cf"], cwd=work)
    assert "counterfactual_templates/occupation: 290 rows" in out and (work / "cf" / "README.md").is_file()
    env = {"PATH": str(bin_dir), "HOME": str(work), "HF_MODULES_CACHE": str(work / "modules"), "HF_HUB_OFFLINE": "1"}
    _run([str(bin_dir / "lmbias"), "modules", "install"], cwd=work, env=env)
    loaded = _run([python, "-c", "import evaluate; m = evaluate.load('bold_gender_polarity'); print(type(m).__name__); "
                   "s = evaluate.load('bold_sentiment'); print(s.compute(predictions=['A wonderful, happy day.'])['labels'])"],
                  cwd=work, env=env)
    assert loaded.split() == ["BoldGenderPolarity", "['positive']"]
    page = _run([python, "-c", "from importlib.resources import files; print(files('lmbias.leaderboard').joinpath('page.html')"
                 ".is_file())"], cwd=work)
    assert page.strip() == "True"


def test_setup_cfg_lists_every_lmbias_package():
    """setup.cfg names the packages (it maps two top-level folders into the wheel), so a new one must be listed."""
    import configparser

    from setuptools import find_packages

    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    assert set(find_packages(str(REPO), include=["lmbias", "lmbias.*"])) | {"lmbias.evaluate_modules", "lmbias.hub_cards"} == listed
