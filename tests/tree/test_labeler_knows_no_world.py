"""labeler/ (the judge, TRCA, COREN, the cluster, the data reader) contains no environment parsing: no string
its code uses names a world's layout, vocabulary or tasks, and it imports no environment adapter nor a
world's package (the import direction itself is checked in test_import_direction.py). A trajectory's state
layout, recorded by the adapter that collected it, says how its texts split into parts.

The rubrics and prompts shipped under labeler/rubrics and labeler/prompts (their .toml files) are data, not
code: a rubric for TextWorld's cooking games names its objects, so they are not read here. The Python
modules in those folders are code and are checked like every other module. Documentation is not code either:
docstrings, and the strings documenting an attribute right below it, are skipped; help texts and messages
are strings the code uses and are checked. ScienceWorld's task names count as whole words ("freeze" is a
task, "freezer" is not)."""

from __future__ import annotations

import ast
import re

from tests.support.paths import ROOT
from tests.tree.test_edge_knows_no_world import WORLD_MARKS

LABELER = ROOT / "labeler"

# The packages of the worlds the shipped adapters drive.
WORLD_PACKAGES = ("textworld", "textworld_express", "scienceworld", "alfworld", "jericho")


def _scienceworld_tasks() -> list[str]:
    """The ScienceWorld task names, read from the adapter's source (no import of the world's package)."""
    tree = ast.parse((ROOT / "policy" / "worlds" / "adapters" / "scienceworld.py").read_text())
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "TASKS"
        ):
            return [k.value for k in node.value.keys]
    raise AssertionError("policy/worlds/adapters/scienceworld.py has no TASKS table")


TASKS = _scienceworld_tasks()
# TextWorld's part labels as its state texts print them ("Inventory: ..."); the lower-case part names of a
# layout ("inventory", "history") are the format's own roles and may be named.
LABELS = re.compile(r"\b(Inventory|Recent actions|Feedback|Room)\b")
TASK_WORDS = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, TASKS)) + r")(?![\w-])")

# Strings that name a world today; each is a fix to make in labeler/, after which its entry goes. The list
# must equal what the check finds, so it cannot grow unnoticed and a fixed leak must be struck from it.
KNOWN_LEAKS: dict[str, list[str]] = {}


def _code_strings(tree: ast.AST) -> list[str]:
    """String constants of a module that are not documentation (docstrings, attribute docstrings)."""
    docs = {
        id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
    }
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def _marks(text: str) -> list[str]:
    low = text.lower()
    return [m for m in WORLD_MARKS if m in low] + TASK_WORDS.findall(low) + LABELS.findall(text)


def test_python_code_of_labeler_names_no_world():
    found = {}
    for path in sorted(LABELER.rglob("*.py")):
        marks = sorted({m for s in _code_strings(ast.parse(path.read_text())) for m in _marks(s)})
        if marks:
            found[str(path.relative_to(ROOT))] = marks
    assert found == KNOWN_LEAKS, f"world-specific strings in labeler/: {found}"


def test_labeler_imports_no_adapter_and_no_world_package():
    for path in LABELER.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                assert top not in ("policy", "tools", *WORLD_PACKAGES), (str(path.relative_to(ROOT)), module)


def test_the_marks_would_be_found():
    """The check is not vacuous: the adapters' own code has these strings."""
    for adapter in ("twx.py", "scienceworld.py"):
        tree = ast.parse((ROOT / "policy" / "worlds" / "adapters" / adapter).read_text())
        assert any(_marks(s) for s in _code_strings(tree)), adapter
    assert "find-living-thing" in TASKS
    assert _marks('line.startswith("Recent actions:")') and _marks('task = "boil"')
    assert _marks("Inventory") == ["Inventory"] and not _marks("the inventory part")
    assert _marks("the find-living-thing task") == ["find-living-thing"] and not _marks("the freezer")
