"""The README is the front door and docs/ holds the rest: every relative link in README.md and
docs/ (file and #anchor) resolves, every benchmark in the registry has its page, and the README
stays under 300 lines."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """``text`` without fenced code blocks and inline code, where brackets are not links."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path: Path) -> set:
    """The anchors GitHub gives the headings of ``path`` (lower case, punctuation dropped, spaces as
    hyphens, a repeated heading numbered -1, -2 ...)."""
    seen, found = {}, set()
    for line in re.sub(r"^```.*?^```[^\n]*$", "", path.read_text(), flags=re.S | re.M).splitlines():
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(path: Path):
    """(target file, anchor or None, as written) for each relative link of ``path``."""
    for target in LINK.findall(prose(path.read_text())):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        yield (path.parent / file).resolve() if file else path, anchor or None, target


def test_the_slug_rule_on_known_headings(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Chat models and chat-only APIs: `--chat`, `--backend openai-chat`\n## `.eval_results` files\n"
                    "## Real output\n## Real output\n```\n# not a heading\n```\n")
    assert anchors(page) == {"chat-models-and-chat-only-apis---chat---backend-openai-chat", "eval_results-files",
                             "real-output", "real-output-1"}


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[a](missing.md) [b](#nowhere) `[c](in-code.md)` [d](https://example.org)\n# Here\n")
    assert [(target.name, anchor) for target, anchor, _ in links(page)] == [("missing.md", None), ("page.md", "nowhere")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target, anchor, written in links(page):
        if not target.exists():
            broken.append(f"{written}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in anchors(target):
            broken.append(f"{written}: no heading with that anchor")
    assert broken == []


def test_readme_is_the_front_door():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 300
    linked = {target.relative_to(ROOT).as_posix() for target, _, _ in links(ROOT / "README.md")}
    for page in ("docs/architecture.md", "docs/reliability.md", "docs/results-schema.md", "docs/data.md",
                 "docs/backends.md", "docs/debiasing.md"):
        assert page in linked


def test_every_benchmark_has_its_page_linked_from_the_readme():
    linked = {target.relative_to(ROOT).as_posix() for target, _, _ in links(ROOT / "README.md")}
    names = sorted(folder.name for folder in (ROOT / "lmbias" / "benchmarks").iterdir()
                   if (folder / "__init__.py").is_file() and (folder / "task.py").is_file())
    assert len(names) >= 9
    assert [name for name in names if f"docs/benchmarks/{name}.md" not in linked] == []


def test_the_readme_gives_the_vllm_cpu_server_command_the_tests_start():
    # tests/vllm_server.py starts every served test's server with this command, as written (in the vLLM environment)
    import vllm_server

    assert vllm_server.readme_cpu_command() == ["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "MODEL",
                                                "--port", "8000"]
    assert "`" + " ".join(vllm_server.readme_cpu_command()) + "`" in (ROOT / "docs" / "backends.md").read_text()
