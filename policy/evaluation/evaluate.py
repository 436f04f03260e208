"""Evaluation by real rollouts in any environment adapter (:mod:`policy.worlds.adapters`): success rate
(Wilson 95 % CI), mean steps, invalid actions, per-action latency.

What is evaluated is any policy (:mod:`edge.policies`), with or without the episode wrappers composed over
it (:func:`policy.worlds.episode_policy.episode_policy`): a bundle (:class:`edge.bundle_policy.BundlePolicy`:
the daemon's runtime, torch-free), a checkpoint (:class:`policy.evaluation.torch_policy.TorchPolicy`), the
LLM-as-agent baseline (:class:`policy.evaluation.llm_policy.LLMPolicy`), the daemon
(:class:`edge.edge_policy.EdgePolicy`) or the uniform random baseline here. The states are the adapter's
composed state texts, exactly what the training data holds.

Episodes use the first N episode ids of the split in the environment's own order, so every policy meets the
same games. An answer outside the candidates is counted as invalid and goes to the adapter's ``invalid()``
(the step is spent). This module imports neither torch nor the LLM.
"""

from __future__ import annotations

import math
import os
import random
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from edge.policies import EpisodeMemory, Memory, Policy, ScoringPolicy, Timed
from policy.worlds.adapters import EnvAdapter, EnvSpec, adapter_class, open_env


class RandomPolicy(ScoringPolicy):
    """Uniform over the admissible actions: the floor every policy must beat.

    Its scores are uniform random numbers (a random ranking, for wrappers that rank candidates by score).
    Unlike the other policies it also defines ``act``: one draw per step, so a seed gives the same episodes
    as the recorded random baselines."""

    name = "random"

    def __init__(self, seed: int = 0):
        self._rng = random.Random(seed)

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> list[float]:
        return [self._rng.random() for _ in candidates]

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int:
        return self._rng.randrange(len(candidates))


def open_policy(path: str | os.PathLike[str], *, threads: int | None = None) -> ScoringPolicy:
    """The policy of a bundle (``manifest.json``: onnxruntime only, torch never imported; ``threads`` for
    onnxruntime, default ``$EDGEJUDGE_THREADS``) or a training checkpoint (``checkpoint.json``); ValueError
    naming the path for anything else."""
    p = Path(path)
    if not p.exists():
        raise ValueError(
            f"{p}: does not exist (a checkpoint from 'edgejudge train' or a bundle from 'edgejudge export')"
        )
    if (p / "manifest.json").is_file():
        from edge.bundle_policy import BundlePolicy

        return BundlePolicy(p, threads=threads)
    if (p / "checkpoint.json").is_file():
        from policy.evaluation.torch_policy import TorchPolicy

        return TorchPolicy(p)
    raise ValueError(f"{p}: neither a bundle (manifest.json) nor a checkpoint (checkpoint.json)")


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95 % by default)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class EvalResult:
    policy: str
    env: str
    params: str
    split: str
    episodes: int
    successes: int
    success_rate: float
    ci95: tuple[float, float]
    mean_steps: float
    mean_steps_success: float | None
    invalid_action_rate: float
    actions: int
    latency_ms_mean: float
    latency_ms_p50: float
    latency_ms_p95: float
    seeds: list[int] = field(default_factory=list)
    per_episode: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self, *, episodes: bool = False) -> dict[str, Any]:
        d = asdict(self)
        d["ci95"] = list(self.ci95)
        if not episodes:
            d.pop("per_episode")
        return d

    def summary(self) -> str:
        lo, hi = self.ci95
        return (
            f"{self.policy}: success {self.success_rate:.1%} [{lo:.1%}, {hi:.1%}] over {self.episodes} "
            f"{self.env} {self.split} episodes; mean steps {self.mean_steps:.1f}; invalid actions "
            f"{self.invalid_action_rate:.1%}; {self.latency_ms_mean:.2f} ms/action "
            f"(p50 {self.latency_ms_p50:.2f}, p95 {self.latency_ms_p95:.2f})"
        )


def evaluate(
    policy: Policy,
    spec: EnvSpec,
    *,
    split: str = "test",
    episodes: int = 20,
    max_steps: int = 40,
    progress: bool | None = None,
    env: EnvAdapter | None = None,
    seeds: Sequence[int | str] | None = None,
    trace: bool = False,
) -> EvalResult:
    """Roll ``policy`` out for ``episodes`` real episodes on the first ids of ``split`` (or on ``seeds``); the
    latency is the wall time of each ``act`` (:class:`edge.policies.Timed` over the policy). With ``trace``
    every episode record also holds its steps: the action taken (None for an answer outside the
    candidates), how many candidates there were, the world's feedback and the score after it."""
    from models.progress import progress as progress_bar

    cls = adapter_class(spec.adapter)
    if split not in cls.splits:
        raise ValueError(f"unknown split {split!r} for {spec.name}: expected one of {', '.join(cls.splits)}")
    if not cls.needs_simulator and env is None:
        raise ValueError(f"{spec.name} replays logged episodes: evaluating a policy needs a simulator")
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    own = env is None
    env = env or open_env(spec, step_limit=max_steps)
    timed = Timed(policy)
    per_episode: list[dict[str, Any]] = []
    invalid = actions = 0
    try:
        pool = list(seeds) if seeds else env.episodes(split)
        order = [pool[i % len(pool)] for i in range(episodes)]
        with progress_bar(episodes, enabled=progress, unit="ep", desc=f"eval {policy.name}") as bar:
            memory = EpisodeMemory()
            for seed in order:
                timed.reset()
                memory.clear()
                state = env.reset(seed, split)
                steps: list[dict[str, Any]] = []
                while not state.done:
                    idx = timed.act(state.instruction, state.observation, state.candidates, memory)
                    actions += 1
                    offered = len(state.candidates)
                    if not (isinstance(idx, int) and 0 <= idx < offered):
                        invalid += 1  # an answer outside the candidates: the adapter says what it does
                        action = None
                        state = env.invalid()
                    else:
                        action = state.candidates[idx]
                        state = env.step(action)
                        memory.record(action, state.observation)
                    if trace:
                        steps.append(
                            {"action": action, "candidates": offered, "feedback": state.feedback,
                             "score": state.score}
                        )  # fmt: skip
                record = {
                    "seed": seed,
                    "success": state.success,
                    "steps": env.num_steps,
                    "score": state.score,
                }
                per_episode.append(record | ({"trace": steps} if trace else {}))
                bar.update(1)
                done = len(per_episode)
                bar.set_postfix(success=f"{sum(e['success'] for e in per_episode) / done:.0%}")
    finally:
        if own:
            env.close()
    succ = sum(1 for e in per_episode if e["success"])
    steps = [e["steps"] for e in per_episode]
    steps_ok = [e["steps"] for e in per_episode if e["success"]]
    ms = timed.ms
    nan = float("nan")
    return EvalResult(
        policy=policy.name,
        env=spec.name,
        params=spec.params,
        split=split,
        episodes=episodes,
        successes=succ,
        success_rate=succ / episodes,
        ci95=wilson_interval(succ, episodes),
        mean_steps=statistics.fmean(steps),
        mean_steps_success=statistics.fmean(steps_ok) if steps_ok else None,
        invalid_action_rate=invalid / max(actions, 1),
        actions=actions,
        latency_ms_mean=statistics.fmean(ms) if ms else nan,
        latency_ms_p50=nan if not ms else timed.percentile(0.5),
        latency_ms_p95=nan if not ms else timed.percentile(0.95),
        seeds=order,
        per_episode=per_episode,
    )
