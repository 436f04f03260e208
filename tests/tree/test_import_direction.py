"""Imports flow one way: models <- edge <- labeler, policy (docs/architecture.md).

- ``models`` imports nothing from ``edge``, ``labeler`` or ``policy`` (its helpers for the upper layers load
  sentence-transformers inside functions only);
- ``edge`` imports only ``models`` among the project's packages, and never torch, llama_cpp,
  sentence-transformers, transformers or an environment package (a robot installs only ``edgejudge[edge]``);
- ``labeler`` does not import ``policy``.

Checked twice: statically over every import statement of every module (also the ones inside functions), and
by importing all of ``models`` and ``edge`` in a fresh interpreter and looking at ``sys.modules``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.serving import build_tiny_bundle

LAYERS = ("models", "edge", "labeler", "policy")


HEAVY = (
    "torch",
    "llama_cpp",
    "sentence_transformers",
    "transformers",
    "textworld_express",
    "scienceworld",
    "textworld",
    "ray",
)


"""Packages the robot side must never load: the training/labeling stacks and environment packages."""


FORBIDDEN = {
    "models": {"edge", "labeler", "policy"},  # heavy packages only lazily, for labeler/policy (runtime check)
    "edge": {"labeler", "policy", *HEAVY},
    "labeler": {"policy"},
    "policy": set(),
}


def imported_roots(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, top-level module) of every import in ``path``, relative imports resolved to ``package``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found.append((node.lineno, package))
            elif node.module:
                found.append((node.lineno, node.module.split(".")[0]))
        elif (  # importlib.import_module("literal")
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value.split(".")[0]))
    return found


def violations(layer: str) -> list[str]:
    bad = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for line, root in imported_roots(path, layer):
            if root in FORBIDDEN[layer]:
                bad.append(f"{path.relative_to(ROOT)}:{line}: imports {root}")
    return bad


def test_edge_never_imports_heavy_libraries(tmp_path):
    """A robot installs only edgejudge[edge]: loading and running everything in edge/ must not pull in torch,
    llama_cpp, sentence_transformers or transformers."""
    import subprocess
    import sys

    from tests.support.serving import ROOT

    bundle = build_tiny_bundle(tmp_path / "b")
    code = (
        "import sys\n"
        "import edge.serve, edge.server, edge.client, edge.query_cli, edge.edge_policy\n"
        "import edge.protocol_vectors\n"
        "from edge.runtime import load_runtime\n"
        f"rt = load_runtime({str(bundle)!r})\n"
        "rt.score(rt.items_from_text([('i', 'o', ['a', 'b'])]))\n"
        "heavy = ('torch', 'llama_cpp', 'sentence_transformers', 'transformers')\n"
        "bad = [m for m in heavy if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "", f"edge/ imported {p.stdout.strip()}"


@pytest.mark.parametrize("layer", LAYERS)
def test_static_imports_follow_the_layering(layer):
    assert (ROOT / layer).is_dir()
    assert violations(layer) == []


def test_the_static_check_sees_imports_inside_functions_and_relative_ones(tmp_path):
    """The checker itself: a lazy import inside a function, a relative import and import_module all count."""
    f = tmp_path / "m.py"
    f.write_text(
        "import os\n"
        "def lazy():\n"
        "    import torch\n"
        "    from policy.model import X\n"
        "    from . import sibling\n"
        "    import importlib; importlib.import_module('llama_cpp.llama')\n"
    )
    roots = [r for _, r in imported_roots(f, "edge")]
    assert roots == ["os", "torch", "policy", "edge", "importlib", "llama_cpp"]


@pytest.mark.real
def test_importing_all_of_edge_and_models_loads_no_heavy_or_upper_layer_package():
    code = (
        "import importlib, pkgutil, sys\n"
        "import edge, models\n"
        "names = []\n"
        "for pkg in (models, edge):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        if not m.name.endswith('__main__'):\n"
        "            importlib.import_module(m.name)\n"
        "            names.append(m.name)\n"
        f"bad = sorted({{n.split('.')[0] for n in sys.modules}} & {set(HEAVY) | {'labeler', 'policy'}!r})\n"
        "print(len(names), ','.join(bad))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    count, _, bad = p.stdout.strip().partition(" ")
    assert int(count) >= 10  # every module of both packages was imported
    assert bad == "", f"importing edge/ and models/ loaded {bad}"
