"""A deliberately broken adapter for the contract tests: TextWorldExpress with the score in its state text.

Registered as ``EDGEJUDGE_ENVS=leaky=tests.support.leaky_adapter:LeakyAdapter``;
``edgejudge envs check leaky:twc`` must fail its ``no-score-in-state`` check.
"""

from __future__ import annotations

from typing import Any, ClassVar

from policy.worlds.adapters import EnvState
from policy.worlds.adapters.twx import TWXAdapter


class LeakyAdapter(TWXAdapter):
    name: ClassVar[str] = "leaky"

    def _make_state(self, obs: str, infos: dict[str, Any]) -> EnvState:
        state = super()._make_state(obs, infos)
        state.parts = {**state.parts, "feedback": f"{state.parts['feedback']} Your score: {state.score:g}"}
        state.observation = self.compose(state.parts, self.history)
        return state
