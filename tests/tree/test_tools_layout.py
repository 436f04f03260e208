"""tools/ runs as modules from the repository root: every ``tools/**/*.py`` imports as ``tools.X.Y`` in a
fresh interpreter started there, and none of them patches ``sys.path``."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys

from tests.support.paths import ROOT

TOOLS = ROOT / "tools"


SCRIPTS_BY_PATH: set[str] = set()


"""Tools documented as ``python tools/NAME.py`` (run by path, they put the repository root on ``sys.path``):
none, every tool runs as a module."""


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


BENCHMARKS = ROOT / "BENCHMARKS.md"


SHELL_FILES = sorted((TOOLS / "bench").glob("*.sh"))


SECTION = re.compile(r'^# BENCHMARKS\.md, "([^"]+)"', re.M)


def sections() -> dict[str, list[str]]:
    """BENCHMARKS.md's sections (the title's text before the first '## ', then every '## ' heading, which
    includes its '### ' subsections) -> the sections' lines, code fences taken into account."""
    out: dict[str, list[str]] = {}
    title, fence = None, False
    for line in BENCHMARKS.read_text(encoding="utf-8").split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"^#{1,2} ", line):
            title = line.lstrip("# ")
            out[title] = []
        if title is not None:
            out[title].append(line)
    return out


def bash_blocks(lines: list[str]) -> list[str]:
    blocks, current = [], None
    for line in lines:
        if current is None and line == "```bash":
            current = []
        elif current is not None and line == "```":
            blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def shell_body(path) -> tuple[str, str]:
    """(the BENCHMARKS.md section a shell file names, its commands: everything after its `cd` line)."""
    text = path.read_text(encoding="utf-8")
    m = SECTION.search(text)
    assert m, f"{path.name}: no '# BENCHMARKS.md, \"SECTION\"' header"
    head, sep, body = text.partition('cd "$(dirname "$0")/../.."\n\n')
    assert sep and head.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in head, path.name
    return m.group(1), body.rstrip("\n")


def test_every_tool_folder_is_a_package():
    folders = {p.parent for p in TOOLS.rglob("*.py")}
    assert TOOLS / "bench" in folders and TOOLS / "setup" in folders
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


def test_every_section_with_commands_has_one_shell_file_holding_exactly_them():
    secs = sections()
    with_commands = {t for t, lines in secs.items() if bash_blocks(lines)}
    named = {}
    for path in SHELL_FILES:
        title, body = shell_body(path)
        assert title in secs, f"{path.name}: no section {title!r} in BENCHMARKS.md"
        assert title not in named, f"{path.name} and {named.get(title)} name the same section"
        named[title] = path.name
        assert body == "\n\n".join(bash_blocks(secs[title])), f"{path.name}: not its section's commands"
        assert f"`tools/bench/{path.name}`" in "\n".join(secs[title]), f"{title!r} does not cite {path.name}"
    assert set(named) == with_commands


def test_the_shell_files_parse_and_are_executable():
    assert SHELL_FILES
    for path in SHELL_FILES:
        proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{path.name}: {proc.stderr}"
        assert path.stat().st_mode & 0o111, f"{path.name} is not executable"


def test_commands_and_paths_in_the_shell_files_and_docs_name_what_exists():
    texts = {p.relative_to(ROOT): p.read_text(encoding="utf-8") for p in SHELL_FILES}
    for doc in [ROOT / "README.md", BENCHMARKS, ROOT / "Makefile", *sorted((ROOT / "docs").glob("*.md"))]:
        texts[doc.relative_to(ROOT)] = doc.read_text(encoding="utf-8")
    missing = []
    for where, text in texts.items():
        for module in re.findall(r"python3? -m ((?:tools|edge|labeler|policy|models)(?:\.\w+)+)", text):
            if importlib.util.find_spec(module) is None:
                missing.append(f"{where}: module {module}")
        for module, name in re.findall(r"from (tools(?:\.\w+)+) import (\w+)", text):
            if not hasattr(importlib.import_module(module), name):
                missing.append(f"{where}: {module}.{name}")
        for path in re.findall(r"(?<![\w./-])(tools/[\w/.-]+\.(?:py|sh))", text):
            if not (ROOT / path).is_file():
                missing.append(f"{where}: {path}")
    assert missing == []
