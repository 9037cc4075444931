"""bench/structure_counts.py, the counter of issue 48's structure counts, on tiny synthetic sources whose counts are
computed here by hand (each case says which lines count and why)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("structure_counts", ROOT / "bench" / "structure_counts.py")
sc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sc)

SETUP = """[metadata]
name = lmbias
[options.entry_points]
lmbias.benchmarks =
    alpha = lmbias.benchmarks.alpha:BENCHMARK
    beta = lmbias.benchmarks.alpha.more:BETA
    gamma = lmbias.benchmarks.gamma:BENCHMARK
lmbias.datasets =
    delta = lmbias.benchmarks.delta.data:SPEC
"""

RUNS = '''
from ..run_lock import holds_run_directory
from ..run_result import RunResult

@holds_run_directory
def run_alpha(options, model, *, out):          # 1: decorated
    return helper()

def run(options, model, *, out):                 # 2: builds a RunResult in its own body
    return RunResult(benchmark="alpha")

def adapter(options, model):                     # not a run: calls one
    return run_alpha(options, model, out=None)

def outer():                                     # not a run: the RunResult is its nested function's
    def inner():                                 # 3: outer.inner
        return RunResult()
    return inner

@holds_run_directory
def run_task(task, *, out):                      # the one run: left out
    return RunResult()

class Thing:
    @lock.holds_run_directory                    # 4: Thing.go, decorated through an attribute
    def go(self):
        return None
'''

OPTIONS = '''
class Option:
    def add_to(self, parser):
        parser.add_argument(self.flag)           # the declared options' translation: left out

def add_arguments(parser):
    parser.add_argument("--a")                   # 1
    group = parser.add_argument_group("x")       # not add_argument
    group.add_argument("--b", type=int)          # 2
    add_argument("--c")                          # a plain function, not a method: left out
'''

PROTOCOLS = '''
def f(protocol, body, names):
    if protocol == "likelihood":                 # 1
        pass
    if "generate" != protocol:                   # 2
        pass
    if protocol in ("likelihood", "generate"):   # 3
        pass
    if "embed" in names:                         # 4
        pass
    if protocol == "sum" or protocol == PROTO:   # neither is a protocol's name
        pass
    if a < b == "judge":                         # 5: one comparison, one node
        pass
    match protocol:
        case "continue":                         # 6
            pass
        case "other":
            pass
    x = "likelihood"                             # not a comparison
    return {"likelihood": 1, "generate": 2}[protocol]   # table 1


CONFIG = {"likelihood": {"a": 1}, "other": 2}    # table 2 (and the inner dict is not keyed by a protocol)
PLAIN = {"sum": 1, PROTO: 2}                     # not keyed by a protocol's name
BUILT = dict(generate=3, x=4)                    # table 3
SPLAT = {**CONFIG}                               # a ** entry has no key: not a table
TASK = Task(protocols={"likelihood": "help"},    # declared: counted apart
            prompts=dict(generate=P),            # declared
            other=f({"generate": 1}))            # a table: an argument of f, not of the declaration
'''

SCORING = '''
from ...lm.likelihood import option_logprobs
from ..lm import likelihood

def score_a(lm, rows):                           # 1
    return likelihood.option_logprobs(lm.model, lm.tokenizer, [], [])

def request(protocol):
    def score(lm, kind, part):                   # 2: request.score
        return option_logprobs(lm.model, lm.tokenizer, [], [])
    return score

def documented():
    """Calls option_logprobs in its docstring only."""
    return sentence_logprobs()
'''

DECLARATIONS = '''
from dataclasses import dataclass, field
from typing import ClassVar

@dataclass(frozen=True)
class Benchmark:
    """Doc."""
    name: str
    run: object
    records: object = None
    KIND: ClassVar[str] = "x"                    # not a field
    plain = 3                                    # not annotated: not a field

    def method(self) -> int:
        local: int = 1                           # a method's local, not a field
        return local

class Task:                                      # not a dataclass: not counted
    name: str

ONE = Benchmark(name="one", run=None, records=r, summary=s, report_section=t)        # passes all three
TWO = Benchmark(name="two", run=None, records=r, summary=s)                          # not report_section
'''

TASK = '''
import dataclasses

@dataclasses.dataclass
class Task:
    name: str
    options: tuple = ()
    check: object = None
'''

LOWER = '''"""A docstring naming 'alpha' is left out; so is the string alpha below, in a docstring."""
from ..benchmarks.alpha import data               # imports a benchmark's package
from ..benchmarks import base                     # the registry's shared module: not a benchmark

PRESETS = {"alpha": 1, "beta-ish": 2}              # the string 'alpha' names a benchmark

def f():
    """alpha"""
    return "gamma"
'''


def sources() -> dict[str, str]:
    return {
        "setup.cfg": SETUP,
        "lmbias/benchmarks/alpha/__init__.py": RUNS,
        "lmbias/benchmarks/alpha/options.py": OPTIONS,
        "lmbias/benchmarks/gamma/task.py": PROTOCOLS + SCORING,
        "lmbias/benchmarks/base.py": DECLARATIONS,
        "lmbias/benchmarks/declared.py": TASK,
        "lmbias/protocols/likelihood.py": SCORING + LOWER.replace('"""A docstring', '# A comment').replace(
            'the string alpha below, in a docstring."""', ""),
        "lmbias/lm/likelihood.py": SCORING + 'PRESET = "beta"\n',  # lm: the primitive's home, not counted as scoring
        "lmbias/lm/generation.py": 'PRESETS = {"counterfactual": 1, "gamma": 2}\n',
        "lmbias/cli.py": "from .benchmarks.gamma.data import x\nfrom .benchmarks import names\nNAME = 'alpha'\n",
        "lmbias/report/__init__.py": "import lmbias.benchmarks.beta\nimport lmbias.benchmarks\n",
        "lmbias/stats/__init__.py": LOWER,
        "lmbias/benchmarks/delta/__init__.py": "NAME = 'alpha'\n",
        "docs/x.py": "from lmbias.benchmarks.alpha import y\n",
    }


def _locations(found):
    return [item.split(" ")[0] for item in found]


def test_hand_written_runs_are_decorated_or_build_a_run_result_and_run_task_is_left_out():
    found = sc.hand_written_runs(sources())
    assert [item.split(" ", 1)[1] for item in found] == ["run_alpha", "run", "outer.inner", "Thing.go"]
    assert _locations(found)[0] == "lmbias/benchmarks/alpha/__init__.py:6"


def test_raw_add_argument_calls_leave_out_the_declared_options_translation():
    assert sc.raw_add_arguments(sources()) == ["lmbias/benchmarks/alpha/options.py:7",
                                               "lmbias/benchmarks/alpha/options.py:9"]


def test_protocol_comparisons_and_tables():
    comparisons = sc.protocol_comparisons(sources())
    assert len(comparisons) == 6
    assert [int(location.rpartition(":")[2]) for location in _locations(comparisons)] == [3, 5, 7, 9, 13, 16]
    assert comparisons[2].endswith("protocol in ('likelihood', 'generate')")
    assert comparisons[5].endswith("case 'continue'")
    tables = sc.protocol_tables(sources())
    assert [item.split(" ", 1)[1] for item in tables] == ["likelihood, generate", "likelihood", "generate", "generate"]
    assert _locations(tables)[3].endswith(":30")  # file lines 95-97 are the string's lines 28-30
    declared = sc.protocol_tables(sources(), declared=True)
    assert [item.split(":", 1)[1] for item in declared] == ["28 likelihood", "29 generate"]


def test_option_scorers_are_callers_of_option_logprobs_outside_lmbias_lm():
    found = sc.option_scorers(sources())
    assert [item.split(" ", 1)[1] for item in found] == ["score_a", "request.score", "score_a", "request.score"]
    assert sorted({location.rpartition(":")[0] for location in _locations(found)}) == [
        "lmbias/benchmarks/gamma/task.py", "lmbias/protocols/likelihood.py"]


def test_lines_fields_and_own_reporting():
    given = sources()
    newlines = sum(text.count("\n") for path, text in given.items() if path.startswith("lmbias/benchmarks/"))
    # RUNS, OPTIONS, PROTOCOLS, SCORING, DECLARATIONS, TASK (each its closing line less its opening line in this file), delta
    assert newlines == 27 + 10 + 30 + 15 + 22 + 8 + 1
    assert sc.benchmark_lines(given) == (newlines, 6)
    assert sc.declaration_fields(given) == {"lmbias/benchmarks/base.py:Benchmark": 3, "lmbias/benchmarks/declared.py:Task": 3}
    own, calls = sc.own_reporting(given)
    assert calls == 2 and [item.split(" ")[1] for item in own] == ["one"]
    assert [item.split(" ")[1] for item in sc.own_reporting(given, ("summary",))[0]] == ["one", "two"]
    assert [item.split(" ")[1] for item in sc.own_reporting(given, ("report_section",))[0]] == ["one"]


def test_modules_that_name_a_benchmark():
    given = sources()
    assert sc.registered(given) == {"alpha": "lmbias.benchmarks.alpha", "beta": "lmbias.benchmarks.alpha",
                                    "gamma": "lmbias.benchmarks.gamma"}
    assert sc.naming_modules(given) == [
        "lmbias.cli: lmbias.benchmarks.gamma.data",            # an upper layer: its imports only, not its 'alpha'
        "lmbias.lm.generation: 'gamma'",                       # 'counterfactual' is no benchmark here
        "lmbias.lm.likelihood: 'beta'",
        "lmbias.protocols.likelihood: lmbias.benchmarks.alpha, 'alpha', 'gamma'",  # not base, not comments
        "lmbias.stats: lmbias.benchmarks.alpha, 'alpha', 'gamma'",                 # not the docstrings' alpha
    ]  # report imports lmbias.benchmarks.beta, no package (beta lives in alpha's); files outside lmbias/ are not read
    row = [value for name, value, _ in sc.counts(given) if name.startswith("modules outside")]
    assert row == ["5 (4 below lmbias/benchmarks)"]  # all but lmbias.cli


def test_the_command_reads_a_commit_and_names_a_bad_one(tmp_path):
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    for path, text in sources().items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "synthetic"], check=True)
    (tmp_path / "lmbias/benchmarks/alpha/options.py").write_text("", encoding="utf-8")  # the working tree differs
    assert sc.read_sources("HEAD", tmp_path) == {path: text for path, text in sources().items() if path != "docs/x.py"}
    assert sc.raw_add_arguments(sc.read_sources(None, tmp_path)) == []
    bad = subprocess.run([sys.executable, str(ROOT / "bench" / "structure_counts.py"), "--rev", "no-such-rev"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1].startswith("structure_counts.py: error: --rev: ")


def test_the_table_of_this_checkout_has_every_row(capsys):
    assert sc.main(["--details"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and "---" not in line]
    assert [row.split(" | ")[0][2:] for row in rows[1:]] == [name for name, _, _ in sc.counts(sc.read_sources())]
    assert len(rows) == 1 + 13  # the header, then 13 counts
