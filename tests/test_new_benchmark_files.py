"""bench/new_benchmark_files.py on a synthetic git repository (real git, in tmp_path): which files a new benchmark
touched outside its folder, its evaluate module, its page, its test and its one registration line. The expected
rows are read off the commits made here by hand."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("new_benchmark_files", ROOT / "bench" / "new_benchmark_files.py")
nbf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nbf)

SETUP = """[options]
packages = find:

[options.entry_points]
lmbias.benchmarks =
    alpha = lmbias.benchmarks.alpha:BENCHMARK
"""
REGISTERED = SETUP + "    beta = lmbias.benchmarks.beta:BENCHMARK\n"


def commit(repo: Path, files: dict, message: str) -> str:
    """Write ``files`` (path -> text) into ``repo``, commit them and return the commit's id."""
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message],
                   check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A repository with one benchmark (alpha) on main and a branch ``beta`` that adds a second in two commits:
    first only its own files and its registration line, then three shared files."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    commit(tmp_path, {"setup.cfg": SETUP, "lmbias/benchmarks/alpha/__init__.py": "A = 1\n", "README.md": "| alpha |\n",
                      "tests/test_suite.py": "NAMES = ['alpha']\n"}, "alpha")
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", "-b", "beta"], check=True)
    own = commit(tmp_path, {"setup.cfg": REGISTERED, "lmbias/benchmarks/beta/__init__.py": "B = 1\n",
                            "lmbias/benchmarks/beta/data.py": "ROWS = []\nSPEC = None\n", "metrics/beta/beta.py": "x = 1\n",
                            "metrics/beta/README.md": "# beta\n", "docs/benchmarks/beta.md": "# Beta\n",
                            "tests/test_beta.py": "def test_b():\n    assert 1\n"}, "beta: its own files")
    shared = commit(tmp_path, {"README.md": "| alpha |\n| beta |\n", "tests/test_suite.py": "NAMES = ['alpha', 'beta']\n",
                               "setup.cfg": REGISTERED.replace("find:", "find:\npackage_dir =\n    x = y"),
                               "metrics/betamax/betamax.py": "y = 2\n"}, "beta: shared places")
    return tmp_path, own, shared


def test_a_benchmark_that_touches_only_its_own_places_has_nothing_outside(repo):
    path, own, _ = repo
    rows, names = nbf.table(str(path), [own])
    assert names == {"beta"}
    assert [(row["path"], row["own"], row["added"], row["removed"]) for row in rows] == [
        ("docs/benchmarks/beta.md", True, 1, 0), ("lmbias/benchmarks/beta/__init__.py", True, 1, 0),
        ("lmbias/benchmarks/beta/data.py", True, 2, 0), ("metrics/beta/README.md", True, 1, 0),
        ("metrics/beta/beta.py", True, 1, 0), ("setup.cfg", True, 1, 0), ("tests/test_beta.py", True, 2, 0)]
    assert nbf.render(rows, names).splitlines()[-1].startswith("0 of 7 changed files are outside the goal set")


def test_shared_files_and_a_setup_cfg_change_beyond_the_line_are_listed_first(repo, capsys):
    path, own, shared = repo
    # the branch as a range: setup.cfg changed beyond the registration line (+1 line, +2 of package_dir), README and
    # the suite's table by hand; metrics/betamax/ is not beta's (only metrics/beta/ and metrics/beta_*/ are);
    # 7 files of the first commit + 3 new in the second
    assert nbf.main(["main..beta", "--repo", str(path)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "benchmark folders: beta"
    assert printed[4:8] == ["| README.md | NO | +1 -0 |", "| metrics/betamax/betamax.py | NO | +1 -0 |",
                            "| setup.cfg | NO | +3 -0 |", "| tests/test_suite.py | NO | +1 -1 |"]
    assert printed[-1].startswith("4 of 10 changed files are outside the goal set")
    # the same two commits listed one by one give the same files; setup.cfg is outside because the second changed it
    rows, _ = nbf.table(str(path), [own, shared])
    assert {row["path"]: row["own"] for row in rows} == {row["path"]: row["own"] for row in nbf.table(str(path), ["main..beta"])[0]}
    assert sum(not row["own"] for row in rows) == 4


def test_a_line_in_another_group_is_not_the_registration_line(repo):
    path, _, _ = repo
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "main"], check=True)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "-b", "gamma"], check=True)
    dataset = REGISTERED.replace("beta", "gamma") + "lmbias.datasets =\n    gamma = lmbias.benchmarks.gamma.data:SPEC\n"
    both = commit(path, {"setup.cfg": dataset, "lmbias/benchmarks/gamma/__init__.py": "G = 1\n"}, "gamma and its dataset")
    only = commit(path, {"setup.cfg": REGISTERED.replace("beta", "gamma")}, "gamma's line alone")
    assert {row["path"]: row["own"] for row in nbf.table(str(path), [both])[0]} == {
        "setup.cfg": False, "lmbias/benchmarks/gamma/__init__.py": True}
    assert nbf.table(str(path), [only], {"gamma"})[0] == [{"path": "setup.cfg", "added": 0, "removed": 2, "own": False}]


def test_a_name_given_replaces_the_folders_found(repo):
    path, own, _ = repo
    rows, names = nbf.table(str(path), [own], {"alpha"})
    assert names == {"alpha"} and all(not row["own"] for row in rows)  # none of beta's files, nor its line, is alpha's


def test_a_bad_revision_is_one_line(repo):
    path, _, _ = repo
    with pytest.raises(SystemExit, match=r"^new_benchmark_files: git rev-parse nosuch\^\{commit\}: "):
        nbf.table(str(path), ["nosuch"])
