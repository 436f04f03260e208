"""``edgejudge`` in a subprocess, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.paths import ROOT


def run_cli(*args: str, timeout: float = 300, check: bool = False, env: dict | None = None):
    """Run ``edgejudge ARGS`` in a subprocess, as a user would."""
    proc = subprocess.run(
        [sys.executable, "-m", "models.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"edgejudge {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc
