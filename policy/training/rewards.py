"""Reward sources for offline RL: ``sparse``, ``coren``, ``trca``, ``potential`` or any stored
``METHOD.CHANNEL``.

- ``sparse``: only the environment's outcome: 1.0 on the last step of a successful episode, else 0.
- ``coren``: ``labels["coren"]["ensemble"]`` per step (the COREN labeler's ensembled reward).
- ``trca``: ``labels["trca"]["total"]`` per step (TRCA's r = (1-λ) r^F + λ r^B).
- ``potential``: ``labels["potential"]["delta"]`` per step (the success-model potential's ΔΦ).
- ``METHOD.CHANNEL``: any stored channel, e.g. ``coren.contextual``, ``trca.breakthrough``.

Dense sources add the terminal success reward (``terminal_bonus``, default 1.0), as TRCA's returns do, so the
sparse outcome is never lost. A step without the asked channel is an error naming the trajectory and step.

``detour_penalty`` > 0 (any source): a step that changed the world and is part of a loop in the episode's
world states (it is not on the loop-erased path of :mod:`policy.training.loop_erasure`: what it did was undone
before the episode ended, e.g. taking an object back from where it belongs) gets ``-detour_penalty`` instead
of its reward. A dense labeler that pays every completed sub-goal pays a take/put cycle again and again; the
cycle's net effect on the world is nil, so what was paid for it is spurious. A step that changed no world
part (reading, examining) keeps its label: penalising it marked a third of the gold steps of successful
CookingWorld episodes as detours (the recipe is read in a step that changes nothing).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from models.trajectory import Step, Trajectory
from policy.training.loop_erasure import detour_steps

ALIASES = {"coren": ("coren", "ensemble"), "trca": ("trca", "total"), "potential": ("potential", "delta")}


class RewardError(ValueError):
    """A reward source that does not exist or is missing from the data."""


@dataclass(frozen=True)
class RewardSpec:
    name: str  # as the user wrote it
    method: str | None  # None: sparse
    channel: str | None
    terminal_bonus: float = 1.0
    scale: float = 1.0
    detour_penalty: float = 0.0

    @property
    def is_sparse(self) -> bool:
        return self.method is None


def parse_reward(
    text: str, *, terminal_bonus: float = 1.0, scale: float = 1.0, detour_penalty: float = 0.0
) -> RewardSpec:
    if not detour_penalty >= 0:
        raise RewardError(f"detour penalty must be >= 0, got {detour_penalty}")
    t = text.strip()
    if t == "sparse":
        return RewardSpec("sparse", None, None, terminal_bonus, scale, detour_penalty)
    if t in ALIASES:
        m, c = ALIASES[t]
        return RewardSpec(t, m, c, terminal_bonus, scale, detour_penalty)
    method, dot, channel = t.partition(".")
    if not dot or not method or not channel:
        raise RewardError(
            f"unknown reward {text!r}: expected sparse, coren, trca, potential or METHOD.CHANNEL "
            "(e.g. coren.contextual, trca.breakthrough)"
        )
    return RewardSpec(t, method, channel, terminal_bonus, scale, detour_penalty)


def label_value(step: Step, method: str, channel: str, where: str) -> float:
    chans = step.labels.get(method)
    if chans is None or channel not in chans:
        have = sorted(f"{m}.{c}" for m, cs in step.labels.items() for c in cs)
        raise RewardError(
            f"{where}: no label {method}.{channel} (this step has: {', '.join(have) or 'none'}); "
            f"label the data first ('edgejudge label {method} ...') or use --reward sparse"
        )
    value = chans[channel]
    if isinstance(value, list):
        raise RewardError(f"{where}: label {method}.{channel} is a list, expected one number per step")
    return float(value)


def step_rewards(traj: Trajectory, spec: RewardSpec) -> list[float]:
    """One reward per step of ``traj`` under ``spec``."""
    n = len(traj.steps)
    terminal = [1.0 if (traj.success and i == n - 1) else 0.0 for i in range(n)]
    if spec.is_sparse:
        out = terminal
    else:
        assert spec.method is not None and spec.channel is not None
        out = []
        for i, s in enumerate(traj.steps):
            dense = label_value(s, spec.method, spec.channel, f"trajectory {traj.id} step {i}")
            out.append(spec.scale * dense + spec.terminal_bonus * terminal[i])
    if spec.detour_penalty > 0:
        for i in detour_steps(traj):
            out[i] = -spec.detour_penalty + out[i] * terminal[i]  # a final step keeps its success reward
    return out


def step_channel(traj: Trajectory, method: str, channel: str) -> list[float]:
    """A stored per-step channel (e.g. TRCA's ``advantage`` for AWR)."""
    return [
        label_value(s, method, channel, f"trajectory {traj.id} step {i}") for i, s in enumerate(traj.steps)
    ]


def rewards_without_detours(traj: Trajectory, spec: RewardSpec) -> list[float] | None:
    """The step rewards of ``traj`` without the detour penalty (None when there is none to take off)."""
    return step_rewards(traj, dataclasses.replace(spec, detour_penalty=0.0)) if spec.detour_penalty else None
