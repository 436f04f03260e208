"""Collection with a deployed bundle: a simulated world produces what a robot fleet's logs would hold.

The bundle acts as on a robot (in process through onnxruntime, or through edge-serve with the same client),
with the client's loop guard and the exploration a user sets (a softmax draw at ``temperature``, or a uniform
draw with probability ``epsilon``), and every finished episode goes through the robot's own log writer
(:class:`edge.episode_log.EpisodeLog`), appended to the file: a log that grows round after round. Each step
also keeps the world's ground truth under ``info`` (score, progress, whether the step was the next gold
action), as scripted collection does, to measure labels only.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge.episode_log import EpisodeLog
from edge.policies import EpisodeMemory, EpsilonGreedy, Sampled
from models.trajectory import Trajectory
from policy.worlds.adapters import EnvAdapter, EnvSpec, open_env
from policy.worlds.adapters.recorded import check_world, recorded_world
from policy.worlds.collect import ground_truth
from policy.worlds.episode_policy import episode_policy


@dataclass(frozen=True)
class DeployedConfig:
    env: EnvSpec
    bundle: Path
    split: str = "train"
    episodes: int = 10
    max_steps: int = 40
    seed: int = 0
    temperature: float | None = None
    """A draw from softmax(scores / T) at every step (None: the argmax)."""
    epsilon: float = 0.0
    """A uniform draw with this probability at every step (with the argmax otherwise)."""
    loop_guard: bool = True
    serve: bool = False
    """Through edge-serve (a daemon started for the run) instead of in process."""
    threads: int | None = None

    def validate(self) -> None:
        if self.episodes < 1:
            raise ValueError(f"episodes must be >= 1, got {self.episodes}")
        if self.temperature is not None and not self.temperature > 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {self.epsilon}")
        if self.temperature is not None and self.epsilon > 0:
            raise ValueError("explore with a temperature or an epsilon, not both")
        if not (self.bundle / "manifest.json").is_file():
            raise ValueError(f"{self.bundle}: not a bundle (from 'edgejudge export'): no manifest.json")

    @property
    def exploration(self) -> dict[str, Any]:
        return (
            {"temperature": self.temperature} if self.temperature is not None else {"epsilon": self.epsilon}
        )


def _policy(cfg: DeployedConfig, stack: ExitStack) -> Any:
    """The bundle as a robot runs it: in process, or edge-serve and its client."""
    if cfg.serve:
        from edge.client import EdgeClient
        from edge.edge_policy import EdgePolicy
        from edge.launch import served

        endpoint = stack.enter_context(served(cfg.bundle, threads=cfg.threads or 1))
        return EdgePolicy(stack.enter_context(EdgeClient(endpoint, timeout=60, retries=2)))
    from edge.bundle_policy import BundlePolicy

    return BundlePolicy(cfg.bundle, threads=cfg.threads)


def collect_deployed(
    cfg: DeployedConfig, log: EpisodeLog, env: EnvAdapter | None = None
) -> Iterator[Trajectory]:
    """Run ``cfg.episodes`` episodes of the bundle on seeds of ``cfg.split`` drawn without replacement
    (cycling when more are asked for), each appended to ``log`` as it ends; yields each."""
    cfg.validate()
    world = recorded_world(cfg.bundle)
    check_world(world, cfg.env, f"the bundle {cfg.bundle}")
    rng = random.Random(cfg.seed)
    with ExitStack() as stack:
        policy = _policy(cfg, stack)
        if cfg.temperature is not None:
            policy = Sampled(policy, cfg.temperature, cfg.seed)
        elif cfg.epsilon > 0:
            policy = EpsilonGreedy(policy, cfg.epsilon, cfg.seed)
        policy = episode_policy(policy, cfg.env, loop_guard=cfg.loop_guard)
        stack.callback(policy.close)
        if env is None:
            env = stack.enter_context(open_env(cfg.env, step_limit=cfg.max_steps))
        seeds = env.episodes(cfg.split)
        order = rng.sample(seeds, len(seeds))
        for i in range(cfg.episodes):
            yield _episode(cfg, env, policy, log, order[i % len(order)])


def _episode(cfg: DeployedConfig, env: EnvAdapter, policy: Any, log: EpisodeLog, env_seed: Any) -> Trajectory:
    policy.reset()
    memory = EpisodeMemory()
    state = env.reset(env_seed, cfg.split, gold=True)
    gold = env.gold_path() or []
    gold_ptr = invalid = 0
    meta = {"env": cfg.env.name, "params": cfg.env.params, "split": cfg.split, "env_seed": env_seed}
    with log.episode(state.instruction, task_type=cfg.env.task, meta=meta) as ep:
        while not state.done:
            idx = policy.act(state.instruction, state.observation, state.candidates, memory)
            if not (isinstance(idx, int) and 0 <= idx < len(state.candidates)):
                invalid += 1  # an answer outside the candidates: the adapter says what it does
                state = env.invalid()
                continue
            action = state.candidates[idx]
            on_gold = gold_ptr < len(gold) and action == gold[gold_ptr]
            gold_ptr += on_gold
            nxt = env.step(action)
            info = ground_truth(state, nxt, on_gold, gold_ptr)
            reward = 1.0 if nxt.done and nxt.success else 0.0
            ep.step(state.observation, state.candidates, action, nxt.observation, reward=reward, info=info)
            memory.record(action, nxt.observation)
            state = nxt
        run = {"behaviour": "policy", **cfg.exploration, "loop_guard": cfg.loop_guard, "serve": cfg.serve}
        return ep.end(state.success, meta={**run, "invalid_actions": invalid, "final_score": state.score})
