"""The structure counts of issue 48, read from the source with ``ast``: how far lmbias is from one declaration
per benchmark, protocols as objects and one run.

    python bench/structure_counts.py                 # the working tree
    python bench/structure_counts.py --rev e9a2d01   # another commit (git ls-tree / git cat-file), nothing checked out
    python bench/structure_counts.py --details       # and each counted thing, file:line

It prints one table row per count. What each counts (``lmbias/benchmarks`` means every ``.py`` file under it):

- **hand-written runs**: functions in lmbias/benchmarks decorated with ``holds_run_directory`` or whose own body
  (not a function nested in it) calls ``RunResult(...)``, except ``run_task``, the one run of every benchmark.
  Command-line adapters that only call such a function (``run(options, model)``) are not runs.
- **raw add_argument calls**: calls of a method named ``add_argument`` in lmbias/benchmarks (options not declared as
  ``Option``s: a second option system), except in the class ``Option`` itself (declared options becoming arguments).
- **protocol-name comparisons**: in lmbias/benchmarks, each comparison (``==``, ``!=``, ``in``, ``not in``, ``is``)
  with a protocol's name as an operand (``protocol == "generate"``, ``"likelihood" in protocols``) or inside a
  tuple, list or set literal operand (``protocol in ("likelihood", "generate")``), and each ``match`` case on one.
  The protocols' names: likelihood, generate, continue, embed, judge.
- **protocol-keyed tables**: in lmbias/benchmarks, each dict literal with a protocol's name as a key
  (``{"likelihood": ..., "generate": ...}[protocol]``, ``IDENTITY = {"likelihood": ...}``) and each ``dict(...)``
  call with one as a keyword, except those given as a keyword argument of a declaration's call (``Benchmark(...)``,
  or ``Task(...)`` in a revision before the two merged), which are counted apart: **declaration arguments keyed by
  protocol** (``Task(protocols={"likelihood": help, ...}, prompts={...})``: the protocols a benchmark supports, and
  their prompts).
- **implementations of option scoring**: functions anywhere in lmbias outside ``lmbias/lm`` (where the primitive
  lives) whose own body calls ``option_logprobs``, the log-probabilities of options after a prompt: today
  ``score_options``, ``score_bbq``, coreference's ``score_referents`` and DiscrimEval's scorer.
- **lines of lmbias/benchmarks**: lines of its ``.py`` files (and how many files).
- **fields of the declarations**: the annotated fields of the dataclass ``Benchmark`` in lmbias/benchmarks, the one
  declaration of a benchmark, and of ``Task`` in a revision before the two merged (``ClassVar``s left out).
- **declarations passing their own records / summary / report_section**: ``Benchmark(...)`` calls in
  lmbias/benchmarks that pass all three as keywords (how many of all ``Benchmark(...)`` calls).
- **modules outside lmbias/benchmarks that name a benchmark**: modules of lmbias that import a benchmark's package
  (``lmbias.benchmarks.<package>``, absolute or relative), and modules of the layers below lmbias/benchmarks
  (``LOWER``) holding a string equal to a benchmark's name (docstrings left out). The benchmarks and their
  packages are the ``lmbias.benchmarks`` entry points of setup.cfg.

The counts are the source's, not the running program's: a plugin's benchmarks are not counted.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = "lmbias/benchmarks/"
PROTOCOLS = ("likelihood", "generate", "continue", "embed", "judge")
# the layers below lmbias/benchmarks (tests/test_import_graph.py's LAYERS): none of them may name a benchmark
LOWER = ("lmbias/protocols", "lmbias/lm", "lmbias/scorers", "lmbias/stats", "lmbias/embeddings", "lmbias/model_source",
         "lmbias/render", "lmbias/run_result", "lmbias/progress", "lmbias/run_lock", "lmbias/data", "lmbias/resources",
         "lmbias/plugins", "lmbias/text", "lmbias/files", "lmbias/checks", "lmbias/errors", "lmbias/version",
         "lmbias/words", "lmbias/credentials")
DECLARATIONS = ("Benchmark", "Task")  # Task: a revision before the one declaration
OWN = ("records", "summary", "report_section")


def read_sources(rev: str | None = None, root: Path = ROOT) -> dict[str, str]:
    """``lmbias/**/*.py`` and ``setup.cfg`` (path relative to the repository -> text): of the working tree under
    ``root``, or of commit ``rev`` read with git (nothing checked out)."""
    if rev is None:
        paths = [p for p in (root / "lmbias").rglob("*.py") if "__pycache__" not in p.parts] + [root / "setup.cfg"]
        return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in paths if p.is_file()}
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "lmbias", "setup.cfg"], cwd=root, check=True,
                            capture_output=True, text=True).stdout.split("\n")
    names = [name for name in listed if name.endswith(".py") or name == "setup.cfg"]
    batch = subprocess.run(["git", "cat-file", "--batch"], cwd=root, check=True, capture_output=True,
                           input="".join(f"{rev}:{name}\n" for name in names).encode()).stdout
    sources, at = {}, 0
    for name in names:
        header_end = batch.index(b"\n", at)
        size = int(batch[at:header_end].split()[2])
        sources[name] = batch[header_end + 1 : header_end + 1 + size].decode("utf-8")
        at = header_end + 1 + size + 1
    return sources


def _trees(sources: dict[str, str], where) -> dict[str, ast.Module]:
    return {path: ast.parse(text, path) for path, text in sorted(sources.items()) if path.endswith(".py") and where(path)}


def _by_place(found: list[str]) -> list[str]:
    """``path:line ...`` items in file and line order (``ast.walk`` goes breadth first)."""
    return sorted(found, key=lambda item: (item.partition(":")[0], int(item.partition(":")[2].split(" ")[0])))


def _in_benchmarks(path: str) -> bool:
    return path.startswith(BENCHMARKS)


def _functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function in ``tree``, nested ones as ``outer.inner``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from _functions(node, prefix + node.name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, prefix + node.name + ".")
        else:
            yield from _functions(node, prefix)


def _own_nodes(function: ast.AST):
    """The nodes of ``function``'s body, not of functions or classes defined inside it."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _name(node: ast.AST) -> str | None:
    """The last name of ``x``, ``a.x`` or a call of either (a decorator, a called function)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _calls(function: ast.AST, name: str) -> bool:
    return any(isinstance(node, ast.Call) and _name(node) == name for node in _own_nodes(function))


def hand_written_runs(sources: dict[str, str]) -> list[str]:
    """``path:line function`` of each hand-written run in lmbias/benchmarks (see the module's docstring)."""
    found = []
    for path, tree in _trees(sources, _in_benchmarks).items():
        for qualified, node in _functions(tree):
            decorated = any(_name(d) == "holds_run_directory" for d in node.decorator_list)
            if node.name != "run_task" and (decorated or _calls(node, "RunResult")):
                found.append(f"{path}:{node.lineno} {qualified}")
    return found


def raw_add_arguments(sources: dict[str, str]) -> list[str]:
    """``path:line`` of each ``add_argument`` call in lmbias/benchmarks outside the class ``Option`` (whose methods
    turn declared options into the parser's arguments)."""
    found = []
    for path, tree in _trees(sources, _in_benchmarks).items():
        declared = {id(node) for option in ast.walk(tree) if isinstance(option, ast.ClassDef) and option.name == "Option"
                    for node in ast.walk(option)}
        found += [f"{path}:{node.lineno}" for node in ast.walk(tree) if isinstance(node, ast.Call) and id(node) not in declared
                  and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"]
    return _by_place(found)


def _protocol_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in PROTOCOLS


def _names_a_protocol(operand: ast.AST) -> bool:
    if isinstance(operand, (ast.Tuple, ast.List, ast.Set)):
        return any(_protocol_name(element) for element in operand.elts)
    return _protocol_name(operand)


def protocol_comparisons(sources: dict[str, str]) -> list[str]:
    """``path:line code`` of each comparison with a protocol's name in lmbias/benchmarks."""
    found = []
    for path, tree in _trees(sources, _in_benchmarks).items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(_names_a_protocol(o) for o in (node.left, *node.comparators)):
                found.append(f"{path}:{node.lineno} {ast.unparse(node)}")
            elif isinstance(node, ast.match_case) and any(
                    isinstance(p, ast.MatchValue) and _protocol_name(p.value) for p in ast.walk(node.pattern)):
                found.append(f"{path}:{node.pattern.lineno} case {ast.unparse(node.pattern)}")
    return _by_place(found)


def protocol_tables(sources: dict[str, str], declared: bool = False) -> list[str]:
    """``path:line keys`` of each dict literal or ``dict(...)`` call keyed by a protocol's name in lmbias/benchmarks,
    other than a keyword argument of a declaration (``Benchmark(protocols={...})``); ``declared``: those instead."""
    found = []
    for path, tree in _trees(sources, _in_benchmarks).items():
        arguments = {id(keyword.value) for call in ast.walk(tree) if isinstance(call, ast.Call)
                     and _name(call) in DECLARATIONS for keyword in call.keywords}
        for node in ast.walk(tree):
            if (id(node) in arguments) != declared:
                continue
            if isinstance(node, ast.Dict):
                keys = [key.value for key in node.keys if key is not None and _protocol_name(key)]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
                keys = [keyword.arg for keyword in node.keywords if keyword.arg in PROTOCOLS]
            else:
                continue
            if keys:
                found.append(f"{path}:{node.lineno} {', '.join(keys)}")
    return _by_place(found)


def option_scorers(sources: dict[str, str]) -> list[str]:
    """``path:line function`` of each function outside lmbias/lm whose own body calls ``option_logprobs``."""
    return [f"{path}:{node.lineno} {qualified}"
            for path, tree in _trees(sources, lambda p: p.startswith("lmbias/") and not p.startswith("lmbias/lm/")).items()
            for qualified, node in _functions(tree) if _calls(node, "option_logprobs")]


def benchmark_lines(sources: dict[str, str]) -> tuple[int, int]:
    """(lines, files) of lmbias/benchmarks' ``.py`` files."""
    texts = [text for path, text in sources.items() if _in_benchmarks(path) and path.endswith(".py")]
    return sum(len(text.splitlines()) for text in texts), len(texts)


def declaration_fields(sources: dict[str, str]) -> dict[str, int]:
    """Each dataclass named in DECLARATIONS in lmbias/benchmarks (``path:Name``) -> its annotated fields."""
    found = {}
    for path, tree in _trees(sources, _in_benchmarks).items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in DECLARATIONS and any(
                    _name(d) == "dataclass" for d in node.decorator_list):
                fields = [item for item in node.body if isinstance(item, ast.AnnAssign)
                          and isinstance(item.target, ast.Name) and "ClassVar" not in ast.unparse(item.annotation)]
                found[f"{path}:{node.name}"] = len(fields)
    return found


def own_reporting(sources: dict[str, str]) -> tuple[list[str], int]:
    """(``path:line name`` of each ``Benchmark(...)`` call in lmbias/benchmarks passing all of OWN as keywords,
    how many ``Benchmark(...)`` calls there are)."""
    calls = [(path, node) for path, tree in _trees(sources, _in_benchmarks).items() for node in ast.walk(tree)
             if isinstance(node, ast.Call) and _name(node) == "Benchmark"]
    own = []
    for path, node in calls:
        keywords = {keyword.arg: keyword.value for keyword in node.keywords}
        if all(name in keywords for name in OWN):
            name = keywords.get("name")
            own.append(f"{path}:{node.lineno} {name.value if isinstance(name, ast.Constant) else ast.unparse(name or node)}")
    return own, len(calls)


def registered(sources: dict[str, str]) -> dict[str, str]:
    """Benchmark name -> its package (``lmbias.benchmarks.<package>``), from setup.cfg's entry points."""
    config = configparser.ConfigParser()
    config.read_string(sources.get("setup.cfg", ""))
    lines = config.get("options.entry_points", "lmbias.benchmarks", fallback="")
    entries = [line.split("=", 1) for line in lines.splitlines() if "=" in line]
    return {name.strip(): ".".join(target.split(":")[0].strip().split(".")[:3]) for name, target in entries}


def _module(path: str) -> str:
    parts = path[: -len(".py")].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: str, tree: ast.AST, modules: set[str]) -> set[str]:
    """What ``tree`` (the file ``path``) imports, as tests/test_import_graph.py reads it: relative imports resolved,
    ``from a import b`` the module ``a.b`` where there is one (in ``modules``), else ``a``."""
    package = _module(path) if path.endswith("__init__.py") else _module(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names)
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]
    return {id(n.body[0].value) for n in nodes if n.body and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant) and isinstance(n.body[0].value.value, str)}


def naming_modules(sources: dict[str, str]) -> list[str]:
    """``module: what`` for each module outside lmbias/benchmarks that names a benchmark (see the module's
    docstring)."""
    benchmarks = registered(sources)
    packages = set(benchmarks.values())
    modules = {_module(path) for path in sources if path.endswith(".py")}
    found = []
    for path, tree in _trees(sources, lambda p: p.startswith("lmbias/") and not _in_benchmarks(p)).items():
        what = sorted({module for module in _imported(path, tree, modules)
                       if any(module == p or module.startswith(p + ".") for p in packages)})
        if any(path == prefix + ".py" or path.startswith(prefix + "/") for prefix in LOWER):
            skipped = _docstrings(tree)
            what += sorted({repr(node.value) for node in ast.walk(tree) if isinstance(node, ast.Constant)
                            and node.value in benchmarks and id(node) not in skipped})
        if what:
            found.append(f"{_module(path)}: {', '.join(what)}")
    return found


def counts(sources: dict[str, str]) -> list[tuple[str, str, list[str]]]:
    """(count, value, details) rows of every count, in the order the table prints them."""
    lines, files = benchmark_lines(sources)
    fields = declaration_fields(sources)
    own, declared = own_reporting(sources)
    rows = [("hand-written runs (besides run_task)", hand_written_runs(sources)),
            ("raw add_argument calls in lmbias/benchmarks", raw_add_arguments(sources)),
            ("protocol-name comparisons in lmbias/benchmarks", protocol_comparisons(sources)),
            ("protocol-keyed tables in lmbias/benchmarks", protocol_tables(sources)),
            ("declaration arguments keyed by protocol (protocols=..., prompts=...)", protocol_tables(sources, True)),
            ("implementations of option scoring (callers of option_logprobs)", option_scorers(sources))]
    table = [(name, str(len(found)), found) for name, found in rows]
    table.append(("lines of lmbias/benchmarks/**/*.py", f"{lines:,} in {files} files", []))
    table.append(("fields of the declarations", " + ".join(f"{key.rpartition(':')[2]} {value}" for key, value in fields.items())
                  + f" = {sum(fields.values())}", [f"{key}: {value}" for key, value in fields.items()]))
    table.append(("Benchmark(...) passing its own records, summary and report_section", f"{len(own)} of {declared}", own))
    naming = naming_modules(sources)
    lower = [item for item in naming if any(item.startswith(prefix.replace("/", ".") + (":", ".")[dot])
                                            for prefix in LOWER for dot in (0, 1))]
    table.append(("modules outside lmbias/benchmarks that name a benchmark",
                  f"{len(naming)} ({len(lower)} below lmbias/benchmarks)", naming))
    return table


def main(argv=None) -> int:
    """Print the table (``--details``: and each counted thing) for the working tree or ``--rev``."""
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="a commit, branch or tag to read instead of the working tree")
    parser.add_argument("--details", action="store_true", help="list each counted thing under the table")
    args = parser.parse_args(argv)
    try:
        sources = read_sources(args.rev)
    except subprocess.CalledProcessError as error:
        parser.error(f"--rev: git cannot read {args.rev!r}: {error.stderr.strip() if error.stderr else error}")
    table = counts(sources)
    print(f"structure counts of {args.rev or 'the working tree'}\n\n| count | value |\n|---|---|")
    for name, value, _ in table:
        print(f"| {name} | {value} |")
    if args.details:
        for name, _, found in table:
            if found:
                print(f"\n{name}:\n" + "\n".join(f"  {item}" for item in found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
