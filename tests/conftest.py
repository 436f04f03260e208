from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.paths import ROOT

# Keep every native library to one thread: the CI box has 2 cores and tests may run beside other work.
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")
os.environ.setdefault("EDGEJUDGE_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


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


@pytest.fixture
def cli():
    return run_cli
