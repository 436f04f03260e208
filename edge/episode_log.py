"""The robot's episode log: what the deployed policy did, in the trajectory format the labelers read.

A robot (or a simulated fleet, ``edgejudge collect --policy``) records each decision it already has at hand:
the instruction, the state it acted on, the candidates, the chosen action, the state that followed, and at the
end the outcome it reports. Each finished episode becomes one line of the trajectory format
(:mod:`models.trajectory`; ``edgejudge data validate`` passes on the file), with the world the bundle was
trained on in ``meta`` (its state layout, so the labelers read the states as the policy did)::

    log = EpisodeLog("episodes.jsonl", world=client.info()["world"])
    with log.episode(instruction) as ep:
        while not done:
            i = policy.act(instruction, state, candidates, memory)
            next_state, done, success = robot.do(candidates[i])
            ep.step(state, candidates, candidates[i], next_state)
            memory.record(candidates[i], next_state)
            state = next_state
        ep.end(success)

It survives the robot. Nothing is written until an episode ends; then its line is appended, flushed and
synced to the disk (``fsync``) before :meth:`Episode.end` returns, so a crash or ``kill -9`` loses at most the
episode in progress. Lines are only ever appended: nothing of an earlier episode is rewritten. A line cut by a
power loss is the file's last one: a reader leaves it out with one message naming it and keeps every
complete episode before it, and the next :class:`EpisodeLog` on the file cuts the torn bytes off (saying so)
before it appends. The file is plain JSON Lines; compress it after the run if you need to (``.gz`` is
refused here: a gzip stream cut mid-member is not readable up to the cut).

Stdlib and :mod:`models` only: no torch, no LLM, no onnxruntime.
"""

from __future__ import annotations

import math
import os
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from models.trajectory import DatasetError, Step, Trajectory, check_trajectory


class EpisodeLogError(ValueError):
    """A step or episode the log cannot record (the trajectory format would refuse it), or a bad file."""


WORLD_KEYS = ("env", "params", "state_format", "state_layout")
"""What of a bundle's recorded world goes into each episode's ``meta`` (the policy's state texts)."""


class EpisodeLog:
    """Append finished episodes to ``path``, one line each.

    ``world``: the world the deployed bundle records (``EdgeClient.info()["world"]`` or the manifest's),
    whose state format and layout every episode's ``meta`` carries; ``task_type``: the default task type of
    the episodes (the labelers group rubrics by it); ``meta``: more per-episode metadata (e.g. the robot's
    name, the bundle's sha256); ``fsync``: sync each line to the disk (off only for tests and simulation).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        world: Mapping[str, Any] | None = None,
        task_type: str = "task",
        meta: Mapping[str, Any] | None = None,
        fsync: bool = True,
    ):
        self.path = Path(path)
        if self.path.suffix == ".gz":
            raise EpisodeLogError(
                f"{self.path}: the episode log is plain JSON Lines (.jsonl); compress it after the run"
            )
        if self.path.is_dir():
            raise EpisodeLogError(f"{self.path}: is a directory, expected a .jsonl file")
        self.task_type = task_type
        self.meta = {k: world[k] for k in WORLD_KEYS if world and world.get(k) not in (None, "")}
        self.meta.update(meta or {})
        self.fsync = fsync
        self.written = 0
        """Episodes this log appended."""
        self._session = uuid.uuid4().hex[:8]
        self._started = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_tail(self.path)

    def episode(
        self,
        instruction: str,
        *,
        task_type: str | None = None,
        episode_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Episode:
        """A new episode to record; :meth:`Episode.end` appends it. Its id is ``episode_id`` or one unique to
        this log session and episode."""
        self._started += 1
        eid = episode_id or f"{self._session}-{self._started}-{int(time.time())}"
        return Episode(self, eid, instruction, task_type or self.task_type, {**self.meta, **(meta or {})})

    def append(self, traj: Trajectory) -> None:
        """Append one finished trajectory as a line, flushed and synced before it returns."""
        try:
            check_trajectory(traj, self.path)
        except DatasetError as e:
            raise EpisodeLogError(f"episode {traj.id}: {e.field}: {e.problem}") from None
        line = (traj.to_json() + "\n").encode("utf-8")
        with open(self.path, "ab") as f:
            f.write(line)
            f.flush()
            if self.fsync:
                os.fsync(f.fileno())
        self.written += 1


class Episode:
    """One episode being recorded: :meth:`step` after every decision, :meth:`end` with the outcome. Used as
    a context manager, an episode left by an exception is dropped (never half-written)."""

    def __init__(self, log: EpisodeLog, episode_id: str, instruction: str, task_type: str, meta: dict):
        self.log, self.id, self.instruction, self.task_type, self.meta = (
            log,
            episode_id,
            instruction,
            task_type,
            meta,
        )
        self.steps: list[Step] = []
        self.ended = False

    def step(
        self,
        state: str,
        candidates: Sequence[str],
        action: str,
        next_state: str,
        *,
        reward: float = 0.0,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        """Record one decision: the state acted on, its candidates, the action taken (one of them), the state
        that followed, the robot's own reward for the step (0 unless it has one) and free ``info``."""
        if self.ended:
            raise EpisodeLogError(f"episode {self.id} has ended: start a new one")
        if not math.isfinite(reward):
            raise EpisodeLogError(f"episode {self.id} step {len(self.steps)}: reward {reward} is not finite")
        if candidates and action not in candidates:
            raise EpisodeLogError(
                f"episode {self.id} step {len(self.steps)}: {action!r} is not among its {len(candidates)} "
                "candidates"
            )
        self.steps.append(
            Step(
                observation=state,
                action=action,
                candidates=list(candidates),
                next_observation=next_state,
                env_reward=float(reward),
                info=dict(info or {}),
            )
        )

    def end(self, success: bool, *, meta: Mapping[str, Any] | None = None) -> Trajectory:
        """The outcome the robot reports: append the episode to the log (one line, synced) and return it.
        An episode without a step is not an episode: an error, nothing written."""
        if self.ended:
            raise EpisodeLogError(f"episode {self.id} has ended already")
        if not self.steps:
            raise EpisodeLogError(f"episode {self.id}: no step recorded, nothing to write")
        traj = Trajectory(
            id=self.id,
            instruction=self.instruction,
            task_type=self.task_type,
            success=bool(success),
            steps=self.steps,
            meta={**self.meta, **(meta or {}), "recorded_by": "edge.episode_log"},
        )
        self.log.append(traj)
        self.ended = True
        return traj

    def __enter__(self) -> Episode:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None and not self.ended and self.steps:
            raise EpisodeLogError(f"episode {self.id}: left without end(success): say how it ended")
        self.ended = True


def cut_torn_tail(path: Path) -> int:
    """Cut off a last line the file ends inside (a write cut by a power loss), saying so on stderr; returns
    the bytes cut (0 when the file ends with a newline, is empty or absent). Complete lines are never
    touched."""
    if not path.is_file():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb+") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        keep, chunk = 0, 1 << 16
        pos = size
        while pos > 0:  # the last newline, read backwards in chunks
            start = max(0, pos - chunk)
            f.seek(start)
            data = f.read(pos - start)
            nl = data.rfind(b"\n")
            if nl >= 0:
                keep = start + nl + 1
                break
            pos = start
        f.seek(0)
        line = f.read(keep).count(b"\n") + 1
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    print(
        f"{path}:{line}: torn line ({size - keep} bytes, the file ended inside it): cut off before "
        "appending; every complete episode is kept",
        file=sys.stderr,
    )
    return size - keep
