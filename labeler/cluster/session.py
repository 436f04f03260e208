"""Start a local Ray with explicit, small resources, or join a running cluster; disconnect at the end."""

from __future__ import annotations

import contextlib
import logging
import math
import os
from collections.abc import Iterator

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
    if not ray.is_initialized():
        if cfg.address is None:
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
        }
    finally:
        if started:
            ray.shutdown()
