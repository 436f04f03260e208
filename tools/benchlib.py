"""Shared by the benchmarks: the one held-out TWC dev set the labeling benchmarks report on, and runners for
the command line and the tools."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent

# The held-out label-quality set of BENCHMARKS.md: COREN and TRCA tables are comparable because both use it.
HELDOUT_DEV_COLLECT = [
    "collect", "--env", "twx:twc", "--split", "dev", "--episodes", "30",
    "--behaviour", "gold-noise", "--noise", "0.4", "--seed", "1",
]  # fmt: skip


def edgejudge(*args: str, timeout: float = 7200) -> str:
    """Run ``edgejudge ARGS`` in a subprocess; its stdout, or a failure carrying the stderr tail."""
    return _run(["-m", "edge.cli", *args], f"edgejudge {' '.join(args)}", timeout)


def run_tool(script: str, *args: str, timeout: float = 7200) -> str:
    """Run ``python SCRIPT ARGS`` (a path relative to the repository root); its stdout, or a failure."""
    return _run([script, *args], f"{script} {' '.join(args)}", timeout)


def _run(argv: list[str], what: str, timeout: float) -> str:
    proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    if proc.returncode != 0:
        raise click.ClickException(f"{what} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout
