"""tools/ runs as modules from the repository root: every ``tools/**/*.py`` imports as ``tools.X.Y`` in a
fresh interpreter started there, and none of them patches ``sys.path``."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.conftest import ROOT

TOOLS = ROOT / "tools"
SCRIPTS_BY_PATH = {"drive_edge.py"}
"""Tools documented as ``python tools/NAME.py``: run by path, they put the repository root on ``sys.path``."""


def tool_modules() -> list[str]:
    """The dotted name of every module under tools/ (packages by their ``__init__``)."""
    names = []
    for path in sorted(TOOLS.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def patches_sys_path(path) -> bool:
    """Does the module touch ``sys.path`` anywhere (an attribute access ``sys.path``)?"""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return any(
        isinstance(n, ast.Attribute) and n.attr == "path" and getattr(n.value, "id", None) == "sys"
        for n in ast.walk(tree)
    )


def test_every_tool_folder_is_a_package():
    folders = {p.parent for p in TOOLS.rglob("*.py")}
    assert TOOLS / "bench" in folders and TOOLS / "probes" in folders
    assert [f.relative_to(ROOT) for f in sorted(folders) if not (f / "__init__.py").is_file()] == []


def test_no_tool_patches_sys_path():
    bad = [
        str(p.relative_to(ROOT))
        for p in sorted(TOOLS.rglob("*.py"))
        if p.name not in SCRIPTS_BY_PATH and patches_sys_path(p)
    ]
    assert bad == []


def test_tools_import_each_other_by_package_even_inside_functions():
    """``import benchlib`` / ``from matrix_plan import ...`` only worked with tools/ on sys.path."""
    stems = {p.stem for p in TOOLS.rglob("*.py")} - {"__init__"}
    bad = []
    for path in sorted(TOOLS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            bad += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names if n.split(".")[0] in stems]
    assert bad == []


def test_every_tool_module_imports_from_the_repository_root():
    names = tool_modules()
    assert "tools.bench.benchlib" in names and "tools.bench.bench_serve" in names
    code = (
        "import importlib, sys\n"
        "failed = []\n"
        f"for name in {names!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as e:\n"
        "        failed.append(f'{name}: {type(e).__name__}: {e}')\n"
        "print('\\n'.join(failed))\n"
        "sys.exit(1 if failed else 0)\n"
    )
    # `python -c` from the root puts the root first on sys.path, as `python -m tools.X.Y` does
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
