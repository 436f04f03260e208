"""edge/ (the daemon, the clients, the C++ headers) contains no environment parsing: no string its code uses
names a world's layout or vocabulary, and it imports no environment adapter (the import direction itself is
checked in test_import_direction.py). State texts and world keys come from the client's adapter."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.paths import ROOT

EDGE = ROOT / "edge"


# Marks of code that reads a world's text: TextWorld's state layout and room sentences, ScienceWorld's.
WORLD_MARKS = (
    "inventory:",
    "room:",
    "feedback:",
    "recent actions",
    "that has",
    "that contains",
    "this room is called",
    "textworld",
    "scienceworld",
    "twx",
)


# Sample messages of the wire-format vectors and the benchmark tool: data sent, never parsed.
SAMPLES = ("protocol_vectors", "cpp/tests", "cpp/tools")


def _is_sample(path: Path) -> bool:
    rel = path.relative_to(EDGE).as_posix()
    return rel.startswith(SAMPLES)


def _code_strings(tree: ast.AST) -> list[str]:
    """String constants of a module that are not docstrings."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings
    ]


def _marks(text: str) -> list[str]:
    low = text.lower()
    return [m for m in WORLD_MARKS if m in low]


def test_python_code_of_edge_names_no_world():
    found = {}
    for path in sorted(EDGE.rglob("*.py")):
        if _is_sample(path):
            continue
        hits = [s for s in _code_strings(ast.parse(path.read_text())) if _marks(s)]
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert not found, f"world-specific strings in edge/: {found}"


def test_cpp_code_of_edge_names_no_world():
    literal = re.compile(r'"(?:[^"\\\n]|\\.)*"')
    found = {}
    for path in sorted((EDGE / "cpp").rglob("*")):
        if path.suffix not in (".hpp", ".cpp", ".h") or _is_sample(path):
            continue
        code = re.sub(r"//[^\n]*", "", path.read_text())  # comments may explain; code may not parse a world
        hits = [s for s in literal.findall(code) if _marks(s)]
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert not found, f"world-specific strings in edge/cpp: {found}"


def test_edge_imports_no_adapter_and_has_no_placement_search():
    for path in EDGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("policy", "labeler")), (path, node.module)
    assert not (EDGE / "placement_search.py").exists()
    assert not (EDGE / "cpp" / "include" / "edge" / "placement_search.hpp").exists()


def test_the_marks_would_be_found():
    """The check is not vacuous: the adapter's own code has these strings."""
    tree = ast.parse((ROOT / "policy" / "worlds" / "adapters" / "twx.py").read_text())
    assert any(_marks(s) for s in _code_strings(tree))
    assert _marks('line.rfind("Inventory:", 0)')
