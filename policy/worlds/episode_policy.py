"""The episode policy: a policy with the wrappers a client composes over it for one world
(:mod:`edge.policies`).

An adapter names its opt-in task strategies as ``module:Class`` (``EnvAdapter.strategies``, e.g. TextWorld's
placement search, :mod:`policy.worlds.twx_placement`); :func:`strategy_class` loads one,
:func:`episode_policy` composes the strategy or the generic loop guard over a policy, keyed by the adapter's
world key.
"""

from __future__ import annotations

import importlib
from typing import Any

from edge.policies import Guarded
from policy.worlds.adapters import EnvError, EnvSpec, adapter_class


def strategy_class(spec: EnvSpec, name: str) -> type:
    """The opt-in task strategy ``name`` of ``spec``'s adapter; EnvError listing the ones it has."""
    known = adapter_class(spec.adapter).strategies
    if name not in known:
        valid = ", ".join(known) if known else "none"
        raise EnvError(f"unknown strategy {name!r} for {spec.name}: expected one of {valid}")
    module, _, attr = known[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def episode_policy(
    policy: Any, spec: EnvSpec, *, loop_guard: bool = False, strategy: str | None = None
) -> Any:
    """``policy`` with the episode wrappers a client composes over it (:mod:`edge.policies`): an adapter's
    task ``strategy`` (which keeps the loop guard), else the generic loop guard, keyed by the adapter's world
    key; the bare policy (its argmax) with neither."""
    key = adapter_class(spec.adapter).world_key
    if strategy:
        return strategy_class(spec, strategy)(policy, key)
    if loop_guard:
        return Guarded(policy, key)
    return policy
