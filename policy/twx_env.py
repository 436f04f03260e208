"""TextWorldExpress adapter: environments by name, seed splits, and the one state-composition function.

``compose_state`` is the only place where the policy's state text is built. Collection, evaluation and serving
(the client that drives the robot or the environment) all call it, so the features a policy was trained on are
the features it sees at run time.

This module needs ``textworld-express`` (and a Java runtime) only when an environment is created; composing
state text needs nothing but the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

GAMES: dict[str, str] = {
    # Small default configurations: one room, few objects. Users pass --params for harder ones.
    "twc": "numLocations=1,numItemsToPutAway=2,includeDoors=0,limitInventorySize=0",
    "cookingworld": (
        "numLocations=1,numIngredients=2,numDistractorItems=2,includeDoors=0,limitInventorySize=0"
    ),
}
SPLITS = ("train", "dev", "test")
HISTORY_LEN = 3


class EnvSpecError(ValueError):
    """An unknown environment name, game, split or parameter string."""


@dataclass(frozen=True)
class EnvSpec:
    """``twx:GAME`` plus its game parameter string."""

    game: str
    params: str

    @property
    def name(self) -> str:
        return f"twx:{self.game}"


def parse_env(name: str, params: str | None = None) -> EnvSpec:
    """Parse ``twx:twc`` / ``twx:cookingworld``; ``params`` defaults to the game's small configuration."""
    kind, _, game = name.partition(":")
    if kind != "twx" or not game:
        raise EnvSpecError(
            f"unknown environment {name!r}: expected one of {', '.join('twx:' + g for g in GAMES)}"
        )
    if game not in GAMES:
        raise EnvSpecError(f"unknown TextWorldExpress game {game!r}: expected one of {', '.join(GAMES)}")
    if params is None:
        params = GAMES[game]
    for part in filter(None, params.split(",")):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip().lstrip("-").isdigit():
            raise EnvSpecError(
                f"bad game parameter {part!r} in {params!r}: expected key=integer, comma-separated"
            )
    return EnvSpec(game=game, params=params)


def check_split(split: str) -> str:
    if split not in SPLITS:
        raise EnvSpecError(f"unknown split {split!r}: expected one of {', '.join(SPLITS)}")
    return split


# ------------------------------------------------------------------------------------------------ state text


def _clean(text: str) -> str:
    return " ".join(text.split())


def _inventory(text: str) -> str:
    body = _clean(text.replace("Inventory:", "", 1))
    if not body or "currently empty" in body:
        return "empty"
    return body


def compose_state(feedback: str, look: str, inventory: str, history: list[str] | tuple[str, ...]) -> str:
    """The policy's state text: what the agent needs under partial observability, most important first.

    - the environment's answer to the last action (omitted when it just repeats the room description),
    - the inventory, the last ``HISTORY_LEN`` actions, then the room description (a long room text is the part
      a length-limited encoder cuts).
    """
    feedback_c, look_c = _clean(feedback), _clean(look)
    parts = []
    if feedback_c and feedback_c != look_c:
        parts.append(f"Feedback: {feedback_c}")
    parts.append(f"Inventory: {_inventory(inventory)}")
    recent = list(history)[-HISTORY_LEN:]
    parts.append(f"Recent actions: {', '.join(recent) if recent else 'none'}")
    parts.append(f"Room: {look_c}")
    return "\n".join(parts)


WORLD_PREFIXES = ("Inventory:", "Room:")


def world_key(observation: str) -> str:
    """The world part of a :func:`compose_state` text (inventory and room lines), for telling whether two
    observations show the same world state; the whole text if it has no such lines.

    The inventory is compared as a bag of words: environments list held items in the order they were taken,
    which is not part of the world state."""
    lines = []
    for ln in observation.splitlines():
        if ln.startswith("Inventory:"):
            ln = "Inventory: " + " ".join(sorted(ln[len("Inventory:") :].split()))
        if ln.startswith(WORLD_PREFIXES):
            lines.append(ln)
    return "\n".join(lines) if lines else observation


# ------------------------------------------------------------------------------------------------ environment


@dataclass
class TWXState:
    """One decision point: the composed state text, the admissible actions and the ground truth."""

    observation: str
    candidates: list[str]
    instruction: str
    score: float
    done: bool
    success: bool
    feedback: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


class TWXEnv:
    """A TextWorldExpress game with the state composition above. Use as a context manager (owns a JVM)."""

    def __init__(self, spec: EnvSpec, step_limit: int = 50):
        try:
            from textworld_express import TextWorldExpressEnv
        except ImportError as e:  # pragma: no cover - depends on the install
            raise RuntimeError("textworld-express is not installed: pip install 'edgejudge[env]'") from e
        self.spec = spec
        self.step_limit = step_limit
        # The wrapped env's own limit is set above ours so that our limit is the one that ends an episode.
        self._env = TextWorldExpressEnv(envStepLimit=step_limit + 1)
        self._env.load(gameName=spec.game, gameParams=spec.params)
        self._history: list[str] = []
        self._state: TWXState | None = None

    def seeds(self, split: str) -> list[int]:
        check_split(split)
        getter = {
            "train": self._env.getValidSeedsTrain,
            "dev": self._env.getValidSeedsDev,
            "test": self._env.getValidSeedsTest,
        }[split]
        return list(getter())

    def _make_state(self, obs: str, infos: dict[str, Any]) -> TWXState:
        return TWXState(
            observation=compose_state(obs, infos["look"], infos["inventory"], self._history),
            candidates=sorted(infos["validActions"]),
            instruction=infos["taskDescription"],
            score=float(infos["score"]),
            done=bool(infos["done"]) or len(self._history) >= self.step_limit,
            success=bool(infos["tasksuccess"]),
            feedback=obs,
            raw=infos,
        )

    def reset(self, seed: int, split: str, gold: bool = False) -> TWXState:
        check_split(split)
        obs, infos = self._env.reset(seed=seed, gameFold=split, generateGoldPath=gold)
        self._history = []
        self._state = self._make_state(obs, infos)
        return self._state

    def gold_path(self) -> list[str]:
        return list(self._env.getGoldActionSequence())

    def step(self, action: str) -> TWXState:
        if self._state is None:
            raise RuntimeError("step() before reset()")
        obs, _reward, _done, infos = self._env.step(action)
        self._history.append(action)
        self._state = self._make_state(obs, infos)
        return self._state

    @property
    def num_steps(self) -> int:
        return len(self._history)

    def close(self) -> None:
        self._env.close()

    def __enter__(self) -> TWXEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
