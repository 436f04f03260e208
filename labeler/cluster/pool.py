"""The driver side: units of judge work over a pool of judge actors, with progress, restarts and a report.

Ray's own machinery does the work: ``ray.util.ActorPool`` hands each unit to an idle actor; a judge actor
that dies is restarted by Ray (``max_restarts``) and its unit in flight is retried on it
(``max_task_retries``); the cache actor is pinned to the driver's node, where the cache file is.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
from ray.util import ActorPool
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from labeler.cluster.actors import CacheActor, JudgeActor
from labeler.cluster.options import ClusterConfig, ClusterError

PING_EVERY_S = 2.0
LOAD_TIMEOUT_S = 600.0


class JudgePool:
    """``cfg.judge_actors`` judge actors, each running ``make_worker(judge)``, and the cache actor.

    ``map(anchor, method, calls)`` runs ``worker.method(*args)`` for every call on some actor (each from
    ``judge.prime(anchor)``) and returns the values in call order. ``stats`` sums the actors' judge stats;
    ``alive`` is the number of actors that answered the last health ping."""

    def __init__(
        self,
        cfg: ClusterConfig,
        judge_kwargs: dict[str, Any],
        make_worker: Callable[[Any], Any],
        cache_path: str | Path,
    ):
        self.cfg = cfg
        node = ray.get_runtime_context().get_node_id()
        # the judge actors find the cache actor by name: a handle among an actor's constructor arguments
        # would keep Ray from restarting it reliably (ray-project/ray#53727)
        self.cache_name = f"edgejudge-cache-{uuid.uuid4().hex[:12]}"
        self.cache = (
            ray.remote(CacheActor)
            .options(
                name=self.cache_name,
                num_cpus=0,
                max_restarts=-1,
                max_task_retries=-1,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
            )
            .remote(str(Path(cache_path).resolve()))
        )
        remote = ray.remote(concurrency_groups={"health": 1})(JudgeActor)
        self.actors = [
            remote.options(
                num_cpus=cfg.cpus_per_actor,
                num_gpus=cfg.gpus_per_actor,
                max_restarts=cfg.max_restarts,
                max_task_retries=cfg.max_restarts,
            ).remote(slot, judge_kwargs, make_worker, self.cache_name)
            for slot in range(cfg.judge_actors)
        ]
        try:
            self.infos = self._get(
                [a.info.remote() for a in self.actors], LOAD_TIMEOUT_S, "loading the judges"
            )
            self.cache_start = self._get(self.cache.stats.remote(), 60.0, "opening the cache")
        except BaseException:
            self.close()
            raise
        self.pids: list[set[int]] = [{int(i["pid"])} for i in self.infos]
        self.units = [0] * len(self.actors)
        self.unit_seconds = [0.0] * len(self.actors)
        self.unit_cpu = [0.0] * len(self.actors)
        self.written = 0
        self.recomputed = 0
        self.stats: dict[str, float] = {}
        self.alive = len(self.actors)
        self._pinged = 0.0
        self._pool = ActorPool(self.actors)
        self.seconds = 0.0

    @staticmethod
    def _get(refs: Any, timeout: float, what: str) -> Any:
        try:
            return ray.get(refs, timeout=timeout)
        except ray.exceptions.GetTimeoutError:
            raise ClusterError(
                f"{what} took over {timeout:.0f} s: does the cluster have the CPUs/GPUs the actors ask for?"
            ) from None
        except ray.exceptions.RayTaskError as e:
            raise e.cause if isinstance(e.cause, Exception) else ClusterError(str(e)) from None
        except ray.exceptions.RayActorError as e:
            raise ClusterError(f"{what}: a judge actor died ({str(e).splitlines()[0]})") from None

    def refresh_alive(self, force: bool = False) -> int:
        """Ping every actor (a separate concurrency group, answered while a unit runs)."""
        now = time.monotonic()
        if not force and now - self._pinged < PING_EVERY_S:
            return self.alive
        self._pinged = now
        pings = [a.ping.remote() for a in self.actors]
        ready, _ = ray.wait(pings, num_returns=len(pings), timeout=0.5)
        alive = 0
        for r in ready:
            try:
                ray.get(r)
                alive += 1
            except ray.exceptions.RayError:
                pass
        self.alive = alive
        return alive

    def map(
        self,
        anchor: str,
        method: str,
        calls: list[tuple],
        on_result: Callable[[dict[str, Any]], None] | None = None,
    ) -> list[Any]:
        t0 = time.perf_counter()
        values: list[Any] = [None] * len(calls)
        for i, args in enumerate(calls):
            self._pool.submit(lambda a, v: a.run.remote(v[0], anchor, method, v[1]), (i, tuple(args)))
        done: dict[int, dict[str, Any]] = {}
        turn = 0  # units are committed in call order, as one process would have written them
        while self._pool.has_next():
            try:
                r = self._pool.get_next_unordered(timeout=PING_EVERY_S)
            except TimeoutError:
                self.refresh_alive()
                continue
            except ray.exceptions.RayTaskError as e:
                raise e.cause if isinstance(e.cause, Exception) else ClusterError(str(e)) from None
            except ray.exceptions.RayActorError as e:
                raise ClusterError(
                    f"a judge actor died more than --actor-restarts={self.cfg.max_restarts} times "
                    f"({str(e).splitlines()[0]})"
                ) from None
            done[r["index"]] = r
            while turn in done:
                r = self._commit(done.pop(turn), anchor, method, calls[turn])
                values[turn] = r["value"]
                self._account(r)
                if on_result is not None:
                    on_result(r)
                turn += 1
            self.refresh_alive()
        self.seconds += time.perf_counter() - t0
        return values

    def _commit(self, r: dict[str, Any], anchor: str, method: str, args: tuple) -> dict[str, Any]:
        """Commit a finished unit; if an earlier unit committed one of its answers meanwhile (the two share a
        query), run it again, now reading that answer from the cache as one process would have."""
        written = self._get(self.cache.put_unit.remote(r["rows"]), 600.0, "committing answers")
        if written is None:
            self.recomputed += 1
            actor = self.actors[int(r["slot"])]
            r = self._get(actor.run.remote(r["index"], anchor, method, tuple(args)), LOAD_TIMEOUT_S, "a unit")
            written = self._get(self.cache.put_unit.remote(r["rows"]), 600.0, "committing answers")
            if written is None:
                raise ClusterError("the answer cache changed while a unit was being run again")
        r["written"] = written
        return r

    def _account(self, r: dict[str, Any]) -> None:
        for k, v in r["stats"].items():
            self.stats[k] = self.stats.get(k, 0) + v
        self.written += int(r["written"])
        k = int(r["slot"])
        self.pids[k].add(int(r["pid"]))  # a restarted actor has a new process
        self.units[k] += 1
        self.unit_seconds[k] += float(r["seconds"])
        self.unit_cpu[k] += float(r.get("cpu_seconds", 0.0))

    @property
    def restarts(self) -> int:
        return sum(len(p) - 1 for p in self.pids)

    def report(self) -> dict[str, Any]:
        """What the labeler's report records about the cluster run."""
        try:
            cache = ray.get(self.cache.stats.remote(), timeout=60)
        except ray.exceptions.RayError:
            cache = {}
        return {
            **self.cfg.describe(),
            "actors_alive": self.refresh_alive(force=True),
            "actor_restarts": self.restarts,
            "units": sum(self.units),
            "units_per_actor": list(self.units),
            "busy_seconds_per_actor": [round(s, 3) for s in self.unit_seconds],
            "cpu_seconds_per_actor": [round(s, 3) for s in self.unit_cpu],
            "pool_seconds": round(self.seconds, 3),
            "answers_committed": self.written,
            "units_run_again": self.recomputed,
            "cache_entries": cache.get("entries"),
            "cache_entries_before": self.cache_start.get("entries"),
            "judge_stats": dict(self.stats),
        }

    def close(self) -> None:
        for a in getattr(self, "actors", []):
            try:
                ray.get(a.close.remote(), timeout=30)
            except ray.exceptions.RayError:
                pass
            ray.kill(a, no_restart=True)
        if getattr(self, "cache", None) is not None:
            try:
                ray.get(self.cache.close.remote(), timeout=30)
            except ray.exceptions.RayError:
                pass
            ray.kill(self.cache, no_restart=True)
            self.cache = None

    def __enter__(self) -> JudgePool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
