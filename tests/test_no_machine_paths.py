"""No tracked file names an absolute path of some machine (a data folder, a home, a scratch folder):
what the repository says and runs must hold on any machine (issue 37). The scanner is tested too."""

import fnmatch
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# An absolute path under a machine's own roots (Linux, macOS homes, scratch) or a Windows drive. Not a URL's
# path (https://host/home/...), a relative one (data/tmp/...), nor one under ~ or $HOME.
MACHINE_PATH = re.compile(r"(?<![\w.~$}\-])/(?:work|home|root|Users|tmp)/[^\s\"'`),;]*|(?<![\w])[A-Z]:\\{1,2}[A-Za-z][^\s\"'`]*")

# (files, path prefix, why it may stay). Short on purpose: each is a record of a run, never a path the code reads.
ALLOWED = [
    ("bench/*", "/tmp/", "scratch folders in the recorded commands and usage lines of the benchmark scripts: any "
                         "writable folder works and nothing reads them back"),
    ("bench/RESULTS.md", "/root/", "the model folder of the machine a recorded result was measured on"),
    ("tests/fixtures/schema_v1/*", "/root/", "results.json files written by lmbias 1.x, kept byte for byte as the "
                                             "schema migration's input"),
    ("tests/test_no_machine_paths.py", "", "this scanner's own allow list and planted examples"),
]


def machine_paths(files: dict[str, str], allowed=ALLOWED) -> tuple[list[str], set[int]]:
    """``"file:line: path"`` for each machine path in ``files`` (name -> text) that no entry of ``allowed``
    covers, and the indices of the entries that covered one."""
    found, used = [], set()
    for name, text in files.items():
        for number, line in enumerate(text.splitlines(), start=1):
            for match in MACHINE_PATH.finditer(line):
                covering = [i for i, (pattern, prefix, _) in enumerate(allowed)
                            if fnmatch.fnmatch(name, pattern) and match.group().startswith(prefix)]
                used.update(covering)
                if not covering:
                    found.append(f"{name}:{number}: {match.group()}")
    return found, used


def tracked_files() -> dict[str, str]:
    """Every tracked text file of the checkout (``git ls-files``), name -> text; binary files left out."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: no tracked files to scan")
    files = {}
    for name in filter(None, listed.decode().split("\0")):
        path = REPO / name
        if path.is_file() and b"\0" not in (content := path.read_bytes()):
            files[name] = content.decode("utf-8", errors="replace")
    return files


def test_no_tracked_file_names_a_path_of_some_machine():
    files = tracked_files()
    assert "tests/conftest.py" in files and len(files) > 100
    found, used = machine_paths(files)
    assert found == [], "absolute paths of a machine (use a relative path, ~, or an environment variable):\n" + "\n".join(found)
    # every allowance still covers something; one that covers nothing is removed
    assert sorted(used) == list(range(len(ALLOWED)))


def test_the_scanner_finds_each_kind_of_planted_path_and_nothing_else():
    root = "/" + "work"  # built here, so that this file holds no such path itself
    planted = {
        "Makefile": f"TEST_DATA_DIR ?= $(firstword $(wildcard ../shared/data {root}/shared/data))\n",
        "lmbias/x.py": f'HOME = "/{"home"}/ann/data"\nCACHE = Path("/{"root"}/.cache/lmbias")\n',
        "docs/mac.md": f"copy it to /{'Users'}/ann/lmbias and\nrun `lmbias run bold --out /{'tmp'}/b`\n",
        "docs/windows.md": "the folder " + "C:" + "\\Users\\ann\\data is read\n",
        "bench/RESULTS.md": f"--out /{'tmp'}/ss-gpu and model /{'root'}/.cache/m\nbut not {root}/data\n",
    }
    found, used = machine_paths(planted)
    assert found == [
        f"Makefile:1: {root}/shared/data",
        f"lmbias/x.py:1: /{'home'}/ann/data",
        f"lmbias/x.py:2: /{'root'}/.cache/lmbias",
        f"docs/mac.md:1: /{'Users'}/ann/lmbias",
        f"docs/mac.md:2: /{'tmp'}/b",
        "docs/windows.md:1: " + "C:" + "\\Users\\ann\\data",
        f"bench/RESULTS.md:2: {root}/data",  # bench/ may name scratch folders and the model folder, nothing else
    ]
    assert used == {0, 1}  # bench/'s two entries
    PLANTED = "/" + "tmp/x"  # built here, so that this file names no machine's path itself
    clean = {
        "a.md": "https://example.org/home/x and http://127.0.0.1:8000/tmp/y (URLs' paths)\n",
        "b.md": "data/tmp/x, ../shared/data, ~/.cache/lmbias, $HOME/.cache, ${XDG_CACHE_HOME}/lmbias, file://" + PLANTED + "\n",
        "c.py": 'url = "https://raw.githubusercontent.com/a/b/c"  # a/work/b is relative\n',
        "d.py": 'ANSWER = re.compile(r"(?i:\\banswer)")  # a regular expression, not a drive\n',
    }
    assert machine_paths(clean)[0] == [f"b.md:1: {PLANTED}"]  # a file:// URL names a machine's path too
