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


PAGES = sorted((ROOT / "docs" / "benchmarks").glob("*.md"))
"""The results pages: one per area, each section holding its tables and the commands that made them."""


SHELL_FILES = sorted((TOOLS / "bench").glob("*.sh"))


HEADER = re.compile(r'^# (docs/benchmarks/[\w.-]+\.md), "([^"]+)"', re.M)
"""A shell file's second line: the page and the section whose commands it holds."""


def sections(text: str) -> dict[str, list[str]]:
    """A page's sections (its '# ' title, then every '## ' heading, which includes its '### ' subsections) ->
    the sections' lines, code fences taken into account."""
    out: dict[str, list[str]] = {}
    title, fence = None, False
    for line in text.split("\n"):
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


def shell_body(name: str, text: str) -> tuple[str, str, str]:
    """(the page a shell file names, the section, its commands: everything after its `cd` line)."""
    m = HEADER.search(text)
    assert m, f"{name}: no '# docs/benchmarks/PAGE.md, \"SECTION\"' header"
    head, sep, body = text.partition('cd "$(dirname "$0")/../.."\n\n')
    assert sep and head.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in head, name
    return m.group(1), m.group(2), body.rstrip("\n")


def contract_problems(shells: dict[str, str], pages: dict[str, str]) -> list[str]:
    """What breaks the tie between shell files and pages: every shell file names a page and a section there
    that holds exactly its commands and cites it, no two name the same section, and every section with
    commands has a shell file. ``shells``: file name -> text; ``pages``: 'docs/benchmarks/X.md' -> text."""
    problems, named = [], {}
    secs = {page: sections(text) for page, text in pages.items()}
    for name, text in sorted(shells.items()):
        page, title, body = shell_body(name, text)
        if title not in secs.get(page, {}):
            problems.append(f"{name}: no section {title!r} in {page}")
            continue
        if (page, title) in named:
            problems.append(f"{name} and {named[page, title]} name {page}, {title!r}")
        named[page, title] = name
        lines = secs[page][title]
        if body != "\n\n".join(bash_blocks(lines)):
            problems.append(f"{name}: not the commands of {page}, {title!r}")
        if f"`tools/bench/{name}`" not in "\n".join(lines):
            problems.append(f"{page}, {title!r} does not cite tools/bench/{name}")
    with_commands = {(p, t) for p, s in secs.items() for t, lines in s.items() if bash_blocks(lines)}
    problems += [f"{p}, {t!r}: commands without a shell file" for p, t in sorted(with_commands - set(named))]
    return problems


def real_shells() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in SHELL_FILES}


def real_pages() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in PAGES}


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    out, fence = set(), False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"^#{1,6} ", line):
            out.add(slug(line.lstrip("#")))
    return out


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
    assert PAGES and SHELL_FILES
    assert contract_problems(real_shells(), real_pages()) == []


def test_the_shell_file_contract_fails_on_a_mismatch():
    """The check above is not vacuous: a changed command, a missing shell file, a wrong section name and a
    section that no longer cites its file are each caught."""
    shells, pages = real_shells(), real_pages()
    name = "serving.sh"
    page, title, body = shell_body(name, shells[name])
    first = body.split("\n")[0]
    changed = {**pages, page: pages[page].replace(first, first + " --extra", 1)}
    assert any("not the commands" in p for p in contract_problems(shells, changed))
    fewer = {n: t for n, t in shells.items() if n != name}
    assert any("without a shell file" in p for p in contract_problems(fewer, pages))
    renamed = {**shells, name: shells[name].replace(f'"{title}"', '"No such section"', 1)}
    assert any("no section" in p for p in contract_problems(renamed, pages))
    uncited = {**pages, page: pages[page].replace(f"`tools/bench/{name}`", "the shell file")}
    assert any("does not cite" in p for p in contract_problems(shells, uncited))


def test_benchmarks_md_is_an_index_of_the_pages():
    """BENCHMARKS.md links every results page and names every shell file; the commands live on the pages."""
    text = BENCHMARKS.read_text(encoding="utf-8")
    assert bash_blocks(text.split("\n")) == []
    assert [p.name for p in PAGES if f"](docs/benchmarks/{p.name}" not in text] == []
    assert [p.name for p in SHELL_FILES if f"tools/bench/{p.name}" not in text] == []


def test_links_in_the_readme_and_the_benchmark_pages_resolve():
    """Relative links (and their anchors, into Markdown files) from README.md, BENCHMARKS.md and the results
    pages name files and headings that exist."""
    broken = []
    for doc in [ROOT / "README.md", BENCHMARKS, *PAGES]:
        text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (doc.parent / path).resolve() if path else doc
            if not dest.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_shell_files_parse_and_are_executable():
    assert SHELL_FILES
    for path in SHELL_FILES:
        proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{path.name}: {proc.stderr}"
        assert path.stat().st_mode & 0o111, f"{path.name} is not executable"


def test_commands_and_paths_in_the_shell_files_and_docs_name_what_exists():
    texts = {p.relative_to(ROOT): p.read_text(encoding="utf-8") for p in SHELL_FILES}
    docs = [ROOT / "README.md", BENCHMARKS, ROOT / "Makefile", *sorted((ROOT / "docs").glob("*.md")), *PAGES]
    for doc in docs:
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
