"""The package maps stay true: each package's ``__init__.py`` lists its modules and subpackages, one bullet
each (``* ``name`` — ...`` or ``* :mod:`pkg.name` — ...``), and docs/architecture.md names every
subpackage. Every listed name exists, and every module is listed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support.paths import ROOT

LAYERS = ("models", "edge", "labeler", "policy")


BULLET = re.compile(r"^\s*[*-]\s+(?:``(\w+)``|:mod:`~?[\w.]*?\.?(\w+)`)")


STALE: dict[str, str] = {}


"""Packages whose map is known to be stale (xfail), with why: none."""


def _is_code_package(folder: Path) -> bool:
    """A package holding Python modules of its own (or in its subpackages); data packages hold only
    ``__init__.py`` files."""
    return any(p.name not in ("__init__.py", "__main__.py") for p in folder.rglob("*.py"))


def packages() -> list[Path]:
    found = []
    for layer in LAYERS:
        for init in sorted((ROOT / layer).rglob("__init__.py")):
            if _is_code_package(init.parent):
                found.append(init.parent)
    return found


def members(package: Path) -> set[str]:
    """Its modules and code subpackages."""
    modules = {p.stem for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    subpackages = {d.name for d in package.iterdir() if (d / "__init__.py").is_file() and _is_code_package(d)}
    return modules | subpackages


def mapped(package: Path) -> list[str]:
    """The names the package docstring's bullets list, in order."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    return [m.group(1) or m.group(2) for line in doc.splitlines() if (m := BULLET.match(line))]


def _params():
    out = []
    for package in packages():
        rel = package.relative_to(ROOT).as_posix()
        marks = [pytest.mark.xfail(reason=STALE[rel], strict=False)] if rel in STALE else []
        out.append(pytest.param(package, id=rel, marks=marks))
    return out


def test_every_code_package_is_found():
    rels = {p.relative_to(ROOT).as_posix() for p in packages()}
    assert {
        "models",
        "edge",
        "labeler",
        "policy",
        "labeler/judge",
        "policy/worlds/adapters",
        "policy/training",
    } <= rels


@pytest.mark.parametrize("package", _params())
def test_package_map_names_every_module_and_nothing_else(package):
    names = mapped(package)
    assert len(names) == len(set(names)), f"listed twice: {sorted(n for n in names if names.count(n) > 1)}"
    missing = sorted(members(package) - set(names))
    gone = sorted(n for n in names if not ((package / f"{n}.py").is_file() or (package / n).is_dir()))
    assert missing == [], f"{package.relative_to(ROOT)}/__init__.py does not list {missing}"
    assert gone == [], f"{package.relative_to(ROOT)}/__init__.py lists {gone}, which do not exist"


def test_architecture_names_every_subpackage_and_only_real_paths():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:models|edge|labeler|policy|tools|tests|docs|examples)/[\w./-]*)`", text))
    gone = sorted(p for p in paths if not (ROOT / p).exists())
    assert gone == [], f"docs/architecture.md names paths that do not exist: {gone}"
    for package in packages():
        rel = package.relative_to(ROOT).as_posix()
        if "/" in rel:
            assert f"`{rel}/`" in text, f"docs/architecture.md does not name {rel}/"


def test_the_map_reader_understands_both_bullet_styles(tmp_path):
    (tmp_path / "__init__.py").write_text(
        '"""Doc.\n\n* ``alpha`` — one\n- ``beta``: two\n* :mod:`~pkg.sub.gamma` — three\n'
        "* :mod:`pkg.delta`  — four\n* a bullet not starting with ``zeta`` is prose\n"
        'Prose ``epsilon`` is not listed.\n"""\n'
    )
    assert mapped(tmp_path) == ["alpha", "beta", "gamma", "delta"]
