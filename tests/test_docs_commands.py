"""Every command the README and the docs show in a ```bash block runs as shown.

Each command is taken from the page as written (continuation lines joined, comments dropped, `M=gpt2`
substituted, a `for` loop unrolled) and checked in one of two ways:

* **parsed**: every ``lmbias ...`` line (also after ``accelerate launch -m`` / ``torchrun -m``) goes through the
  real command-line parser (:func:`lmbias.cli.parse_command`, what ``lmbias`` itself runs first): its
  benchmarks, sets, options and their values are accepted. A ``make`` line names a target of the Makefile.
  Lines of other programs (vLLM's server, ``hf``, ``cp``, ``.``) are not lmbias's and only listed.
* **run**: the cheap ones (:data:`RUN`) run for real, from the command line, in a temporary folder on the
  embedded model with the reference data, with a small limit added where the page shows none; what the page
  says they write is checked to be there.

The others are not run here, each for the reason :func:`why_not_run` gives (a Hub model or a served endpoint,
several processes, the Hub, training, or a whole benchmark on the embedded model: minutes to hours on 2 CPU
cores); their runs are tested elsewhere on tiny models.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lmbias.benchmarks import unregister
from lmbias.benchmarks.custom import _DECLARED
from lmbias.cli import parse_command

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "docs" / "benchmarks").glob("*.md"))]
EXAMPLE = REPO / "docs" / "examples" / "hiring_bias"
# The programs whose lines are shown for reference and are not lmbias's to check.
OTHER_PROGRAMS = {".", "cp", "hf", "python", "vllm"}


def bash_blocks(page: Path) -> list:
    """``[(line number, text)]`` of the page's ```bash blocks."""
    blocks, start, lines = [], None, []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if start is None and line.strip() == "```bash":
            start, lines = number, []
        elif start is not None and line.strip() == "```":
            blocks.append((start, "\n".join(lines)))
            start = None
        elif start is not None:
            lines.append(line)
    assert start is None, f"{page}: the ```bash block at line {start} is not closed"
    return blocks


def _tokens(line: str) -> list:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split, lexer.commenters = True, "#"
    return list(lexer)


def commands(block: str) -> list:
    """The commands of a bash block, each a list of words: continuation lines joined, comments dropped,
    ``&&`` / ``;`` separating commands, variables set by ``NAME=value`` lines substituted, and a
    ``for VAR in A B; do ...; done`` loop unrolled."""
    logical, pending = [], ""
    for line in block.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
        else:
            logical.append(pending + line)
            pending = ""
    words = [word for line in logical for word in [*_tokens(line), ";"]]
    found, current, variables, loop = [], [], {}, None
    for word in words:
        if word in (";", "&&", "||"):
            if current:
                found.append(current)
            current = []
        else:
            current.append(word)
    result: list = []
    for command in found:
        if command[0] == "for":  # for VAR in A B C ; do FIRST...
            loop = {"var": command[1], "values": command[3:], "body": []}
            continue
        if loop is not None:
            if command == ["done"]:
                for value in loop["values"]:
                    result.extend([[word.replace(f"${loop['var']}", value) for word in body] for body in loop["body"]])
                loop = None
            elif command[1:] or command[0] != "do":
                loop["body"].append(command[1:] if command[0] == "do" else command)
            continue
        if len(command) == 1 and re.fullmatch(r"[A-Za-z_]\w*=\S*", command[0]):
            name, value = command[0].split("=", 1)
            variables[name] = value
            continue
        for name, value in variables.items():
            command = [word.replace(f"${name}", value) for word in command]
        result.append(command)
    return result


def lmbias_argv(command: list) -> list | None:
    """The arguments after ``lmbias`` (also ``python -m lmbias``, ``accelerate launch ... -m lmbias``,
    ``torchrun ... -m lmbias``), environment assignments in front left out; None for another program."""
    while command and re.fullmatch(r"[A-Za-z_]\w*=\S*", command[0]):
        command = command[1:]
    if command[0] == "lmbias":
        return command[1:]
    for i in range(len(command) - 1):
        if command[i] == "-m" and command[i + 1] == "lmbias":
            return command[i + 2:]
    return None


def shown_commands() -> list:
    """``[(where, words)]`` for every command of every ```bash block of the README and docs pages."""
    shown = []
    for page in PAGES:
        for line, block in bash_blocks(page):
            for command in commands(block):
                shown.append((f"{page.relative_to(REPO)}:{line}", command))
    return shown


SHOWN = shown_commands()


def _id(item) -> str:
    return f"{item[0]} {' '.join(item[1])[:70]}"


@pytest.fixture
def example_folder(tmp_path, monkeypatch):
    """A folder laid out as a user's: ``./hiring.yaml`` (the worked example, copied) and ``docs/`` (this
    clone's), the current directory for the block; the declared benchmark unregistered afterwards."""
    for path in EXAMPLE.iterdir():
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "docs").symlink_to(REPO / "docs")
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    unregister("hiring_bias")
    _DECLARED.pop("hiring_bias", None)


def test_the_pages_show_commands_and_the_extraction_reads_them_as_a_shell_would():
    assert len(SHOWN) > 100
    # a continuation line, a comment, a variable, an environment assignment and a loop, read as bash reads them
    block = ("M=gpt2   # a model\nlmbias run a --model $M \\\n    --name 'A B'   # comment\n"
             "for m in x y; do\n    lmbias run b --model models/$m && lmbias perplexity --out runs/$m\ndone\n"
             "OPENAI_API_KEY=K lmbias run c")
    assert commands(block) == [["lmbias", "run", "a", "--model", "gpt2", "--name", "A B"],
                               ["lmbias", "run", "b", "--model", "models/x"], ["lmbias", "perplexity", "--out", "runs/x"],
                               ["lmbias", "run", "b", "--model", "models/y"], ["lmbias", "perplexity", "--out", "runs/y"],
                               ["OPENAI_API_KEY=K", "lmbias", "run", "c"]]
    assert lmbias_argv(["OPENAI_API_KEY=K", "lmbias", "run", "c"]) == ["run", "c"]
    assert lmbias_argv(["torchrun", "--nproc_per_node", "4", "-m", "lmbias", "run", "x"]) == ["run", "x"]


@pytest.mark.parametrize("where, command", SHOWN, ids=[_id(item) for item in SHOWN])
def test_every_command_shown_is_accepted(where, command, example_folder, capsys):
    argv = lmbias_argv(command)
    while re.fullmatch(r"[A-Za-z_]\w*=\S*", command[0]):  # VAR=value in front: the environment
        command = command[1:]
    if argv is None:
        if command[0] == "make":
            targets = re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(encoding="utf-8"), flags=re.M)
            assert command[1] in targets, f"{where}: `make {command[1]}` is not a target of the Makefile"
            return
        assert command[0] in OTHER_PROGRAMS or command[:2] == ["accelerate", "launch"], \
            f"{where}: `{' '.join(command)}`: a program this test does not know; add it to OTHER_PROGRAMS or check it"
        return
    try:
        parse_command(argv)
    except SystemExit as stop:
        assert stop.code == 0, f"{where}: `{shlex.join(command)}` is refused: {capsys.readouterr().err.strip()}"


# ---------------------------------------------------------------- the commands run for real

# The commands run here, as "page: the command as shown" -> the options added to keep them small (none: run as shown).
RUN = {
    "docs/custom-benchmarks.md: lmbias run docs/examples/hiring_bias/hiring.yaml --bootstrap 1000 --out runs/hiring_bias": [],
    "docs/custom-benchmarks.md: lmbias report runs/hiring_bias": [],
}


def why_not_run(command: list) -> str:
    """Why a command shown is only parsed here, not run (the first reason that applies)."""
    text = " ".join(command)
    if lmbias_argv(command) is None:
        return "not an lmbias command"
    if re.search(r"(--model|--tokenizer) (M|NAME|DIR|gpt2|bert|roberta|meta-llama|models/)", text) or "--base-url" in text:
        return "a Hub model, a folder of a command before it, or a served endpoint (not reachable offline)"
    if re.search(r"torchrun|accelerate|--num-processes|--backend vllm|cuda", text):
        return "several processes, vLLM or a GPU"
    if re.search(r"\bpush\b|--hub-dataset|--repo-id", text):
        return "the Hub"
    if re.search(r"\bdebias\b|\bperplexity\b", text):
        return "trains or scores a model for minutes (tests/test_debias*.py run each method on a tiny model)"
    if re.search(r"RUN_DIR|SITE_DIR|runs/|\bDIR\b", text):
        return "reads the folders of runs made before it"
    return "a whole benchmark or the embedded model's full run: minutes to hours on 2 CPU cores"


def test_each_command_shown_is_run_or_says_why_not():
    ran = {f"{where.split(':')[0]}: {' '.join(command)}" for where, command in SHOWN}
    assert set(RUN) <= ran, f"commands listed in RUN but no longer shown: {sorted(set(RUN) - ran)}"
    for where, command in SHOWN:
        if f"{where.split(':')[0]}: {' '.join(command)}" not in RUN:
            assert why_not_run(command)


def _lmbias(argv: list, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lmbias", *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def test_the_custom_benchmark_example_runs_and_reports_as_its_page_says(tmp_path, embedded_model_cache):
    """docs/custom-benchmarks.md's worked example, the two commands as shown, from a folder holding ``docs/``:
    the run writes runs/hiring_bias/results.json (what its first line says) and ``report`` writes the report
    where the page says."""
    (tmp_path / "docs").symlink_to(REPO / "docs")
    env = embedded_model_cache.env({**os.environ, "PYTHONPATH": str(REPO)})
    page = (REPO / "docs" / "custom-benchmarks.md").read_text(encoding="utf-8")
    for key, added in RUN.items():
        argv = lmbias_argv(shlex.split(key.split(": ", 1)[1])) + added
        done = _lmbias(argv, tmp_path, env)
        assert done.returncode == 0, f"`lmbias {shlex.join(argv)}` failed: {done.stderr[-2000:]}"
        if argv[0] == "run":
            assert "results in runs/hiring_bias/results.json" in done.stdout
            assert "results in runs/hiring_bias/results.json" in page
            assert (tmp_path / "runs" / "hiring_bias" / "results.json").is_file()
        else:
            assert (tmp_path / "reports" / "hiring_bias" / "report.html").is_file()
            assert "reports/hiring_bias/report.html" in page


def test_the_readme_opens_with_what_a_user_does_first():
    """The README's first lines say what lmbias is in a few lines, then its first section starts with the
    commands a user runs; where the tests find their data is a developer's note, in docs/setup.md."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    opening = readme.split("\n## ", 1)[0].split("\n", 1)[1].strip()
    assert len(opening.splitlines()) <= 5, opening
    first_section = readme.split("\n## ", 2)[1]
    assert first_section.split("\n", 1)[1].lstrip().startswith("```bash\nmake run "), first_section[:300]
    assert "CPU time" in first_section and "wall time" in first_section
    developers = "The tests read the\nreference data from `LMBIAS_DATA_DIR`"
    assert developers not in readme and developers in (REPO / "docs" / "setup.md").read_text(encoding="utf-8")
