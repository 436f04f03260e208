"""The matrix's row store: rows keyed by their full configuration, kept in one JSON file.

A row is one evaluated configuration (world, reward source, algorithm, training episodes, seed, client,
runner, sizes). Its key is the canonical JSON of that configuration, so a row with the same configuration is
never recomputed, and a row that differs in any setting (more test episodes, more updates) is a new row.
Every ``put`` rewrites the file atomically (temporary file + rename), so an interrupted run loses at most the
row in progress. Rows made on other machines join with ``edgejudge matrix --merge``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from models.settings import atomic_write

FORMAT = "edgejudge-bench-matrix/1"

FINAL = ("ok", "skipped")
"""Row statuses that count as finished; an ``error`` row is retried by the next run."""


def row_key(config: Mapping[str, Any]) -> str:
    """The canonical text of a row's configuration: sorted keys, no whitespace."""
    return json.dumps(dict(config), sort_keys=True, separators=(",", ":"))


class RowStore:
    """Rows by key in ``path`` (created on the first ``put``); ``meta`` is written beside them."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.rows: dict[str, dict[str, Any]] = {}
        self.meta: dict[str, Any] = {}
        if self.path.exists():
            try:
                payload = json.loads(self.path.read_text())
            except json.JSONDecodeError as e:
                raise ValueError(f"{self.path}: not a JSON file ({e})") from None
            if payload.get("format") != FORMAT:
                raise ValueError(
                    f"{self.path}: not a benchmark-matrix file (format {payload.get('format')!r})"
                )
            self.meta = payload.get("meta", {})
            for row in payload.get("rows", []):
                self.rows[row_key(row["config"])] = row

    def get(self, config: Mapping[str, Any]) -> dict[str, Any] | None:
        return self.rows.get(row_key(config))

    def put(self, config: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
        row = {**config, **result, "config": dict(config)}
        self.rows[row_key(config)] = row
        self.save()
        return row

    def select(self, configs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The stored rows of ``configs``, in their order (configs without a row are left out)."""
        return [r for r in (self.get(c) for c in configs) if r is not None]

    def save(self) -> None:
        rows = sorted(self.rows.values(), key=lambda r: row_key(r["config"]))
        payload = {"format": FORMAT, "meta": self.meta, "rows": rows}
        atomic_write(self.path, json.dumps(payload, indent=1) + "\n")


def merge(store: RowStore, other: RowStore) -> int:
    """Take the finished rows of ``other`` (a run elsewhere) into ``store`` where ``store`` has no finished
    row of that configuration, or one with fewer fields (``other``'s was backfilled); how many were taken."""
    taken = 0
    for key, row in other.rows.items():
        mine = store.rows.get(key, {})
        newer = mine.get("status") not in FINAL or (
            mine.get("status") == row.get("status") and set(row) > set(mine)
        )
        if row.get("status") in FINAL and newer:
            store.rows[key] = row
            taken += 1
    return taken
