"""The cluster options of ``label coren``, ``label trca`` and ``rubrics build`` (Ray is not imported)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

LOCAL = "local"


class ClusterError(RuntimeError):
    """Ray is missing, cannot start, or the cluster cannot run the judge actors as asked."""


@dataclass(frozen=True)
class ClusterConfig:
    address: str | None = None
    """None: start a local Ray; otherwise the address of a running cluster (``auto``, ``HOST:PORT``)."""
    judge_actors: int = 2
    """Judge actors, each holding one loaded judge."""
    cpus_per_actor: float = 1.0
    """CPUs reserved per actor (its llama.cpp threads: ``--threads``)."""
    gpus_per_actor: float = 0.0
    """GPUs reserved per actor (with a CUDA build of llama-cpp-python and ``--gpu-layers``)."""
    max_restarts: int = 3
    """Restarts of a judge actor that died (Ray's ``max_restarts``); its unit in flight is retried."""

    def describe(self) -> dict[str, Any]:
        return {
            "address": self.address or LOCAL,
            "judge_actors": self.judge_actors,
            "cpus_per_actor": self.cpus_per_actor,
            "gpus_per_actor": self.gpus_per_actor,
            "max_restarts": self.max_restarts,
        }


def require_ray() -> None:
    if importlib.util.find_spec("ray") is None:
        raise ClusterError("--ray needs Ray, which is not installed: pip install 'edgejudge[cluster]'")


def cluster_config(
    ray: str | None, judge_actors: int, cpus_per_actor: float, gpus_per_actor: float, max_restarts: int
) -> ClusterConfig | None:
    """The options as a config; None without ``--ray``. ``--ray`` alone joins ``$RAY_ADDRESS`` when it is set
    and starts a local Ray otherwise."""
    if ray is None:
        return None
    require_ray()
    if ray == LOCAL:
        address = None
    elif ray:
        address = ray
    else:
        address = os.environ.get("RAY_ADDRESS") or None
    return ClusterConfig(address, judge_actors, cpus_per_actor, gpus_per_actor, max_restarts)


def cluster_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--ray [ADDRESS]``, ``--judge-actors``, ``--cpus-per-actor``, ``--gpus-per-actor`` and
    ``--actor-restarts`` to a click command."""
    options = [
        click.option(
            "--ray",
            "ray",
            is_flag=False,
            flag_value="",
            default=None,
            metavar="[ADDRESS]",
            help="Run the judge work on Ray judge actors: alone, join $RAY_ADDRESS if set, else start a "
            "local Ray; 'local' always starts one; or the ADDRESS of a running cluster (needs "
            "edgejudge[cluster]). Give it last or as --ray=ADDRESS.",
        ),
        click.option(
            "--judge-actors",
            default=2,
            show_default=True,
            type=click.IntRange(1, 4096),
            help="With --ray: judge actors, each holding one loaded judge.",
        ),
        click.option(
            "--cpus-per-actor",
            default=1.0,
            show_default=True,
            type=click.FloatRange(0.0, 1024.0),
            help="With --ray: CPUs reserved per judge actor (match --threads).",
        ),
        click.option(
            "--gpus-per-actor",
            default=0.0,
            show_default=True,
            type=click.FloatRange(0.0, 64.0),
            help="With --ray: GPUs reserved per judge actor (CUDA build of llama-cpp-python, --gpu-layers).",
        ),
        click.option(
            "--actor-restarts",
            default=3,
            show_default=True,
            type=click.IntRange(0, 1000),
            help="With --ray: restarts of a judge actor that died; its unit in flight is retried.",
        ),
    ]
    for opt in reversed(options):
        f = opt(f)
    return f
