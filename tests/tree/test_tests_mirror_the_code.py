"""tests/ mirrors the code: the tests of ``labeler/trca/checks.py`` are ``tests/labeler/trca/test_checks.py``.

Every ``tests/**/test_<name>.py`` names what it tests by its path: a module ``<folder>/<name>.py``, a
package or folder ``<folder>/<name>/`` (``tests/edge/test_cpp.py``: edge/cpp), or a script
``<folder>/<name>.sh`` (``tests/tools/setup/test_gpu_check.py``). Only the cross-cutting folders hold tests
named otherwise: tests/e2e (real pipelines and command-line flows across packages) and tests/tree (checks of
the whole tree). Helpers shared by several test modules live in tests/support (no tests) or a folder's
conftest.py. Every test folder is a package, so same-named test modules in different folders do not clash.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import ROOT

TESTS = ROOT / "tests"
CROSS_CUTTING = ("e2e", "tree")
HELPERS = ("support",)
SCRIPT_SUFFIXES = (".sh",)


def mirrored(test_file: Path) -> Path | None:
    """The product path a test module stands for, or None when nothing in the tree has its name."""
    rel = test_file.relative_to(TESTS)
    name = rel.name.removeprefix("test_").removesuffix(".py")
    folder = ROOT.joinpath(*rel.parts[:-1])
    for candidate in (
        folder / f"{name}.py",
        folder / name,
        *(folder / f"{name}{s}" for s in SCRIPT_SUFFIXES),
    ):
        if candidate.exists() and candidate.name != "__init__.py":
            return candidate
    return None


def _test_files() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def test_every_test_module_mirrors_a_product_path_or_is_cross_cutting():
    strays = []
    for path in _test_files():
        rel = path.relative_to(TESTS)
        if rel.parts[0] in CROSS_CUTTING and len(rel.parts) == 2:
            continue
        if rel.parts[0] in HELPERS or mirrored(path) is None:
            strays.append(rel.as_posix())
    assert not strays, (
        f"test modules that mirror no product module: {strays}; name each tests/<folder>/test_<module>.py "
        f"after <folder>/<module>.py, or put end-to-end flows in tests/e2e and tree checks in tests/tree"
    )


def test_every_test_folder_is_a_package():
    folders = {p.parent for p in TESTS.rglob("*.py")} | {TESTS}
    missing = sorted(f.relative_to(ROOT).as_posix() for f in folders if not (f / "__init__.py").is_file())
    assert not missing, f"test folders without __init__.py (same-named modules would clash): {missing}"


def test_the_mirror_rule_sees_modules_folders_scripts_and_strays():
    """The check is not vacuous: it finds what a test file mirrors and refuses a name that mirrors nothing."""
    assert mirrored(TESTS / "labeler" / "trca" / "test_checks.py") == ROOT / "labeler" / "trca" / "checks.py"
    assert mirrored(TESTS / "edge" / "test_cpp.py") == ROOT / "edge" / "cpp"
    assert (
        mirrored(TESTS / "tools" / "setup" / "test_gpu_check.py") == ROOT / "tools" / "setup" / "gpu_check.sh"
    )
    assert mirrored(TESTS / "labeler" / "test_trca_units.py") is None
    assert mirrored(TESTS / "test_dataset.py") is None  # a flat test module mirrors nothing
    assert mirrored(TESTS / "labeler" / "test___init__.py") is None
