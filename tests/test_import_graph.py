"""The import graph of python/incast (every `from . import x` / `from .x import
y`, at module level or inside a function: a lazy import is still a dependency;
not the imports under `if TYPE_CHECKING:`, which name types for annotations
and never run) has no cycle. Run this file to print the graph:

    python tests/test_import_graph.py
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "incast"


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module name -> the package's modules it imports (the compiled `_core`
    and the package itself, `__init__`, left out: they import nothing back)."""
    modules = {path.stem for path in package.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for module in sorted(modules):
        tree = ast.parse((package / f"{module}.py").read_text(encoding="utf-8"))
        imported: set[str] = set()
        type_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in type_only:
                continue
            if not isinstance(node, ast.ImportFrom) or node.level != 1:
                continue
            if node.module:
                imported.add(node.module.split(".")[0])
            else:  # from . import x, y
                imported.update(alias.name for alias in node.names)
        graph[module] = {m for m in imported & modules if m not in ("__init__", module)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_a_cycle_is_found():
    """The check itself: a two-module and a three-module circle are reported."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert sorted(cycles(graph)) == [["a", "b"], ["c", "d", "e"]]


if __name__ == "__main__":
    graph = import_graph()
    for module, imported in sorted(graph.items()):
        print(f"{module}: {', '.join(sorted(imported)) or '-'}")
    print("cycles:", cycles(graph) or "none")
