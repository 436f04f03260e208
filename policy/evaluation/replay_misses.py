"""Which wrong decisions cost the episode: each miss of :func:`policy.evaluation.decisions.decision_accuracy`
replayed in its world.

Agreement with one gold path cannot tell a harmless miss (another acceptable action, a detour the policy
recovers from) from a fatal one (an early end, a wrong object put where it cannot be taken back). Where the
file's episodes name a simulated world (``meta``: ``env``, ``params``, ``split``, ``env_seed``, as ``edgejudge
collect`` writes), every miss is replayed: the episode is reset, the logged actions before the step are taken
again, the policy's pick is taken instead of the logged action, and the policy plays on with the generic loop
guard, as a rollout client runs it, until the episode ends or reaches ``max_steps`` (counted from the reset).

* **recovered**: the episode still succeeds;
* **fatal**: it ends without success, or runs out of steps;
* **not replayed**: the replayed prefix did not reach the logged state (a different text where the adapter
  replays exactly, the logged action or the pick missing from the candidates, an episode that ended early),
  or the file names no simulated world.

Nothing here knows a world: the verbs are read from the actions (:func:`models.actions.verb_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from edge.policies import EpisodeMemory, Policy
from models.actions import verb_of
from models.trajectory import Trajectory
from policy.evaluation.decisions import Miss


@dataclass
class MissOutcomes:
    """Per verb of the logged action: how many of its misses each outcome got."""

    recovered: int = 0
    fatal: int = 0
    not_replayed: int = 0

    @property
    def misses(self) -> int:
        return self.recovered + self.fatal + self.not_replayed

    def add(self, outcome: str) -> None:
        """Count one miss as ``outcome``: ``recovered``, ``fatal`` or ``not_replayed``."""
        setattr(self, outcome, getattr(self, outcome) + 1)

    def to_dict(self) -> dict[str, int]:
        return {"misses": self.misses, "recovered": self.recovered, "fatal": self.fatal,
                "not_replayed": self.not_replayed}  # fmt: skip


World = Any
"""An opened world: :class:`policy.worlds.adapters.EnvAdapter`'s ``reset``/``step``/``invalid`` and
``exact_replay``."""


def world_of(meta: Mapping[str, Any]) -> tuple[str, str, str, Any] | None:
    """(env, params, split, episode id) of a trajectory an adapter recorded; None where the log names none."""
    if not meta.get("env") or meta.get("split") is None or meta.get("env_seed") is None:
        return None
    return str(meta["env"]), str(meta.get("params") or ""), str(meta["split"]), meta["env_seed"]


def replay_miss(world: World, policy: Policy, t: Trajectory, miss: Miss, split: str, episode: Any) -> str:
    """The outcome of one miss (see the module docstring); ``policy`` plays on after the pick."""
    state = world.reset(episode, split)
    memory = EpisodeMemory()
    for s in t.steps[: miss.step]:
        if state.done or s.action not in state.candidates:
            return "not_replayed"
        state = world.step(s.action)
        memory.record(s.action, state.observation)
    logged = t.steps[miss.step]
    exact = getattr(world, "exact_replay", True)
    if state.done or (exact and state.observation != logged.observation) or miss.pick not in state.candidates:
        return "not_replayed"
    state = world.step(miss.pick)
    memory.record(miss.pick, state.observation)
    policy.reset()
    while not state.done:
        idx = policy.act(state.instruction, state.observation, state.candidates, memory)
        if not (isinstance(idx, int) and 0 <= idx < len(state.candidates)):
            state = world.invalid()
            continue
        action = state.candidates[idx]
        state = world.step(action)
        memory.record(action, state.observation)
    return "recovered" if state.success else "fatal"


def replay_misses(
    policy_for: Callable[[str, str], Policy],
    trajectories: Sequence[Trajectory],
    misses: Sequence[Miss],
    open_world: Callable[[str, str], World],
) -> dict[str, MissOutcomes]:
    """Every miss's outcome, per verb of the logged action. ``open_world(env, params)`` opens a world (kept
    open for the misses of its episodes, closed at the end); ``policy_for(env, params)`` is the policy that
    plays on there (the loop-guarded policy of that world)."""
    out: dict[str, MissOutcomes] = {}
    worlds: dict[tuple[str, str], World] = {}
    try:
        for miss in misses:
            t = trajectories[miss.episode]
            where = world_of(t.meta)
            tally = out.setdefault(verb_of(t.steps[miss.step].action), MissOutcomes())
            if where is None:
                tally.add("not_replayed")
                continue
            env, params, split, episode = where
            if (env, params) not in worlds:
                worlds[(env, params)] = open_world(env, params)
            tally.add(replay_miss(worlds[(env, params)], policy_for(env, params), t, miss, split, episode))
    finally:
        for w in worlds.values():
            w.close()
    return out


def outcome_table(outcomes: Mapping[str, MissOutcomes], decisions: Mapping[str, tuple[int, int]]) -> str:
    """A markdown table per verb (most misses first): misses and their outcomes, and the share of decisions
    that were right or recovered (``decisions``: verb -> (decisions, right))."""
    lines = [
        "| verb | decisions | misses | recovered | fatal | not replayed | right or recovered |",
        "|---|---|---|---|---|---|---|",
    ]
    for verb, o in sorted(outcomes.items(), key=lambda kv: (-kv[1].misses, kv[0])):
        lines.append(_row(verb, *decisions.get(verb, (0, 0)), o))
    total = MissOutcomes(*(sum(getattr(o, f.name) for o in outcomes.values()) for f in fields(MissOutcomes)))
    n_all, right_all = (sum(d[i] for d in decisions.values()) for i in (0, 1))
    lines.append(_row("**all**", n_all, right_all, total))
    return "\n".join(lines)


def _row(verb: str, n: int, right: int, o: MissOutcomes) -> str:
    share = f"{(right + o.recovered) / n:.3f}" if n else "n/a"
    return f"| {verb} | {n} | {o.misses} | {o.recovered} | {o.fatal} | {o.not_replayed} | {share} |"
