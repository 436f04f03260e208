"""Shared by the labeling benchmarks: the one held-out TWC dev set they all report on, and a CLI runner."""

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
    proc = subprocess.run(
        [sys.executable, "-m", "edge.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )
    if proc.returncode != 0:
        raise click.ClickException(f"edgejudge {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout
