"""Start a local Ray with explicit, small resources, or join a running cluster; disconnect at the end.

Before starting a local Ray, the processes an earlier local Ray left behind are reported
(:func:`stale_ray_processes`): when a driver is SIGKILLed its Ray processes die with it, except the two agents
the raylet started (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``). They notice the raylet's death within
seconds but then try to report it to the GCS, which died with the driver, and exit only when that call times
out, about a minute later. A killed process runs no clean-up, so the driver cannot prevent this; the next run
says so instead of leaving it unexplained.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from labeler.cluster.options import ClusterConfig, ClusterError, require_ray

OBJECT_STORE_BYTES = 200 * 1024**2  # answers and trajectories are small; Ray's default takes 30 % of RAM


@contextlib.contextmanager
def ray_session(cfg: ClusterConfig) -> Iterator[dict[str, object]]:
    """Connected to Ray for the ``with`` block; yields a description of the cluster.

    Without an address a local Ray is started with exactly the CPUs and GPUs the judge actors ask for (and no
    dashboard); with one, the driver joins that cluster. A Ray that this process was already connected to
    (e.g. a test's) is used as it is and left running."""
    require_ray()
    import ray

    started = False
    stale: list[StaleProcess] = []
    if not ray.is_initialized():
        if cfg.address is None:
            stale = stale_ray_processes()
            if stale:
                print(f"warning: {describe_stale(stale)}", file=sys.stderr, flush=True)
            cpus = max(1, math.ceil(cfg.judge_actors * cfg.cpus_per_actor))
            gpus = math.ceil(cfg.judge_actors * cfg.gpus_per_actor)
            kwargs: dict[str, object] = {
                "address": "local",
                "num_cpus": cpus,
                "num_gpus": gpus,
                "include_dashboard": False,
                "object_store_memory": OBJECT_STORE_BYTES,
            }
        else:
            kwargs = {"address": cfg.address}
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            ray.init(**kwargs, log_to_driver=False, logging_level=logging.ERROR, configure_logging=True)
        except (ConnectionError, RuntimeError, ValueError) as e:
            where = cfg.address or "a local Ray"
            raise ClusterError(f"cannot start or join {where}: {str(e).splitlines()[0]}") from None
        started = True
    try:
        res = ray.cluster_resources()
        yield {
            "address": cfg.address or "local",
            "nodes": len([n for n in ray.nodes() if n.get("Alive")]),
            "cpus": float(res.get("CPU", 0.0)),
            "gpus": float(res.get("GPU", 0.0)),
            "stale_processes": [p.pid for p in stale],
        }
    finally:
        if started:
            ray.shutdown()


@dataclass(frozen=True)
class StaleProcess:
    pid: int
    name: str
    raylet_pid: int


def stale_ray_processes(proc: str = "/proc") -> list[StaleProcess]:
    """This user's Ray processes (``ray::...``) whose raylet is gone: what a killed driver's local Ray left.

    A process a raylet starts is its child, and most carry its pid (``RAY_RAYLET_PID``); one whose raylet no
    longer runs belongs to no live Ray. Where the variable is missing (the agents of some Ray versions) the
    parent decides: an orphaned ``ray::`` process (its parent no raylet and no Ray process) is stale, with
    ``raylet_pid`` 0 (unknown). Linux only (reads ``/proc``); elsewhere, or unreadable, nothing is found."""
    out: list[StaleProcess] = []
    try:
        pids = [int(d) for d in os.listdir(proc) if d.isdigit()]
    except OSError:
        return out
    uid = os.getuid()
    for pid in pids:
        base = os.path.join(proc, str(pid))
        try:
            if os.stat(base).st_uid != uid:
                continue
            with open(os.path.join(base, "cmdline"), "rb") as f:
                name = f.read().split(b"\0", 1)[0].decode(errors="replace").strip()
            if not name.startswith("ray::"):
                continue
            with open(os.path.join(base, "environ"), "rb") as f:
                env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
            raylet = int(env.get(b"RAY_RAYLET_PID", b"0"))
        except (OSError, ValueError):
            continue
        if raylet > 0:
            if not _is_raylet(raylet, proc):
                out.append(StaleProcess(pid, name, raylet))
        else:
            parent = _parent(pid, proc)
            if parent is not None and not _is_raylet(parent, proc) and not _is_ray(parent, proc):
                out.append(StaleProcess(pid, name, 0))
    return out


def _parent(pid: int, proc: str) -> int | None:
    try:
        with open(os.path.join(proc, str(pid), "stat")) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _is_ray(pid: int, proc: str) -> bool:
    try:
        with open(os.path.join(proc, str(pid), "cmdline"), "rb") as f:
            return f.read().startswith(b"ray::")
    except OSError:
        return False


def _is_raylet(pid: int, proc: str) -> bool:
    try:
        with open(os.path.join(proc, str(pid), "cmdline"), "rb") as f:
            exe = f.read().split(b"\0", 1)[0]
    except OSError:
        return False
    return os.path.basename(exe) == b"raylet"


def describe_stale(stale: list[StaleProcess]) -> str:
    """One line for the user: what is left, why, and what to do."""
    procs = ", ".join(f"{p.name} (pid {p.pid})" for p in stale)
    return (
        f"{len(stale)} process(es) of an earlier local Ray whose driver was killed still run: {procs}. "
        "Ray's agents end by themselves about a minute after their raylet died; this run does not use them "
        "(kill those pids to end them now)."
    )
