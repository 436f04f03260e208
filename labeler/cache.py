"""Crash-safe label cache: every judge query's raw result in SQLite (WAL mode), keyed by what determines it.

Key = sha256 over (kind, model sha256, prompt template id, template version, sha256 of the prompt text, the
choices or the generation parameters). The value is the *raw* result as JSON: per-choice summed log-probs and
token counts for ``score``, the generated text for ``generate``. Normalisation happens on read, so changing it
never invalidates the cache; changing a prompt template means bumping its version.

Crash safety: WAL journal, one short transaction per write (or per batch with :meth:`LabelCache.put_many`),
and ``synchronous=NORMAL``, so a process killed with SIGKILL loses at most the query it was computing and
leaves a consistent database (WAL recovery runs on the next open). Several processes may share one cache file;
a writer waits up to ``timeout`` seconds for another's lock, then fails with a clear message.

JSON, not pickle: a cache file may come from another machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1


class CacheError(RuntimeError):
    """The cache file cannot be opened or used (not a cache, newer schema, locked for too long)."""


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_key(kind: str, model_sha256: str, template: str, version: int, prompt: str, params: Any) -> str:
    """Cache key of one query; ``params``: the choices (score) or the generation settings (any JSON)."""
    blob = json.dumps(
        [kind, model_sha256, template, int(version), text_sha256(prompt), params],
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class LabelCache:
    """``with LabelCache("labels.sqlite") as c: c.get(key) / c.put(key, payload, ...)``."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0):
        self.path = Path(path)
        self.timeout = timeout
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db: sqlite3.Connection | None = sqlite3.connect(
                str(self.path), timeout=timeout, isolation_level=None, check_same_thread=True
            )
            db = self._db
            db.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise CacheError(
                    f"{self.path}: cannot switch the label cache to WAL mode (got {mode!r}); "
                    "is it on a network file system?"
                )
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("BEGIN IMMEDIATE")
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute(
                "CREATE TABLE IF NOT EXISTS entries ("
                " key TEXT PRIMARY KEY, kind TEXT NOT NULL, model_sha256 TEXT NOT NULL,"
                " template TEXT NOT NULL,"
                " version INTEGER NOT NULL, payload TEXT NOT NULL, created REAL NOT NULL)"
            )
            row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif row[0] != str(SCHEMA_VERSION):
                db.execute("ROLLBACK")
                raise CacheError(
                    f"{self.path}: label cache schema {row[0]} is not supported "
                    f"(this edgejudge uses {SCHEMA_VERSION}); use a new cache file"
                )
            db.execute("COMMIT")
        except sqlite3.DatabaseError as e:
            self.close()
            raise CacheError(f"{self.path}: not a usable label cache ({e})") from None

    # -------------------------------------------------------------------------------------------- access

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise CacheError(f"{self.path}: label cache is closed")
        return self._db

    def get(self, key: str) -> dict[str, Any] | None:
        row = self.db.execute("SELECT payload FROM entries WHERE key=?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(keys), 500):
            part = list(keys[i : i + 500])
            marks = ",".join("?" * len(part))
            for k, payload in self.db.execute(
                f"SELECT key, payload FROM entries WHERE key IN ({marks})", part
            ):
                out[k] = json.loads(payload)
        return out

    def put(
        self, key: str, payload: dict[str, Any], *, kind: str, model_sha256: str, template: str, version: int
    ) -> None:
        self.put_many([(key, payload, kind, model_sha256, template, version)])

    def put_many(self, rows: Iterable[tuple[str, dict[str, Any], str, str, str, int]]) -> None:
        """Write ``(key, payload, kind, model_sha256, template, version)`` rows in one transaction."""
        now = time.time()
        data = [
            (k, kind, m, t, int(v), json.dumps(p, separators=(",", ":")), now) for k, p, kind, m, t, v in rows
        ]
        if not data:
            return
        try:
            with self._transaction():
                self.db.executemany("INSERT OR REPLACE INTO entries VALUES (?,?,?,?,?,?,?)", data)
        except sqlite3.OperationalError as e:
            raise CacheError(
                f"{self.path}: cannot write the label cache ({e}; waited up to {self.timeout:.0f} s)"
            ) from None

    def _transaction(self) -> Any:
        db = self.db

        class _Tx:
            def __enter__(self) -> None:
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, exc_type: Any, *_: Any) -> None:
                db.execute("COMMIT" if exc_type is None else "ROLLBACK")

        return _Tx()

    def __len__(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])

    def summary(self) -> dict[str, Any]:
        rows = self.db.execute(
            "SELECT kind, template, version, model_sha256, COUNT(*) FROM entries"
            " GROUP BY 1,2,3,4 ORDER BY 1,2,3,4"
        ).fetchall()
        return {
            "path": str(self.path),
            "entries": sum(r[4] for r in rows),
            "groups": [
                {"kind": r[0], "template": r[1], "version": r[2], "model_sha256": r[3], "entries": r[4]}
                for r in rows
            ],
        }

    def integrity_check(self) -> str:
        return str(self.db.execute("PRAGMA integrity_check").fetchone()[0])

    # -------------------------------------------------------------------------------------------- lifetime

    def close(self) -> None:
        if getattr(self, "_db", None) is not None:
            assert self._db is not None
            self._db.close()
            self._db = None

    def __enter__(self) -> LabelCache:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
