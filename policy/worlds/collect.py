"""Data collection in any environment adapter with scripted behaviours, deterministic for a given seed.

Behaviours (chosen per episode from a weighted mixture, so the share of successful episodes can be set):

- ``gold-noise``: follow the gold path; at each step, with probability ``noise``, take a uniformly random
  admissible action instead (COREN-style). The gold pointer advances only when the gold action is taken;
  when the next gold action is not admissible (the noise changed the state), a random admissible action is
  taken. Random steps choose among the adapter's ``noise_candidates`` (all candidates unless the world says
  otherwise). Once the gold path is exhausted without success, random actions continue until the step limit.
- ``random``: a uniformly random admissible action at every step.

:func:`pilot_mixture` picks the mixture for a target success rate: a mixture's success rate is the weighted
mean of its behaviours' rates, so a short pilot measures the two behaviours' rates and the mixture (in steps
of 0.05) whose expected rate is closest to the target is chosen.

The environment's own reward in the log is sparse: 1.0 on the last step of a successful episode, else 0.0.
Ground truth that a real robot log would not have (score, score progress, gold-path membership) goes under
each step's ``info`` and is used only to measure label quality. Each trajectory's ``meta`` records the
environment (name, parameters, episode id) and its state format and layout, which training, evaluation,
labeling and serving read back.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from models.trajectory import Step, Trajectory
from policy.worlds.adapters import EnvAdapter, EnvError, EnvSpec, EnvState, open_env

BEHAVIOURS = ("gold-noise", "random")


class BehaviourError(ValueError):
    pass


def parse_behaviour(spec: str) -> dict[str, float]:
    """``gold-noise`` | ``random`` | ``gold-noise=0.3,random=0.7`` → normalised mixture weights."""
    weights: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, eq, w = part.partition("=")
        name = name.strip()
        if name not in BEHAVIOURS:
            raise BehaviourError(f"unknown behaviour {name!r} in {spec!r}: expected {', '.join(BEHAVIOURS)}")
        try:
            weight = float(w) if eq else 1.0
        except ValueError:
            raise BehaviourError(f"bad weight {w!r} for {name!r}: expected a number") from None
        if not weight >= 0:
            raise BehaviourError(f"weight for {name!r} must be >= 0, got {w}")
        weights[name] = weights.get(name, 0.0) + weight
    total = sum(weights.values())
    if not weights or total <= 0:
        raise BehaviourError(f"behaviour {spec!r} has no positive weight")
    return {k: v / total for k, v in weights.items()}


@dataclass(frozen=True)
class CollectConfig:
    env: EnvSpec
    split: str = "train"
    episodes: int = 10
    behaviour: str = "gold-noise"
    noise: float = 0.3
    seed: int = 0
    max_steps: int = 40

    def validate(self) -> dict[str, float]:
        from policy.worlds.adapters import adapter_class

        splits = adapter_class(self.env.adapter).splits
        if self.split not in splits:
            raise EnvError(
                f"unknown split {self.split!r} for {self.env.name}: expected one of {', '.join(splits)}"
            )
        if self.episodes < 1:
            raise ValueError(f"episodes must be >= 1, got {self.episodes}")
        if not 0.0 <= self.noise <= 1.0:
            raise ValueError(f"noise must be in [0, 1], got {self.noise}")
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {self.max_steps}")
        return parse_behaviour(self.behaviour)


def _pick_behaviour(rng: random.Random, mixture: dict[str, float]) -> str:
    names = sorted(mixture)
    return rng.choices(names, weights=[mixture[n] for n in names], k=1)[0]


def ground_truth(state: EnvState, nxt: EnvState, on_gold: bool, gold_ptr: int) -> dict[str, Any]:
    """A step's ``info``: the world's score after it, its progress, whether it was the next gold action (and
    which), the world's feedback. For measuring labels only, never for labeling."""
    return {
        "score": round(nxt.score, 6),
        "progress": round(nxt.score - state.score, 6),
        "gold": on_gold,
        "gold_index": gold_ptr - 1 if on_gold else None,
        "feedback": nxt.feedback,
    }


def run_episode(
    env: EnvAdapter, env_seed: int | str, split: str, behaviour: str, noise: float, rng: random.Random
) -> Trajectory:
    state = env.reset(env_seed, split, gold=True)
    gold = env.gold_path()
    if gold is None:
        if behaviour == "gold-noise":
            raise EnvError(f"{env.spec.name} has no expert path: collect with --behaviour random")
        gold = []
    gold_ptr = 0
    steps: list[Step] = []
    while not state.done:
        expected = gold[gold_ptr] if gold_ptr < len(gold) else None
        follow = behaviour == "gold-noise" and expected in state.candidates and rng.random() >= noise
        if follow and expected is not None:
            action = expected
        else:
            action = rng.choice(env.noise_candidates(state) or state.candidates)
        on_gold = action == expected
        if on_gold:
            gold_ptr += 1
        nxt = env.step(action)
        done_ok = nxt.done and nxt.success
        steps.append(
            Step(
                observation=state.observation,
                action=action,
                candidates=state.candidates,
                next_observation=nxt.observation,
                env_reward=1.0 if done_ok else 0.0,
                info=ground_truth(state, nxt, on_gold, gold_ptr),
            )
        )
        state = nxt
    return Trajectory(
        id=f"{env.spec.task}-{split}-{env_seed}",
        instruction=state.instruction,
        task_type=env.spec.task,
        success=state.success,
        steps=steps,
        meta={
            "env": env.spec.name,
            "params": env.spec.params,
            "state_format": env.state_format,
            "state_layout": env.layout.to_dict(),
            "split": split,
            "env_seed": env_seed,
            "behaviour": behaviour,
            "noise": noise if behaviour == "gold-noise" else None,
            "gold_length": len(gold),
            "final_score": state.score,
        },
    )


def collect(cfg: CollectConfig, env: EnvAdapter | None = None) -> Iterator[Trajectory]:
    """Yield ``cfg.episodes`` trajectories. Episode seeds are drawn without replacement from the split's seeds
    (cycling when more episodes than seeds are asked for); the id carries a repeat suffix in that case."""
    mixture = cfg.validate()
    rng = random.Random(cfg.seed)
    own = env is None
    env = env or open_env(cfg.env, step_limit=cfg.max_steps)
    try:
        seeds = env.episodes(cfg.split)
        order = rng.sample(seeds, len(seeds))
        for i in range(cfg.episodes):
            env_seed = order[i % len(order)]
            behaviour = _pick_behaviour(rng, mixture)
            traj = run_episode(env, env_seed, cfg.split, behaviour, cfg.noise, rng)
            if i >= len(order):
                traj.id += f"-r{i // len(order)}"
            traj.meta["collector_seed"] = cfg.seed
            yield traj
    finally:
        if own:
            env.close()


MIXTURE_STEP = 0.05
"""The grid of gold-noise weights :func:`pilot_mixture` chooses from."""


def mixture_text(gold_weight: float) -> str:
    """The ``--behaviour`` text of the mixture with ``gold_weight`` of gold-noise, the rest random."""
    w = round(gold_weight, 2)
    if w >= 1:
        return "gold-noise"
    if w <= 0:
        return "random"
    return f"gold-noise={w:g},random={round(1 - w, 2):g}"


@dataclass(frozen=True)
class Pilot:
    """What :func:`pilot_mixture` measured and chose."""

    rates: dict[str, float]  # behaviour -> success rate over the pilot's episodes
    episodes: int  # pilot episodes per behaviour
    behaviour: str  # the chosen mixture, as --behaviour text
    expected: float  # its expected success rate
    target: float

    def line(self) -> str:
        measured = ", ".join(f"{b} {r:.0%}" for b, r in self.rates.items())
        return (
            f"pilot ({self.episodes} episodes per behaviour): {measured}; "
            f"chosen --behaviour {self.behaviour} "
            f"(expected success {self.expected:.0%}, target {self.target:.0%})"
        )


def pilot_mixture(cfg: CollectConfig, target: float, episodes: int, env: EnvAdapter) -> Pilot:
    """Collect ``episodes`` pilot episodes with each behaviour (same seed, so the same worlds) and choose the
    mixture whose expected success rate (the weighted mean of the behaviours' rates) is closest to
    ``target``; among equally close ones, the one with the most gold-noise. A world without an expert path
    pilots only ``random``."""
    if not 0.0 <= target <= 1.0:
        raise ValueError(f"target success rate must be in [0, 1], got {target}")
    if episodes < 1:
        raise ValueError(f"pilot episodes must be >= 1, got {episodes}")
    rates: dict[str, float] = {}
    for behaviour in BEHAVIOURS:
        pilot = dataclasses.replace(cfg, behaviour=behaviour, episodes=episodes)
        try:
            trajs = list(collect(pilot, env))
        except EnvError:
            if behaviour == "gold-noise":
                continue  # no expert path
            raise
        rates[behaviour] = sum(t.success for t in trajs) / len(trajs)
    if "gold-noise" not in rates:
        return Pilot(rates, episodes, "random", rates["random"], target)
    g, r = rates["gold-noise"], rates["random"]
    steps = round(1 / MIXTURE_STEP)
    weights = [i / steps for i in range(steps, -1, -1)]  # most gold-noise first: min keeps the first of ties
    w = min(weights, key=lambda w: abs(w * g + (1 - w) * r - target))
    return Pilot(rates, episodes, mixture_text(w), w * g + (1 - w) * r, target)
