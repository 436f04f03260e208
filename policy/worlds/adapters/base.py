"""The environment adapter interface: what collection, evaluation, training and clients need of a world.

An adapter wraps one world (a simulator, or a replay of logged episodes) behind this interface::

    with open_env(parse_env("twx:twc", "level=medium"), step_limit=40) as env:
        ids = env.episodes("dev")                   # episode ids of a split
        state = env.reset(ids[0], "dev", gold=True)  # an EnvState
        gold = env.gold_path()                      # the expert's actions, or None
        while not state.done:
            state = env.step(state.candidates[0])

An :class:`EnvState` is one decision point: the instruction, the admissible candidates, the policy's state
text (``observation``, composed by the adapter's one composition function from the named ``parts``), the
normalised score, done / success / failure, and the world's ground truth under ``info``. ``info`` is for
measuring label quality only: labelers never read it (a test checks this).

The class attributes say what a world is: its ``name`` (the ``ADAPTER`` in ``ADAPTER:TASK``), its tasks and
parameters, its splits (and whether they are disjoint), the state ``layout`` (:class:`models.state_layout.
StateLayout`, recorded with datasets and bundles) and the ``state_format`` version string, which changes
whenever the composition changes, so that a policy trained on one format is never run on another.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from models.state_layout import StateLayout

SPLITS = ("train", "dev", "test")

EpisodeId = int | str


class EnvError(ValueError):
    """An unknown adapter, task, split or parameter, or a bad value (one line, listing the valid ones)."""


def recorded_path(value: str) -> str:
    """A file or folder parameter as it is recorded: relative to the current folder when it lies under it
    (``data/log.jsonl``), else under the home folder as ``~/...``, else absolute; ``~`` in the given value is
    expanded first. A relative value stays as given (normalised). :meth:`EnvSpec.path` reads it back."""
    given = Path(value).expanduser()
    if not given.is_absolute():
        return Path(os.path.normpath(value)).as_posix()
    paths = (Path(os.path.normpath(given)), given.resolve())
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        for root in (base, base.resolve()):
            for p in paths:
                if p.is_relative_to(root):
                    rel = p.relative_to(root).as_posix()
                    return prefix + rel if rel != "." else (prefix.rstrip("/") or ".")
    return paths[0].as_posix()


@dataclass(frozen=True)
class Param:
    """One documented parameter of a task: its default (as text), its help, and its valid values. A ``path``
    parameter (a file or folder) is recorded portably (:func:`recorded_path`) and read with
    :meth:`EnvSpec.path`."""

    default: str
    help: str
    choices: tuple[str, ...] | None = None
    integer: bool = False
    path: bool = False

    def check(self, key: str, value: str) -> str:
        value = value.strip()
        if self.choices is not None and value not in self.choices:
            raise EnvError(f"bad value {value!r} for {key}: expected one of {', '.join(self.choices)}")
        if self.integer and not value.lstrip("-").isdigit():
            raise EnvError(f"bad value {value!r} for {key}: expected an integer")
        if self.path:
            if "," in value or "=" in value:
                raise EnvError(f"bad path {value!r} for {key}: a path parameter cannot hold ',' or '='")
            return recorded_path(value)
        return value


@dataclass(frozen=True)
class EnvSpec:
    """``ADAPTER:TASK`` and the adapter's canonical parameter text (``key=value,...``)."""

    adapter: str
    task: str
    params: str = ""

    @property
    def name(self) -> str:
        return f"{self.adapter}:{self.task}"

    @property
    def values(self) -> dict[str, str]:
        return dict(p.split("=", 1) for p in self.params.split(",") if p)

    def path(self, key: str) -> Path:
        """A path parameter as recorded (:func:`recorded_path`), resolved for use: ``~`` expanded, a relative
        path against the current folder."""
        return Path(self.values[key]).expanduser().absolute()

    def __str__(self) -> str:
        return f"{self.name}[{self.params}]" if self.params else self.name


@dataclass
class EnvState:
    """One decision point of an episode (see the module docstring)."""

    observation: str
    candidates: list[str]
    instruction: str
    parts: dict[str, str]
    score: float
    done: bool
    success: bool
    failure: bool = False
    info: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def feedback(self) -> str:
        return self.parts.get("feedback", "")


class EnvAdapter(ABC):
    """Base class of every adapter. Subclasses set the class attributes and implement the abstract methods;
    ``__init__(spec, step_limit)`` opens the world (a JVM, a simulator, a log file)."""

    name: ClassVar[str]
    """The ``ADAPTER`` part of environment names."""
    tasks: ClassVar[Mapping[str, str]]
    """Task name -> one-line description."""
    splits: ClassVar[tuple[str, ...]] = SPLITS
    disjoint_splits: ClassVar[bool] = True
    """Whether the splits' episodes are disjoint worlds (e.g. objects never seen in training)."""
    layout: ClassVar[StateLayout]
    state_format: ClassVar[str]
    """Version of the state composition, e.g. ``twx/1``; recorded in datasets and bundles."""
    compatible_formats: ClassVar[tuple[str, ...]] = ()
    """Older formats of this adapter with the same parts whose policies may run on its texts (with a note)."""
    exact_replay: ClassVar[bool] = True
    """Whether the same episode and actions give the same texts again in one process. False for a world that
    lists and names look-alike objects in an order that changes from one reset to the next (ScienceWorld);
    its episodes still start in the same world state."""
    needs_simulator: ClassVar[bool] = True
    """False for a replay of logged episodes (collect works, evaluation of a new policy does not)."""
    strategies: ClassVar[Mapping[str, str]] = {}
    """Opt-in task strategies of this world: name -> ``module:Class``, a policy wrapper
    (:class:`edge.policies.PolicyWrapper`) built as ``Class(policy, world_key)`` by
    :func:`policy.worlds.episode_policy.episode_policy`. Never part of a headline result: the generic client
    is the loop guard."""

    def __init__(self, spec: EnvSpec, step_limit: int = 50):
        self.spec = spec
        self.step_limit = step_limit
        self.history: list[str] = []

    # -------------------------------------------------------------- description (no world needed)

    @classmethod
    def parameters(cls, task: str) -> Mapping[str, Param]:
        """The task's parameters (name -> :class:`Param`); none by default."""
        return {}

    @classmethod
    def resolve(cls, task: str, given: Mapping[str, str]) -> str:
        """The canonical parameter text for ``given`` (already checked against :meth:`parameters`)."""
        params = cls.parameters(task)
        return ",".join(f"{k}={given.get(k, p.default)}" for k, p in params.items())

    @classmethod
    @abstractmethod
    def compose(cls, parts: Mapping[str, str], history: Sequence[str]) -> str:
        """The policy's state text from the named parts and the actions taken so far: the one composition
        function (collection, evaluation and every client call it)."""

    @classmethod
    def world_key(cls, observation: str, actions: Sequence[str] = ()) -> str:
        """The world state of a composed state text, given the episode's actions so far, for episode memory
        (loop guard, loop erasure): :meth:`models.state_layout.StateLayout.world_key`."""
        return cls.layout.world_key(observation, actions)

    # -------------------------------------------------------------- the world

    @abstractmethod
    def episodes(self, split: str) -> list[EpisodeId]:
        """The episode ids of a split, in the world's own order."""

    @abstractmethod
    def reset(self, episode: EpisodeId, split: str, gold: bool = False) -> EnvState:
        """Start an episode; ``gold=True`` prepares :meth:`gold_path` (where that costs time)."""

    @abstractmethod
    def step(self, action: str) -> EnvState:
        """Take an action (any text: one outside the candidates is answered as the world answers it)."""

    def gold_path(self) -> list[str] | None:
        """The expert's actions for the current episode (after ``reset(..., gold=True)``); None if the world
        has no expert."""
        return None

    def noise_candidates(self, state: EnvState) -> list[str]:
        """The candidates a scripted random step may take (collection); all of them by default. A world
        where some actions end most random episodes (e.g. committing to an answer) leaves them out."""
        return state.candidates

    def invalid(self) -> EnvState:
        """What an agent's answer outside the candidates does: by default the step is spent on an action the
        world does not know (it answers as it answers any unknown command)."""
        return self.step("")

    @property
    def num_steps(self) -> int:
        return len(self.history)

    def check_split(self, split: str) -> str:
        if split not in self.splits:
            raise EnvError(
                f"unknown split {split!r} for {self.spec.name}: expected one of {', '.join(self.splits)}"
            )
        return split

    def close(self) -> None:  # noqa: B027 - optional: a world that holds nothing need not close
        """Release the world (JVM, files). Idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
