"""The structure a benchmark keeps, read from the source (ast): under ``lmbias/benchmarks`` no protocol's name is
spelled (no comparison with one, no table keyed by one: a benchmark declares one ``Ask`` per protocol and asks the
``Protocol`` object what it needs to know) and no run is defined besides ``run_task``; the modules below the
registry (protocols, lm, scorers, stats) and the generic ones above it (the CLI, the evaluate adapter) name no
registered benchmark. Each check is also shown to find what it looks for in planted source."""

import ast
import re
from pathlib import Path

from lmbias.benchmarks import names
from lmbias.protocols import PROTOCOLS

PACKAGE = Path(__file__).resolve().parents[1] / "lmbias"
BENCHMARKS = PACKAGE / "benchmarks"
THE_RUN = "declared.py"  # run_task, the one run

def _parents(tree: ast.AST) -> dict:
    return {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def protocol_spellings(source: str, protocols=PROTOCOLS) -> list:
    """Each place ``source`` spells a protocol's name, as ``"line N: how"``: compared (``==``, ``in``), a table's key
    (a dict display, ``dict(name=...)``), a table's lookup (``X["name"]``), or otherwise written out."""
    tree = ast.parse(source)
    parents = _parents(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "dict":
            found += [(kw.lineno, kw.col_offset, f"a table keyed by {kw.arg!r}") for kw in node.keywords if kw.arg in protocols]
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in protocols):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, (ast.Tuple, ast.List, ast.Set)):  # protocol in ("likelihood", ...)
            parent = parents.get(id(parent))
        if isinstance(parent, ast.Compare):
            how = "compared with"
        elif isinstance(parent, ast.Dict) and any(key is node for key in parent.keys):
            how = "a table keyed by"
        elif isinstance(parent, ast.Subscript) and parent.slice is node:
            how = "a table looked up by"
        else:
            how = "written out:"
        found.append((node.lineno, node.col_offset, f"{how} {node.value!r}"))
    return [f"line {line}: {how}" for line, _, how in sorted(found)]


def run_definitions(source: str) -> list:
    """Each run ``source`` defines, as ``"line N: name"``: a function under ``@holds_run_directory`` (the run folder's
    lock), or a module-level function called ``run`` or ``run_*``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                "holds_run_directory" in ast.unparse(decorator) for decorator in node.decorator_list):
            found.append(f"line {node.lineno}: {node.name}")
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and re.fullmatch(r"run(_\w+)?", node.name):
            found.append(f"line {node.lineno}: {node.name}")
    return sorted(set(found))


def benchmark_names(source: str, benchmarks) -> list:
    """Each place ``source`` names one of ``benchmarks``, as ``"line N: how"``: an import of its package
    (``lmbias.benchmarks.<name>``, relative or not), or a string equal to its name or naming its package."""
    found = []
    pattern = re.compile(r"benchmarks\.(" + "|".join(map(re.escape, benchmarks)) + r")\b")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            modules = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in benchmarks or pattern.search(node.value):
                found.append((node.lineno, f"the string {node.value!r}"))
            continue
        else:
            continue
        for module in modules:
            parts = module.split(".")
            if "benchmarks" in parts and parts.index("benchmarks") + 1 < len(parts) and \
                    parts[parts.index("benchmarks") + 1] in benchmarks:
                found.append((node.lineno, f"imports {module}"))
                break
    return [f"line {line}: {how}" for line, how in sorted(found)]


def _benchmark_files() -> dict:
    return {path.relative_to(BENCHMARKS).as_posix(): path.read_text(encoding="utf-8") for path in sorted(BENCHMARKS.rglob("*.py"))}


def _generic_files() -> dict:
    """The modules that must not name a benchmark, relative to lmbias."""
    paths = [*PACKAGE.joinpath("protocols").rglob("*.py"), *PACKAGE.joinpath("lm").rglob("*.py"),
             *PACKAGE.joinpath("scorers").rglob("*.py"), *(p for s in PACKAGE.glob("stats*")
                                                             for p in ([s] if s.is_file() else s.rglob("*.py"))),
             PACKAGE / "cli.py", PACKAGE / "evaluate_adapter.py"]
    return {path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8") for path in sorted(paths)}


def test_the_checks_find_what_is_planted():
    planted = ('if protocol == "likelihood":\n    pass\n'
               'x = protocol in ("generate",)\n'
               'TABLE = {"likelihood": 1, "generate": 2}[protocol]\n'
               'SETTINGS = dict(generate={})\n'
               'y = IDENTITY["generate"]\n'
               'z = config.get("protocol", "likelihood")\n')
    assert protocol_spellings(planted, ("likelihood", "generate")) == [
        "line 1: compared with 'likelihood'", "line 3: compared with 'generate'", "line 4: a table keyed by 'likelihood'",
        "line 4: a table keyed by 'generate'", "line 5: a table keyed by 'generate'", "line 6: a table looked up by 'generate'",
        "line 7: written out: 'likelihood'"]
    clean = ('"""With protocol="generate" the replies are read."""\n'
             'def measure(settings):\n    return get_protocol(settings["protocol"]).reads_replies\n'
             'MESSAGE = "--decision applies to --protocol likelihood"\n')
    assert protocol_spellings(clean, ("likelihood", "generate")) == []

    runs = ("@holds_run_directory\ndef go(out):\n    pass\n"
            "def run(options, model):\n    pass\n"
            "def run_mine(options):\n    pass\n"
            "def runner():\n    pass\n"
            "class Toy:\n    def run(self):\n        pass\n")
    assert run_definitions(runs) == ["line 2: go", "line 4: run", "line 6: run_mine"]

    naming = ("from ..benchmarks.bold.data import SPEC\n"
              "from lmbias.benchmarks import bbq, get_benchmark\n"
              "import lmbias.benchmarks.stereoset.task\n"
              "from ..benchmarks import get_benchmark\n"
              'PRESETS = {"counterfactual": 1, "greedy": 2}\n'
              'module = "lmbias.benchmarks.seat.task"\n')
    assert benchmark_names(naming, ("bold", "bbq", "stereoset", "counterfactual", "seat")) == [
        "line 1: imports benchmarks.bold.data", "line 2: imports lmbias.benchmarks.bbq",
        "line 3: imports lmbias.benchmarks.stereoset.task", "line 5: the string 'counterfactual'",
        "line 6: the string 'lmbias.benchmarks.seat.task'"]


def test_no_benchmark_spells_a_protocol_name():
    """No comparison with a protocol's name and no table keyed by one under lmbias/benchmarks (every registered
    protocol's name, so a protocol added later is covered)."""
    assert PROTOCOLS and {"likelihood", "generate"} <= set(PROTOCOLS)
    found = {name: spelled for name, source in _benchmark_files().items() if (spelled := protocol_spellings(source))}
    assert found == {}


def test_no_benchmark_defines_a_run_of_its_own():
    """run_task is the one run; the hand-written runs still waiting for their protocol are listed, and a listed file
    that no longer defines one must leave the list (so that it only shrinks)."""
    files = _benchmark_files()
    assert [found.split(": ")[1] for found in run_definitions(files[THE_RUN])] == ["run_task"]
    found = {name: runs for name, source in files.items() if name != THE_RUN and (runs := run_definitions(source))}
    assert found == {}, f"runs outside run_task: {found}"


def test_nothing_below_the_registry_names_a_benchmark():
    """protocols, lm, scorers, stats, the CLI and the evaluate adapter import no benchmark's package and spell no
    registered benchmark's name; the modules still to change are listed, and one that no longer names a benchmark
    must leave the list."""
    registered = tuple(names())
    assert {"bold", "stereoset", "crows_pairs", "esbbq"} <= set(registered)
    generic = _generic_files()
    assert {"cli.py", "evaluate_adapter.py", "protocols/likelihood.py", "lm/generation.py"} <= set(generic)
    found = {name: named for name, source in generic.items() if (named := benchmark_names(source, registered))}
    assert found == {}, f"modules naming a benchmark: {found}"
