"""The performance scripts live in bench/ (not benchmarks/, which read like lmbias/benchmarks/): every
bench/ path the docs, cards, scripts and tests name exists, and none names the old folder."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXTS = [ROOT / "README.md", ROOT / "Makefile", *ROOT.glob("docs/**/*.md"), *ROOT.glob("metrics/*/README.md"),
         *ROOT.glob("bench/*.py"), ROOT / "bench" / "RESULTS.md", *ROOT.glob("tests/*.py")]


def test_every_bench_path_named_exists():
    named = {match for path in TEXTS for match in re.findall(r"(?<![\w/.-])bench/[\w.]+\.(?:py|md)", path.read_text())}
    assert "bench/RESULTS.md" in named and "bench/cpu_threads.py" in named
    assert sorted(name for name in named if not (ROOT / name).is_file()) == []


def test_no_text_names_the_old_folder():
    old = re.compile(r"(?<![\w/.-])benchmarks/")  # lmbias/benchmarks/ is the registry's package, not the old folder
    stale = [f"{path.relative_to(ROOT)}:{number}" for path in TEXTS if path.name not in ("RESULTS.md", Path(__file__).name)
             for number, line in enumerate(path.read_text().splitlines(), 1) if old.search(line)]
    assert stale == []
