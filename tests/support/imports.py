"""The import statements of a module, read statically (for the tree checks of import direction and cycles).

Every ``import``, ``from ... import`` (relative ones resolved) and ``importlib.import_module("literal")``
anywhere in the file counts, also inside functions and under ``if TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT


@dataclass(frozen=True)
class Import:
    line: int
    module: str
    """The module named: ``a.b`` of ``import a.b`` and of ``from a.b import c``."""
    names: tuple[str, ...] = ()
    """What ``from module import ...`` takes from it (a name or a submodule)."""


def module_name(path: Path, root: Path = ROOT) -> str:
    """``labeler/trca/checks.py`` -> ``labeler.trca.checks``; a package's ``__init__.py`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, module: str) -> list[Import]:
    """Every import of the file ``path``, whose dotted name is ``module``, in source order."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            named = ".".join([*base, *([node.module] if node.module else [])])
            found.append(Import(node.lineno, named, tuple(a.name for a in node.names)))
        elif (  # importlib.import_module("literal")
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append(Import(node.lineno, node.args[0].value))
    return sorted(found, key=lambda i: i.line)


def imported_modules(imp: Import, known: set[str]) -> list[str]:
    """The modules of ``known`` that ``imp`` loads by name: ``from a import b`` is ``a.b`` where that is a
    module, else ``a``; a name outside ``known`` is its longest known prefix (none for another package)."""
    targets = [f"{imp.module}.{n}" if f"{imp.module}.{n}" in known else imp.module for n in imp.names]
    out = []
    for name in targets or [imp.module]:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name not in out:
            out.append(name)
    return out
