"""A minimal environment adapter for your own world: the replay of a robot's skill log.

Copy this file, change the log format to yours (``_read``) and the state parts to what your robot reports
(``LAYOUT`` and ``compose``), and name it to edgejudge::

    export EDGEJUDGE_ENVS=skilllog=skill_log:SkillLogAdapter PYTHONPATH=examples/own_world
    edgejudge collect --env skilllog:replay --params log=examples/own_world/episodes.jsonl --out log.jsonl.gz
    edgejudge label trca log.jsonl.gz --rubrics examples/own_world/rubric.toml --out log.trca.jsonl.gz
    edgejudge train log.trca.jsonl.gz --algo iql --reward trca --out ckpt

A replay has no simulator: every episode can only take the actions it logged, so collection replays the log
(whatever the behaviour asked for), labeling and training work as for any world, and ``edgejudge eval`` says
it needs a simulator. Serving is the same as for any bundle: the robot's client composes its state text with
``SkillLogAdapter.compose`` and keys its loop guard with ``SkillLogAdapter.world_key``.

The log here is JSON Lines, one episode per line::

    {"id": "tidy-00", "split": "train", "instruction": "Tidy the table ...", "success": false,
     "start": {"result": "...", "holding": [], "at": "kitchen table"},
     "steps": [{"skill": "pick fork", "available": ["pick fork", ...],
                "result": "Gripper closed on the fork.", "holding": ["fork"], "at": "kitchen table"}, ...]}

``result``/``holding``/``at`` describe the state *after* a skill (``start``: before the first one);
``available`` lists the skills the robot could run at that step (the candidates; the logged skill among
them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from models.state_layout import Part, StateLayout
from policy.worlds.adapters import EnvAdapter, EnvError, EnvSpec, EnvState, Param

LAYOUT = StateLayout(
    (
        Part("feedback", "Result"),  # what the last skill reported
        Part("inventory", "Holding", world=True, unordered=True),  # what the gripper holds
        Part("history", "Recent skills"),
        Part("place", "At", world=True),  # where the robot is
    )
)
HISTORY_LEN = 3


class SkillLogAdapter(EnvAdapter):
    name: ClassVar[str] = "skilllog"
    tasks: ClassVar[Mapping[str, str]] = {"replay": "replay the episodes of a robot's skill log"}
    layout: ClassVar[StateLayout] = LAYOUT
    state_format: ClassVar[str] = "skilllog/1"
    needs_simulator: ClassVar[bool] = False

    @classmethod
    def parameters(cls, task: str) -> Mapping[str, Param]:
        # path=True: recorded relative to the current folder (or ~), resolved back by spec.path
        return {"log": Param("examples/own_world/episodes.jsonl", "the skill log (JSON Lines)", path=True)}

    @classmethod
    def compose(cls, parts: Mapping[str, str], history: Sequence[str]) -> str:
        recent = list(history)[-HISTORY_LEN:]
        return LAYOUT.compose(
            {
                "feedback": " ".join(parts.get("feedback", "").split()),
                "inventory": parts.get("inventory") or "nothing",
                "history": ", ".join(recent) if recent else "none",
                "place": parts.get("place", ""),
            }
        )

    def __init__(self, spec: EnvSpec, step_limit: int = 50):
        super().__init__(spec, step_limit)
        path = spec.path("log")
        if not path.is_file():
            raise EnvError(f"skill log {spec.values['log']} does not exist (looked for {path})")
        self._episodes = {e["id"]: e for e in self._read(path)}
        self._ep: dict[str, Any] | None = None

    @staticmethod
    def _read(path: Path) -> list[dict[str, Any]]:
        with path.open() as f:
            return [json.loads(line) for line in f if line.strip()]

    def episodes(self, split: str) -> list[str]:
        self.check_split(split)
        return [i for i, e in self._episodes.items() if e.get("split", "train") == split]

    def _state(self) -> EnvState:
        assert self._ep is not None
        t = len(self.history)
        steps = self._ep["steps"]
        now = self._ep["start"] if t == 0 else steps[t - 1]
        parts = {"feedback": now["result"], "inventory": ", ".join(now["holding"]), "place": now["at"]}
        done = t >= len(steps) or t >= self.step_limit
        success = done and t == len(steps) and bool(self._ep["success"])
        return EnvState(
            observation=self.compose(parts, self.history),
            candidates=list(steps[t]["available"]) if t < len(steps) else [],
            instruction=self._ep["instruction"],
            parts=parts,
            score=1.0 if success else 0.0,
            done=done,
            success=success,
            failure=done and not success,
            info={},  # a real log has no ground truth to measure labels against
        )

    def reset(self, episode, split: str, gold: bool = False) -> EnvState:
        self.check_split(split)
        if episode not in self._episodes or self._episodes[episode].get("split", "train") != split:
            raise EnvError(f"no {split} episode {episode!r} in the log")
        self._ep, self.history = self._episodes[episode], []
        return self._state()

    def gold_path(self) -> list[str]:
        """The logged skills: what a replay follows."""
        assert self._ep is not None
        return [s["skill"] for s in self._ep["steps"]]

    def noise_candidates(self, state: EnvState) -> list[str]:
        """Only the logged skill: a replay cannot try another one."""
        return [self.gold_path()[len(self.history)]]

    def step(self, action: str) -> EnvState:
        expected = self.gold_path()[len(self.history)]
        if action != expected:
            raise EnvError(
                f"a log replay can only take the logged skill ({expected!r}, not {action!r}): "
                "evaluating a policy needs a simulator"
            )
        self.history.append(action)
        return self._state()

    def invalid(self) -> EnvState:
        raise EnvError("a log replay cannot answer an action it did not log: evaluation needs a simulator")
