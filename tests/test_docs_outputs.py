"""The real output the docs show, reproduced: `lmbias datasets` (docs/datasets.md), the one-line
error when a data file cannot be had (docs/data.md) and BOLD's anonymisation examples
(docs/benchmarks/bold.md). The longer runs' outputs (a model generating or scoring) are reproduced
by the commands printed above them."""

import doctest
import re
from pathlib import Path

from lmbias.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs"


def block_after(page: str, command: str) -> list:
    """The lines of the fenced block in ``page`` that follow the line ``$ command``."""
    lines = (DOCS / page).read_text().splitlines()
    start = lines.index(f"$ {command}") + 1
    return lines[start:lines.index("```", start)]


def table_rows(lines) -> dict:
    """``(dataset, config) -> row`` of the `lmbias datasets` table."""
    rows = {}
    for line in lines:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 6 and cells[0] not in ("dataset", "---"):
            rows[cells[0], cells[1]] = cells
    return rows


def test_the_datasets_table_is_real(capsys):
    assert main(["datasets"]) == 0
    shown, real = table_rows(block_after("datasets.md", "lmbias datasets")), table_rows(capsys.readouterr().out.splitlines())
    assert sorted(shown) == sorted(real)
    # BBQ's five files the reference data folder does not hold show as "missing" there; elsewhere they may be at hand.
    differ = [key for key in real if shown[key] != real[key] and not (key[0] == "bbq" and "missing" in (shown[key][3], real[key][3]))]
    assert differ == []
    assert len(real) >= 38 and real["bold", "all"] == ["bold", "all", "train", "23,679", "43", "group"]


def test_the_missing_file_error_is_real(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("LMBIAS_DATA_DIR", raising=False)
    monkeypatch.setenv("LMBIAS_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["datasets"]) == 2
    real = capsys.readouterr().err.replace(str(tmp_path / "cache"), "~/.cache/lmbias").splitlines()
    assert block_after("data.md", "LMBIAS_OFFLINE=1 lmbias datasets") == real


def test_the_anonymisation_examples_run_as_shown():
    text = (DOCS / "benchmarks" / "bold.md").read_text()
    example = re.search(r"```python\n(>>> from lmbias.text import anonymize\n.*?)```", text, re.S).group(1)
    test = doctest.DocTestParser().get_doctest(example, {}, "bold.md", "bold.md", 0)
    assert len(test.examples) == 3
    result = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE).run(test)
    assert (result.failed, result.attempted) == (0, 3)


def own_options(benchmark: str) -> list:
    """The long names of ``lmbias run BENCHMARK``'s own options (the help's first group), --out aside."""
    from lmbias.cli import _subparser, build_parser

    parser = _subparser(build_parser(), "run", benchmark)
    group = next(group for group in parser._action_groups if group.title == "options")
    return sorted(max(action.option_strings, key=len) for action in group._group_actions
                  if action.option_strings and max(action.option_strings, key=len) not in ("--help", "--out"))


def test_each_benchmark_page_lists_its_own_options():
    pages = sorted((DOCS / "benchmarks").glob("*.md"))
    assert len(pages) >= 9
    for page in pages:
        section = page.read_text().split("## Options", 1)[1].split("\n## ", 1)[0]
        listed = sorted(re.findall(r"^\| `(--[\w-]+)", section, re.M))
        assert listed == own_options(page.stem), page.name
