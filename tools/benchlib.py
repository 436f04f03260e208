"""Shared by the benchmarks: the one held-out TWC dev set the labeling benchmarks report on, runners for the
command line and the tools, and the path rule for what they write into tools/results/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

ROOT = Path(__file__).resolve().parent.parent

# The held-out label-quality set of BENCHMARKS.md: COREN and TRCA tables are comparable because both use it.
HELDOUT_DEV_COLLECT = [
    "collect", "--env", "twx:twc", "--split", "dev", "--episodes", "30",
    "--behaviour", "gold-noise", "--noise", "0.4", "--seed", "1",
]  # fmt: skip


def edgejudge(*args: str, timeout: float = 7200) -> str:
    """Run ``edgejudge ARGS`` in a subprocess; its stdout, or a failure carrying the stderr tail."""
    return _run(["-m", "models.cli", *args], f"edgejudge {' '.join(args)}", timeout)


def run_tool(script: str, *args: str, timeout: float = 7200) -> str:
    """Run ``python SCRIPT ARGS`` (a path relative to the repository root); its stdout, or a failure."""
    return _run([script, *args], f"{script} {' '.join(args)}", timeout)


def _run(argv: list[str], what: str, timeout: float) -> str:
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    if proc.returncode != 0:
        raise click.ClickException(f"{what} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout


# An absolute path of at least two components inside any text: "/tmp/x/train.jsonl.gz", "--out=/work/r/b".
# "tcp://host:1" and "steps/s" are not paths (the slash follows ":" / "/" or a word).
_ABS_PATH = re.compile(r"(?<![\w./:~-])/(?:[\w.+@=-]+/)+[\w.+@=-]*")


def portable_path(path: str | os.PathLike) -> str:
    """How a results file names ``path``: relative to the repository root when inside it, else its file name.

    Results are committed and read on other machines, so they never record this machine's absolute paths
    (temporary directories, worktrees, home directories). Relative paths are returned unchanged."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    p = Path(os.path.normpath(text))
    for root in (ROOT, ROOT.resolve()):
        try:
            return p.relative_to(root).as_posix() or "."
        except ValueError:
            pass
    return p.name or text


def portable_paths(value: Any) -> Any:
    """``value`` (a results payload: dicts, lists, strings, numbers) with every absolute path in its strings
    (fields, command lines, captured log lines) rewritten by :func:`portable_path`; nothing else changes."""
    if isinstance(value, str):
        return _ABS_PATH.sub(lambda m: portable_path(m.group(0)), value)
    if isinstance(value, dict):
        return {portable_paths(k): portable_paths(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(portable_paths(v) for v in value)
    return value
