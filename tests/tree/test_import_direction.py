"""Imports flow one way: models <- edge <- labeler, policy (docs/architecture.md).

- ``models`` imports nothing from ``edge``, ``labeler`` or ``policy`` (its helpers for the upper layers load
  sentence-transformers inside functions only);
- ``edge`` imports only ``models`` among the project's packages, and never torch, llama_cpp,
  sentence-transformers, transformers or an environment package (a robot installs only ``edgejudge[edge]``);
- ``labeler`` imports neither ``edge`` nor ``policy``;
- ``policy/`` is built in floors, one room per job (:data:`ROOMS`): ``policy/worlds/adapters/`` (the world
  package) imports only the core, ``models`` and its own modules (:data:`WORLD_CORE`); the scorer imports only
  ``models``; training imports the scorer, the encoders and the adapters; export, the worlds' collection and
  evaluation stand above them;
- ``policy/matrix/`` (``edgejudge matrix``) is the top floor: no module outside it imports it;
- no shipped package imports ``tools`` or ``tests`` (they are not in the wheel).

Checked twice: statically over every import statement of every module (also the ones inside functions), and
by importing all of ``models`` and ``edge`` in a fresh interpreter and looking at ``sys.modules``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.imports import imports, module_name
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


UNSHIPPED = {"tools", "tests"}
"""The repository's own folders that the wheel does not hold."""


FORBIDDEN = {
    "models": {"edge", "labeler", "policy", *UNSHIPPED},  # heavy packages only lazily (runtime check)
    "edge": {"labeler", "policy", *HEAVY, *UNSHIPPED},
    "labeler": {"edge", "policy", *UNSHIPPED},
    "policy": UNSHIPPED,
}


PROJECT = (*LAYERS, "tools", "tests")
"""The project's own top-level packages."""


ROOMS: dict[str, tuple[str, ...]] = {
    "policy.worlds.adapters": (),
    "policy.encoders": ("edge",),
    "policy.scorer": (),
    "policy.training": ("policy.encoders", "policy.scorer", "policy.worlds.adapters"),
    "policy.export": ("edge", "policy.encoders", "policy.scorer", "policy.training"),
    "policy.worlds": ("edge", "labeler", "policy.worlds.adapters"),
    "policy.evaluation": (
        "edge",
        "labeler",
        "policy.encoders",
        "policy.scorer",
        "policy.training",
        "policy.worlds",
        "policy.worlds.adapters",
    ),
    "policy.matrix": ("edge", "labeler", "policy"),
    "policy.envs": ("policy.worlds.adapters",),
}
"""The floors of ``policy/``: each room (a folder) and what it may import among the project's packages besides
``models`` and itself. A room's own subfolders are itself (``policy.training`` holds ``learners``), except a
subfolder that is a room of its own (``policy.worlds.adapters``, the world package, which imports only
``models``). Nothing below the matrix imports it; ``policy.envs`` is the adapter API's former home."""


MATRIX = "policy/matrix"
"""The top floor: ``edgejudge matrix``, which nothing else imports."""


WORLD = "policy/worlds/adapters"
# A world makes states; collection (policy/worlds/collect.py) makes them trajectories.
WORLD_CORE = ("models", "policy.worlds.adapters")
"""What the world package may import among the project's packages: the core (``models``) and itself."""


def imported_roots(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, top-level module) of every import in ``path`` (the module ``module``; relative imports
    resolved against it)."""
    return [(i.line, i.module.split(".")[0]) for i in imports(path, module)]


def violations(layer: str) -> list[str]:
    bad = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for line, root in imported_roots(path, module_name(path)):
            if root in FORBIDDEN[layer]:
                bad.append(f"{path.relative_to(ROOT)}:{line}: imports {root}")
    return bad


def world_violations(paths: list[Path], root: Path = ROOT) -> list[str]:
    """What the modules ``paths`` of the world package import from a project package outside
    :data:`WORLD_CORE` (``from policy import collect`` is ``policy.collect``), also inside functions."""
    bad = []
    for path in paths:
        for imp in imports(path, module_name(path, root)):
            for name in [f"{imp.module}.{n}" for n in imp.names] or [imp.module]:
                core = any(name == c or name.startswith(c + ".") for c in WORLD_CORE)
                if name.split(".")[0] in PROJECT and not core:
                    bad.append(f"{path.relative_to(root)}:{imp.line}: imports {name}")
    return bad


def matrix_importers(root: Path = ROOT) -> list[str]:
    """Modules of the shipped packages outside ``policy/matrix/`` that import ``policy.matrix``."""
    bad = []
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            if path.is_relative_to(root / MATRIX):
                continue
            for imp in imports(path, module_name(path, root)):
                names = [f"{imp.module}.{n}" for n in imp.names] or [imp.module]
                if any(n == "policy.matrix" or n.startswith("policy.matrix.") for n in names):
                    bad.append(f"{path.relative_to(root)}:{imp.line}: imports {imp.module}")
    return bad


def room_of(module: str) -> str | None:
    """The room of :data:`ROOMS` a ``policy`` module lives in: the longest room name that prefixes it."""
    found = [r for r in ROOMS if module == r or module.startswith(r + ".")]
    return max(found, key=len) if found else None


def room_violations(root: Path = ROOT) -> list[str]:
    """Imports of a ``policy`` module that its room's floor does not allow (also inside functions)."""
    bad = []
    for path in sorted((root / "policy").rglob("*.py")):
        module = module_name(path, root)
        room = room_of(module)
        if room is None:
            continue  # policy/__init__.py: the map
        for imp in imports(path, module):
            for name in [f"{imp.module}.{n}" for n in imp.names] or [imp.module]:
                top = name.split(".")[0]
                if top not in LAYERS or top == "models":
                    continue  # tools and tests: the layer rule
                target = room_of(name) if top == "policy" else top
                allowed = ROOMS[room]
                if target in (None, room) or target in allowed or (top == "policy" and "policy" in allowed):
                    continue
                bad.append(f"{path.relative_to(root)}:{imp.line}: {room} imports {name}")
    return bad


def test_every_policy_module_lives_in_a_room():
    strays = [
        p.relative_to(ROOT).as_posix()
        for p in sorted((ROOT / "policy").rglob("*.py"))
        if room_of(module_name(p)) is None and p != ROOT / "policy" / "__init__.py"
    ]
    assert strays == [], f"modules of policy/ outside every room of ROOMS: {strays}"


def test_policy_rooms_import_only_their_floors():
    assert room_violations() == []


def test_the_room_rule_sees_an_import_up_a_floor(tmp_path):
    for room in ("scorer", "training", "worlds/adapters", "evaluation"):
        (tmp_path / "policy" / room).mkdir(parents=True)
    (tmp_path / "policy" / "scorer" / "model.py").write_text("from policy.training import fast_paths\n")
    (tmp_path / "policy" / "training" / "train.py").write_text(
        "from policy.scorer.model import Scorer\ndef f():\n    from policy.evaluation import evaluate\n"
    )
    (tmp_path / "policy" / "worlds" / "adapters" / "twx.py").write_text("import labeler.quality\n")
    (tmp_path / "policy" / "evaluation" / "evaluate.py").write_text("from policy.worlds import collect\n")
    assert room_violations(tmp_path) == [
        "policy/scorer/model.py:1: policy.scorer imports policy.training.fast_paths",
        "policy/training/train.py:3: policy.training imports policy.evaluation.evaluate",
        "policy/worlds/adapters/twx.py:1: policy.worlds.adapters imports labeler.quality",
    ]


def test_nothing_below_the_matrix_imports_it():
    assert (ROOT / MATRIX / "cli.py").is_file()
    assert matrix_importers() == []


def test_the_matrix_rule_sees_an_import_from_below(tmp_path):
    (tmp_path / "policy" / "matrix").mkdir(parents=True)
    (tmp_path / "policy" / "matrix" / "run.py").write_text("from policy import train\n")
    (tmp_path / "policy" / "train.py").write_text("def f():\n    from policy.matrix import run\n")
    (tmp_path / "labeler").mkdir()
    (tmp_path / "labeler" / "x.py").write_text("import policy.matrix.store\n")
    assert matrix_importers(tmp_path) == [
        "labeler/x.py:1: imports policy.matrix.store",
        "policy/train.py:2: imports policy.matrix",
    ]


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
        "from edge.runtime import TextRequest, load_runtime\n"
        f"rt = load_runtime({str(bundle)!r})\n"
        "rt.score(rt.items_from_text([TextRequest('i', 'o', ['a', 'b'])]))\n"
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
        "    from policy.scorer.model import X\n"
        "    from . import sibling\n"
        "    import importlib; importlib.import_module('llama_cpp.llama')\n"
    )
    roots = [r for _, r in imported_roots(f, "edge.m")]
    assert roots == ["os", "torch", "policy", "edge", "importlib", "llama_cpp"]


def test_the_world_package_imports_only_the_core():
    """``policy/worlds/adapters/`` imports ``models`` and itself among the project's packages, in functions
    too."""
    paths = sorted((ROOT / WORLD).rglob("*.py"))
    assert len(paths) >= 5
    assert world_violations(paths) == []


def test_the_world_rule_refuses_upward_imports_anywhere_in_a_module(tmp_path):
    world = tmp_path / "policy" / "worlds" / "adapters"
    world.mkdir(parents=True)
    f = world / "mine.py"
    f.write_text(
        "import json\n"
        "import textworld_express\n"
        "from models.state_layout import StateLayout\n"
        "from policy.worlds.adapters.base import EnvAdapter\n"
        "from . import base\n"
        "def lazy():\n"
        "    from edge.policies import Guarded\n"
        "    from labeler.quality import channel_quality\n"
        "    from policy import collect\n"
        "    from policy.worlds.collect import collect\n"
        "    from .. import train\n"
    )
    assert world_violations([f], root=tmp_path) == [
        "policy/worlds/adapters/mine.py:7: imports edge.policies.Guarded",
        "policy/worlds/adapters/mine.py:8: imports labeler.quality.channel_quality",
        "policy/worlds/adapters/mine.py:9: imports policy.collect",
        "policy/worlds/adapters/mine.py:10: imports policy.worlds.collect.collect",
        "policy/worlds/adapters/mine.py:11: imports policy.worlds.train",
    ]


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
