"""The Ray actors: a judge actor holds one loaded judge; one cache actor owns the crash-safe answer cache.

Cache design: there is one cache file, the SQLite label cache of :mod:`labeler.cache`, and one owner, the
:class:`CacheActor` on the driver's node. A judge actor reads answers through it (one ``get_many`` per judge
call) and keeps the answers it computes; a finished unit returns them to the driver, which commits whole
units, in unit order, each in one transaction (:meth:`CacheActor.put_unit`). So the cache holds whole units
only: a unit interrupted by a killed actor or driver is absent and is computed again from the same primed
state (identical answers); a committed unit is never computed again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import ray

from labeler.cache import LabelCache

Row = tuple[str, dict[str, Any], str, str, str, int]


class CacheActor:
    """Owns the SQLite answer cache (place it on the node that has the file)."""

    def __init__(self, path: str):
        self.cache = LabelCache(path)
        self.rows_written = 0
        self.commits = 0

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        return self.cache.get_many(list(keys))

    def put_unit(self, rows: list[Row]) -> int | None:
        """Commit one unit's answers in one transaction; None (nothing written) when one of them is in the
        cache already: an earlier unit computed it meanwhile, so this unit would have read it as a hit."""
        if rows and self.cache.get_many([r[0] for r in rows]):
            return None
        self.cache.put_many(rows)
        self.rows_written += len(rows)
        self.commits += 1
        return len(rows)

    def stats(self) -> dict[str, Any]:
        return {
            "path": str(self.cache.path),
            "entries": len(self.cache),
            "rows_written": self.rows_written,
            "commits": self.commits,
        }

    def close(self) -> None:
        self.cache.close()


class RemoteCache:
    """The judge's cache inside a judge actor: reads go to the cache actor, writes stay here until the unit
    is done (:meth:`take`)."""

    def __init__(self, owner: Any):
        self._owner = owner
        self._pending: dict[str, Row] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        out = {k: self._pending[k][1] for k in keys if k in self._pending}
        rest = [k for k in keys if k not in out]
        if rest:
            out.update(ray.get(self._owner.get_many.remote(rest)))
        return out

    def put(
        self, key: str, payload: dict[str, Any], *, kind: str, model_sha256: str, template: str, version: int
    ) -> None:
        self.put_many([(key, payload, kind, model_sha256, template, version)])

    def put_many(self, rows: Sequence[Row]) -> None:
        for row in rows:
            self._pending[row[0]] = row

    def take(self) -> list[Row]:
        """The unit's computed answers (and forget them here)."""
        rows = list(self._pending.values())
        self._pending.clear()
        return rows

    def discard(self) -> None:
        self._pending.clear()

    def close(self) -> None:
        self._pending.clear()


def _delta(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in after.items():
        if isinstance(v, dict):
            out[k] = {kk: vv - before.get(k, {}).get(kk, 0) for kk, vv in v.items()}
            out[k] = {kk: vv for kk, vv in out[k].items() if vv}
        else:
            out[k] = v - before.get(k, 0)
    return out


class JudgeActor:
    """One loaded judge and the worker built around it; runs units (see :mod:`labeler.cluster.units`)."""

    def __init__(
        self, slot: int, judge_kwargs: dict[str, Any], make_worker: Callable[[Any], Any], cache: str
    ):
        from labeler.judge import open_judge

        self.slot = slot
        self.cache = RemoteCache(ray.get_actor(cache))  # the cache actor, by name
        self.judge = open_judge(**judge_kwargs, cache=self.cache)
        self.worker = make_worker(self.judge)
        self.started = time.time()

    def info(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "slot": self.slot,
            "node": ray.get_runtime_context().get_node_id(),
            "n_ctx": self.judge.n_ctx,
            "model_sha256": self.judge.model_sha256,
            "provenance": self.judge.provenance(),
        }

    def run(self, index: int, anchor: str, method: str, args: tuple) -> dict[str, Any]:
        """One unit: prime, call; the value, the answers it computed (``rows``, for the driver to commit) and
        what it counted."""
        counters = getattr(self.worker, "counters", None)
        before_c = counters() if counters else {}
        before_s = dict(self.judge.stats)
        t0, c0 = time.perf_counter(), time.process_time()
        self.cache.discard()
        self.judge.prime(anchor)
        try:
            value = getattr(self.worker, method)(*args)
        except BaseException:
            self.cache.discard()
            raise
        rows = self.cache.take()
        return {
            "index": index,
            "value": value,
            "counts": _delta(counters(), before_c) if counters else {},
            "stats": _delta(dict(self.judge.stats), before_s),
            "rows": rows,
            "seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - c0,
            "pid": os.getpid(),
            "slot": self.slot,
        }

    @ray.method(concurrency_group="health")
    def ping(self) -> int:
        return os.getpid()

    def close(self) -> None:
        self.judge.close()
