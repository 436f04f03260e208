"""Shared by the benchmarks: the one held-out TWC dev set the labeling benchmarks report on, the
command line run from the repository root, and how a results JSON is written (:func:`write_results`: where
and when it was measured (:mod:`models.provenance`), paths made portable, written atomically)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from models import cli_run
from models.provenance import PROVENANCE, provenance
from models.provenance import git_commit as git_commit  # the benchmarks import these from here
from models.provenance import load_average as load_average
from models.provenance import machine as machine
from models.settings import atomic_write

ROOT = Path(__file__).resolve().parents[2]

# The held-out label-quality set of BENCHMARKS.md: COREN and TRCA tables are comparable because both use it.
HELDOUT_DEV_COLLECT = [
    "collect", "--env", "twx:twc", "--split", "dev", "--episodes", "30",
    "--behaviour", "gold-noise", "--noise", "0.4", "--seed", "1",
]  # fmt: skip


def edgejudge(*args: str, timeout: float = 7200, env: Mapping[str, str] | None = None) -> str:
    """Run ``edgejudge ARGS`` in a subprocess from the repository root (relative paths are the root's;
    ``env``: variables set for it); its stdout, or a failure carrying the stderr tail."""
    return cli_run.edgejudge(*args, timeout=timeout, cwd=ROOT, env=env)


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
