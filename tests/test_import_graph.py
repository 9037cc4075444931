"""The import graph of the lmbias package: every import statement, at module level and inside
functions (not those under ``if TYPE_CHECKING:``), as an edge between lmbias's modules."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lmbias"

# The layers, top to bottom (README, Architecture): a module imports only from its own layer or below.
LAYERS = (
    # lmbias: the public API
    ("lmbias.cli", "lmbias.__main__", "lmbias.evaluate_adapter", "lmbias.modules", "lmbias.docs_options", "lmbias"),
    ("lmbias.report", "lmbias.hub", "lmbias.leaderboard", "lmbias.debias", "lmbias.results", "lmbias.scorecard", "lmbias.compare"),
    ("lmbias.suite",),
    ("lmbias.benchmarks",),
    ("lmbias.protocols",),
    ("lmbias.lm", "lmbias.scorers", "lmbias.stats", "lmbias.embeddings", "lmbias.model_source", "lmbias.render",
     "lmbias.run_result", "lmbias.progress", "lmbias.run_lock"),
    ("lmbias.data", "lmbias.resources", "lmbias.plugins", "lmbias.text", "lmbias.files", "lmbias.checks", "lmbias.errors",
     "lmbias.version", "lmbias.words", "lmbias.credentials"),
)


def layer(module: str) -> int | None:
    """The index in :data:`LAYERS` of the longest prefix that names ``module``."""
    matches = [(len(prefix), index) for index, prefixes in enumerate(LAYERS) for prefix in prefixes
               if module == prefix or module.startswith(prefix + ".")]
    return max(matches)[1] if matches else None


def module_files() -> dict:
    """Module name -> file, for every module of the package."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _type_checking_only(tree: ast.AST) -> set:
    return {id(node) for block in ast.walk(tree) if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for node in ast.walk(block)}


def imports(name: str, path: Path, modules: dict) -> set:
    """The lmbias modules that ``name`` (its source in ``path``) imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # "from pkg import sub" imports the submodule; "from pkg import name" the package itself
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def cycles(graph: dict) -> list:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_planted_cycle_and_the_type_checking_exemption_holds():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    modules = module_files()
    assert "lmbias.lm.loading" not in imports("lmbias.lm.generation", modules["lmbias.lm.generation"], modules)
    assert "lmbias.lm.generation" in imports("lmbias.lm.loading", modules["lmbias.lm.loading"], modules)  # inside a function


def test_no_import_cycle():
    modules = module_files()
    graph = {name: imports(name, path, modules) for name, path in modules.items()}
    assert cycles(graph) == []


def test_every_module_has_a_layer_and_imports_nothing_above_it():
    modules = module_files()
    assert [name for name in modules if layer(name) is None] == []
    upward = [f"{name} -> {target}" for name, path in modules.items() for target in imports(name, path, modules)
              if layer(target) < layer(name)]
    assert upward == []
    assert layer("lmbias.benchmarks.bold.task") == 3 and layer("lmbias.lm.runner") == 5 and layer("lmbias.words") == 6  # the longest prefix


def test_a_planted_upward_import_is_found(tmp_path, monkeypatch):
    planted = tmp_path / "lmbias"
    (planted / "lm").mkdir(parents=True)
    (planted / "__init__.py").write_text("")
    (planted / "lm" / "__init__.py").write_text("")
    (planted / "lm" / "runner.py").write_text("def f():\n    from ..report import build_report\n")
    (planted / "report").mkdir()
    (planted / "report" / "__init__.py").write_text("")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", planted)
    modules = module_files()
    assert imports("lmbias.lm.runner", modules["lmbias.lm.runner"], modules) == {"lmbias.report"}
