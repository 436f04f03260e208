from __future__ import annotations

import os

import pytest

from tests.support.cli import run_cli

# Keep every native library to one thread: the CI box has 2 cores and tests may run beside other work.
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")
os.environ.setdefault("EDGEJUDGE_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def cli():
    return run_cli
