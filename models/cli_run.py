"""``edgejudge`` in a subprocess: how a pipeline of commands (``edgejudge matrix``, the benchmarks) runs each
step, so that every step is exactly what a user types and a crash in one step ends only that step.

The child imports the same code as the parent (the folder holding ``models`` first on its path, the current
folder not on it), whatever folder the command runs in.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping

import click

from models.provenance import SOURCE_ROOT


def edgejudge(
    *args: str,
    timeout: float = 7200,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Run ``edgejudge ARGS`` in a subprocess (in ``cwd``, default the current folder; ``env``: variables set
    for it); its stdout, or a :class:`click.ClickException` carrying the command and its stderr tail."""
    return run_python(["-m", "models.cli", *args], f"edgejudge {' '.join(args)}", timeout, cwd, env)


def run_python(
    argv: list[str],
    what: str,
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> str:
    """Run ``python ARGV`` with this interpreter and this checkout's packages (``extra_env`` added to the
    environment); its stdout, or a failure naming ``what``."""
    path = os.environ.get("PYTHONPATH")
    env = {
        **os.environ,
        **(extra_env or {}),
        "PYTHONPATH": os.pathsep.join([str(SOURCE_ROOT), *([path] if path else [])]),
    }
    proc = subprocess.run(
        [sys.executable, "-P", *argv], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env
    )
    if proc.returncode != 0:
        raise click.ClickException(f"{what} failed:\n{proc.stderr[-2000:]}")
    return proc.stdout
