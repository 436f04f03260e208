"""The project's modules have no import cycle (docs/architecture.md): no module reaches itself again through
what it imports, counting every import statement of every module, also the ones inside functions (a lazy
import hides a cycle from the interpreter, not from the reader).

The graph has one edge per module a statement names: ``from a import b`` is ``a.b`` where that is a module,
else ``a``; a package is a module of its own (its ``__init__.py``), not implied by importing one of its
modules.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.imports import imported_modules, imports, module_name
from tests.support.paths import ROOT

PACKAGES = ("models", "edge", "labeler", "policy", "tools", "tests")


def modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    return {module_name(p, root): p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))}


def import_graph(found: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of ``found`` it imports."""
    known = set(found)
    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        graph[name] = {m for imp in imports(path, name) for m in imported_modules(imp, known)} - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # recursion depth is bounded by the chain of imports, a few dozen
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_the_project_has_no_import_cycle():
    found = modules()
    assert len(found) > 150 and "policy.worlds.adapters.contract" in found
    assert cycles(import_graph(found)) == []


def test_the_cycle_check_sees_lazy_relative_and_from_imports(tmp_path):
    pkg = tmp_path / "models"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from models import b\n")  # a -> b (a module taken from its package)
    (pkg / "b.py").write_text("def f():\n    from .sub.c import X\n")  # b -> sub.c, inside a function
    (pkg / "sub" / "c.py").write_text("import models.a\n")  # sub.c -> a: the cycle a -> b -> sub.c -> a
    (pkg / "d.py").write_text("from models.a import thing\nimport os\n")  # d -> a, outside the cycle
    graph = import_graph(modules(tmp_path, ("models",)))
    assert graph["models.d"] == {"models.a"}
    assert cycles(graph) == [["models.a", "models.b", "models.sub.c"]]
