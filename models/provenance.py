"""Where and when a result was measured: the machine in one line, the load average and the commit.

Benchmark results are compared across machines and runs that share cores with other work, so every results
file records these three next to its numbers (``edgejudge matrix`` and the benchmarks under tools/bench).
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

SOURCE_ROOT = Path(__file__).resolve().parents[1]
"""The folder holding the ``models`` package: the repository root in a checkout."""

PROVENANCE = ("machine", "load_average", "git_commit")
"""The fields :func:`provenance` returns."""


def machine() -> str:
    """This machine in one line, the same words in every results file: architecture, CPUs, OS, Python."""
    return (
        f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"{platform.python_implementation()} {platform.python_version()}"
    )


def load_average() -> list[float]:
    """The 1-, 5- and 15-minute load averages now (the machines are shared: how far to trust a timing)."""
    return [round(x, 2) for x in os.getloadavg()]


def git_commit(root: Path = SOURCE_ROOT) -> str:
    """The commit the code runs from (HEAD of the checkout at ``root``), with ``+dirty`` when tracked files
    differ from it; ``unknown`` for an installed package (no ``.git`` beside it) or without git."""
    if not (root / ".git").exists():
        return "unknown"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}+dirty" if dirty else head


def provenance() -> dict[str, Any]:
    """Where and when a result was measured: :func:`machine`, :func:`load_average` (at the time of the call)
    and :func:`git_commit`."""
    return {"machine": machine(), "load_average": load_average(), "git_commit": git_commit()}
