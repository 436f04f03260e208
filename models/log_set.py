"""Several logs read as one: the files a fleet's robots wrote, round after round, as one set of episodes.

A path is a trajectory file (``.jsonl`` / ``.jsonl.gz``) or a folder, whose such files (in its subfolders
too) are read in the order of their paths. Each file is read as :func:`models.trajectory.iter_trajectories`
reads it (its own layout notices, a torn last line left out with its notice); an episode id found in two
files is an error that names both (the same episode twice would count twice), as it is within one file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from models.trajectory import DatasetError, Trajectory, iter_trajectories

LOG_SUFFIXES = (".jsonl", ".jsonl.gz")
"""The file names a folder's logs end with."""

PathLike = str | os.PathLike[str]


def log_files(paths: Iterable[PathLike]) -> list[Path]:
    """The trajectory files of ``paths``: each file as given, each folder's logs sorted by path; a path that
    does not exist, or a folder without a log, is a :class:`DatasetError`; a file given twice is read once."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise DatasetError(p, None, "file", "does not exist")
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.name.endswith(LOG_SUFFIXES))
            if not found:
                raise DatasetError(
                    p, None, "file", f"folder holds no log ({' or '.join(LOG_SUFFIXES)} files)"
                )
            out.extend(found)
        else:
            out.append(p)
    seen: set[Path] = set()
    unique = []
    for p in out:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def read_logs(paths: Sequence[PathLike] | PathLike, **kwargs: Any) -> list[Trajectory]:
    """Every episode of the logs of ``paths`` (one path or several; files or folders, :func:`log_files`), in
    file order; ``kwargs`` go to :func:`models.trajectory.iter_trajectories` for each file."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    first_file: dict[str, Path] = {}
    out: list[Trajectory] = []
    for f in log_files(paths):
        for t in iter_trajectories(f, **kwargs):
            if t.id in first_file:
                raise DatasetError(
                    f,
                    None,
                    "id",
                    f"episode id {t.id!r} is also in {first_file[t.id]}: the same episode twice?",
                )
            first_file[t.id] = f
            out.append(t)
    return out


def beside(log: PathLike, ending: str) -> Path:
    """The file named after ``log`` with ``ending`` instead of ``.jsonl`` / ``.jsonl.gz``, beside it
    (``fleet.jsonl.gz`` and ``.audit.jsonl``: ``fleet.audit.jsonl``)."""
    p = Path(log)
    name = p.name
    for suffix in (".jsonl.gz", ".jsonl", ".gz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return p.with_name(name + ending)


def describe_logs(paths: Sequence[PathLike] | PathLike) -> str:
    """How provenance names a set of logs: the one path, or the paths joined by ``, ``."""
    if isinstance(paths, (str, os.PathLike)):
        return str(paths)
    return ", ".join(str(p) for p in paths)
