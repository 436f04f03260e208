"""Shared by the benchmarks and probes: the one held-out TWC dev set the labeling benchmarks report on,
runners for the command line and the tools, and how a results JSON is written (:func:`write_results`: where
and when it was measured, paths made portable, written atomically)."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from models.settings import atomic_write

ROOT = Path(__file__).resolve().parents[2]

# The held-out label-quality set of BENCHMARKS.md: COREN and TRCA tables are comparable because both use it.
HELDOUT_DEV_COLLECT = [
    "collect", "--env", "twx:twc", "--split", "dev", "--episodes", "30",
    "--behaviour", "gold-noise", "--noise", "0.4", "--seed", "1",
]  # fmt: skip


def edgejudge(*args: str, timeout: float = 7200, env: Mapping[str, str] | None = None) -> str:
    """Run ``edgejudge ARGS`` in a subprocess (``env``: variables set for it); its stdout, or a failure
    carrying the stderr tail."""
    return _run(["-m", "models.cli", *args], f"edgejudge {' '.join(args)}", timeout, env)


def run_tool(script: str, *args: str, timeout: float = 7200) -> str:
    """Run ``python SCRIPT ARGS`` (a path relative to the repository root); its stdout, or a failure."""
    return _run([script, *args], f"{script} {' '.join(args)}", timeout)


def _run(argv: list[str], what: str, timeout: float, env: Mapping[str, str] | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        env={**os.environ, **env} if env else None,
    )
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


def machine() -> str:
    """This machine in one line, the same words in every results file: architecture, CPUs, OS, Python."""
    return (
        f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
        f"{platform.python_implementation()} {platform.python_version()}"
    )


def load_average() -> list[float]:
    """The 1-, 5- and 15-minute load averages now (the machines are shared: how far to trust a timing)."""
    return [round(x, 2) for x in os.getloadavg()]


def git_commit() -> str:
    """The commit the tools run from (HEAD of the repository), with ``+dirty`` when tracked files differ from
    it; ``unknown`` outside a git checkout or without git."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}+dirty" if dirty else head


PROVENANCE = ("machine", "load_average", "git_commit")
"""The fields :func:`provenance` adds to every results JSON."""


def provenance() -> dict[str, Any]:
    """Where and when a result was measured: :func:`machine`, :func:`load_average` (at the time of the call)
    and :func:`git_commit`."""
    return {"machine": machine(), "load_average": load_average(), "git_commit": git_commit()}


def write_results(
    path: str | os.PathLike[str], payload: Mapping[str, Any], *, indent: int = 2
) -> dict[str, Any]:
    """Write a results JSON to ``path``: :func:`provenance` first (it replaces any field of the same name in
    ``payload``), then ``payload``, every absolute path made portable (:func:`portable_paths`); atomically.
    Returns what was written."""
    record = portable_paths({**provenance(), **{k: v for k, v in payload.items() if k not in PROVENANCE}})
    atomic_write(path, json.dumps(record, indent=indent, default=_json_default) + "\n")
    return record


def publish(payload: Mapping[str, Any], md: str, json_out: Path | None, md_out: Path | None) -> None:
    """A benchmark's report: ``md`` on stdout, and to ``md_out`` and ``payload`` to ``json_out`` (via
    :func:`write_results`) when given."""
    click.echo(md)
    if json_out:
        write_results(json_out, payload)
    if md_out:
        atomic_write(md_out, md)


def _json_default(value: Any) -> Any:
    """numpy scalars and arrays (``.tolist()``/``.item()``), everything else by ``float``."""
    for attr in ("tolist", "item"):
        if hasattr(value, attr):
            return getattr(value, attr)()
    return float(value)
