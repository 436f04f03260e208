"""The matrix's row store: rows keyed by their full configuration, kept in one JSON file.

A row is one evaluated configuration (world, reward source, algorithm, training episodes, seed, client,
runner, sizes). Its key is the canonical JSON of that configuration, so a row with the same configuration is
never recomputed, and a row that differs in any setting (more test episodes, more updates) is a new row.
Every ``put`` rewrites the file atomically (temporary file + rename), so an interrupted run loses at most the
row in progress. Runs side by side on one file keep each other's rows: a save (under a lock) first takes in
the rows another run wrote since this one read the file. Rows made on other machines join with ``edgejudge
matrix --merge``.

The file is what a repository commits: one compact line per row, its configuration once, and no per-episode
arrays: a row keeps their digest (``episodes_sha``), and the arrays themselves go to the full rows beside the
run's work (``full``: the same rows with ``per_episode``), read back when their digest matches.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from models.settings import atomic_write

FORMAT = "edgejudge-bench-matrix/1"

FINAL = ("ok", "skipped")
"""Row statuses that count as finished; an ``error`` row is retried by the next run."""

EPISODES = "per_episode"
"""A row's per-episode outcomes ([seed, success, score, steps] each): in the full rows only."""


def episodes_digest(episodes: Any) -> str:
    """The digest a committed row keeps of its per-episode outcomes."""
    return hashlib.sha256(json.dumps(episodes, separators=(",", ":")).encode()).hexdigest()[:16]


def _compact(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as the committed file holds it: the configuration's fields once (under ``config``), no
    per-episode arrays."""
    config = row["config"]
    return {k: v for k, v in row.items() if k != EPISODES and not (k in config and config[k] == v)}


def _write_rows(path: Path, meta: Mapping[str, Any], rows: list[dict[str, Any]]) -> None:
    lines = [json.dumps(r, separators=(",", ":"), sort_keys=True) for r in rows]
    head = json.dumps({"format": FORMAT, "meta": meta}, separators=(",", ":"))[:-1]
    atomic_write(path, head + ',"rows":[\n' + ",\n".join(lines) + "\n]}\n")


def _read_rows(path: Path) -> dict[str, Any]:
    try:
        payload = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a JSON file ({e})") from None
    if payload.get("format") != FORMAT:
        raise ValueError(f"{path}: not a benchmark-matrix file (format {payload.get('format')!r})")
    return payload


def row_key(config: Mapping[str, Any]) -> str:
    """The canonical text of a row's configuration: sorted keys, no whitespace."""
    return json.dumps(dict(config), sort_keys=True, separators=(",", ":"))


class RowStore:
    """Rows by key in ``path`` (created on the first ``put``); ``meta`` is written beside them."""

    def __init__(self, path: str | os.PathLike[str], full: str | os.PathLike[str] | None = None):
        self.path = Path(path)
        self.full = Path(full) if full else None
        """The full rows (with their per-episode arrays), beside the run's work; None: none kept."""
        self.rows: dict[str, dict[str, Any]] = {}
        self.meta: dict[str, Any] = {}
        if self.path.exists():
            payload = _read_rows(self.path)
            self.meta = payload.get("meta", {})
            for row in payload.get("rows", []):
                row = {**row["config"], **row}
                if EPISODES in row:  # a file written before the digest
                    row["episodes_sha"] = episodes_digest(row[EPISODES])
                self.rows[row_key(row["config"])] = row
        if self.full is not None and self.full.exists():
            for row in _read_rows(self.full).get("rows", []):
                mine = self.rows.get(row_key(row["config"]))
                if mine and EPISODES in row and mine.get("episodes_sha") == episodes_digest(row[EPISODES]):
                    mine[EPISODES] = row[EPISODES]

    def get(self, config: Mapping[str, Any]) -> dict[str, Any] | None:
        return self.rows.get(row_key(config))

    def put(self, config: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
        """Store ``result`` as ``config``'s row. A ``reason`` (a failed step's message) names paths under the
        working directory relative to it: the file is committed and read on other machines."""
        result = dict(result)
        if isinstance(result.get("reason"), str):
            result["reason"] = result["reason"].replace(os.path.join(os.getcwd(), ""), "")
        row = {**config, **result, "config": dict(config)}
        if EPISODES in row:
            row["episodes_sha"] = episodes_digest(row[EPISODES])
        self.rows[row_key(config)] = row
        self.save()
        return row

    def select(self, configs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The stored rows of ``configs``, in their order (configs without a row are left out)."""
        return [r for r in (self.get(c) for c in configs) if r is not None]

    def save(self) -> None:
        with _locked(self.path):
            self._take_from_disk()
            self._write()

    def _take_from_disk(self) -> None:
        """Take the rows another run wrote to the file since this store read it: those it does not have, and
        finished ones where its own row is not finished."""
        if not self.path.exists():
            return
        disk = RowStore(self.path, self.full)
        for key, row in disk.rows.items():
            mine = self.rows.get(key)
            if mine is None or (mine.get("status") not in FINAL and row.get("status") in FINAL):
                self.rows[key] = row

    def _write(self) -> None:
        rows = sorted(self.rows.values(), key=lambda r: row_key(r["config"]))
        _write_rows(self.path, self.meta, [_compact(r) for r in rows])
        if self.full is not None:
            self.full.parent.mkdir(parents=True, exist_ok=True)
            _write_rows(
                self.full, {}, [{"config": r["config"], EPISODES: r[EPISODES]} for r in rows if EPISODES in r]
            )


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock for the rows file ``path``: a lock on the folder it is in (no lock file left beside a
    committed file or anywhere else); without ``fcntl`` (Windows), no lock."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    folder = path.resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def planned_rows(store: RowStore) -> list[dict[str, Any]]:
    """The rows of the run that wrote ``store`` last (its ``meta["plan"]``), without rows an earlier run
    with other settings left there; every row when the file records no plan."""
    plan = set(store.meta.get("plan") or ())
    return [r for k, r in store.rows.items() if not plan or k in plan]


def merge(store: RowStore, other: RowStore) -> int:
    """Take the finished rows of ``other`` (a run elsewhere) into ``store`` where ``store`` has no finished
    row of that configuration, or one with fewer fields (``other``'s was backfilled); how many were taken."""
    taken = 0
    for key, row in other.rows.items():
        mine = store.rows.get(key, {})
        newer = mine.get("status") not in FINAL or (
            mine.get("status") == row.get("status") and set(row) - {EPISODES} > set(mine) - {EPISODES}
        )
        if row.get("status") in FINAL and newer:
            store.rows[key] = row
            taken += 1
    return taken
