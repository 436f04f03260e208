"""Trajectory dataset: JSON Lines (optionally gzip), one trajectory per line.

Every line is validated on read; a problem is reported as ``file:line: field: problem``. Writing is atomic
(temp file in the same folder, fsync, rename), so an interrupted write never leaves a half file behind.

A line looks like::

    {"format": 1, "id": "twc-train-17-0", "instruction": "...", "task_type": "twc", "success": true,
     "steps": [{"observation": "...", "action": "take apple", "candidates": ["take apple", ...],
                "next_observation": "...", "env_reward": 0.0, "info": {...}, "labels": {...}}],
     "meta": {...}, "provenance": {...}}

``meta["state_layout"]`` describes how the state texts are laid out (:mod:`models.state_layout`); a file
that records none is given one when it is read (:func:`file_layout`: inferred from its texts, said in one line
on stderr, and recorded in ``meta`` with ``state_layout_inferred`` giving the reason, so that the files a
labeler writes carry it on); only a file that says ``"state_format": "twx/1"`` is read with the layout of
that format.

``env_reward`` is the environment's own (sparse) reward. ``info`` holds ground truth that a real robot
log would not have (for example TextWorldExpress score progress); it is used only to *measure* label quality,
never to label. Labels are added per step as named channels grouped by method, e.g.
``labels["coren"]["contextual"]``, with the method's provenance (judge sha256, prompt or rubric version) in
the trajectory's ``provenance[method]``.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.layout_inference import infer_layout
from models.log_layout import INFERRED_KEY, LAYOUT_SAMPLE, layout_notice, needs_layout, torn_notice
from models.settings import AtomicFile
from models.state_layout import StateLayout
from models.trajectory_view import TrajectoryView

FORMAT_VERSION = 1

LabelValue = float | list[float]


class DatasetError(ValueError):
    """A problem at a known place in a dataset file: ``file:line: field: problem``."""

    def __init__(self, path: str | os.PathLike[str], line: int | None, field: str, problem: str):
        self.path = str(path)
        self.line = line
        self.field = field
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {field}: {problem}")


@dataclass
class Step:
    observation: str
    action: str
    candidates: list[str]
    next_observation: str
    env_reward: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    labels: dict[str, dict[str, LabelValue]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "observation": self.observation,
            "action": self.action,
            "candidates": list(self.candidates),
            "next_observation": self.next_observation,
            "env_reward": self.env_reward,
            "info": self.info,
        }
        if self.labels:
            d["labels"] = self.labels
        return d


@dataclass
class Trajectory:
    id: str
    instruction: str
    task_type: str
    success: bool
    steps: list[Step]
    meta: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    _view: TrajectoryView | None = field(default=None, init=False, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "format": FORMAT_VERSION,
            "id": self.id,
            "instruction": self.instruction,
            "task_type": self.task_type,
            "success": self.success,
            "steps": [s.to_dict() for s in self.steps],
            "meta": self.meta,
        }
        if self.provenance:
            d["provenance"] = self.provenance
        return d

    @property
    def view(self) -> TrajectoryView:
        """What the trajectory's texts say (:class:`models.trajectory_view.TrajectoryView`: its layout,
        responses, partial-or-not, world keys, path), built on first read and kept while the steps' texts and
        the meta's layout entries stay the same."""
        v = self._view
        if v is None or not v.describes(self.meta, self.steps):
            v = self._view = TrajectoryView.of(self.meta, self.steps)
        return v

    def responses(self) -> list[str]:
        """The world's response to each step, read through the layout the trajectory records
        (:meth:`models.state_layout.StateLayout.responses`: the one definition the policy shares)."""
        return list(self.view.responses)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


# ------------------------------------------------------------------------------------------------ validation

_TRAJ_FIELDS = {"format", "id", "instruction", "task_type", "success", "steps", "meta", "provenance"}
_STEP_FIELDS = {"observation", "action", "candidates", "next_observation", "env_reward", "info", "labels"}


class _Invalid(Exception):
    def __init__(self, field: str, problem: str):
        self.field = field
        self.problem = problem


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _req(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    name = f"{where}.{key}" if where else key
    if key not in obj:
        raise _Invalid(name, "missing")
    value = obj[key]
    # bool is an int subclass: never accept it where a number is expected, nor a number where a bool is.
    if kind is bool:
        ok = isinstance(value, bool)
    elif isinstance(value, bool):
        ok = False
    else:
        ok = isinstance(value, kind)
    if not ok:
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise _Invalid(name, f"expected {expected}, got {_type_name(value)}")
    return value


def _finite(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(name, f"expected a number, got {_type_name(value)}")
    if not math.isfinite(value):
        raise _Invalid(name, f"not finite ({value})")
    return float(value)


def _unknown(obj: dict[str, Any], allowed: set[str], where: str, hint: str) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        raise _Invalid(f"{where}{extra[0]}", f"unknown field ({hint})")


def _labels(raw: Any, where: str) -> dict[str, dict[str, LabelValue]]:
    if not isinstance(raw, dict):
        raise _Invalid(where, f"expected object, got {_type_name(raw)}")
    out: dict[str, dict[str, LabelValue]] = {}
    for method, channels in raw.items():
        if not isinstance(channels, dict):
            raise _Invalid(f"{where}.{method}", f"expected object of channels, got {_type_name(channels)}")
        out[method] = {}
        for name, value in channels.items():
            here = f"{where}.{method}.{name}"
            if isinstance(value, list):
                out[method][name] = [_finite(v, f"{here}[{i}]") for i, v in enumerate(value)]
            else:
                out[method][name] = _finite(value, here)
    return out


def _step_from(raw: Any, where: str) -> Step:
    if not isinstance(raw, dict):
        raise _Invalid(where, f"expected object, got {_type_name(raw)}")
    _unknown(raw, _STEP_FIELDS, f"{where}.", "put custom per-step data under info")
    candidates = _req(raw, "candidates", list, where)
    for i, c in enumerate(candidates):
        if not isinstance(c, str):
            raise _Invalid(f"{where}.candidates[{i}]", f"expected str, got {_type_name(c)}")
    action = _req(raw, "action", str, where)
    if candidates and action not in candidates:
        raise _Invalid(f"{where}.action", f"{action!r} is not among the step's {len(candidates)} candidates")
    info = raw.get("info", {})
    if not isinstance(info, dict):
        raise _Invalid(f"{where}.info", f"expected object, got {_type_name(info)}")
    return Step(
        observation=_req(raw, "observation", str, where),
        action=action,
        candidates=list(candidates),
        next_observation=_req(raw, "next_observation", str, where),
        env_reward=_finite(raw.get("env_reward", 0.0), f"{where}.env_reward"),
        info=info,
        labels=_labels(raw.get("labels", {}), f"{where}.labels"),
    )


def trajectory_from_dict(raw: Any) -> Trajectory:
    """Validate one decoded line. Raises ``_Invalid`` (wrapped into DatasetError by the reader)."""
    if not isinstance(raw, dict):
        raise _Invalid("line", f"expected a JSON object, got {_type_name(raw)}")
    _unknown(raw, _TRAJ_FIELDS, "", "put custom per-trajectory data under meta")
    version = raw.get("format", FORMAT_VERSION)
    if version != FORMAT_VERSION:
        raise _Invalid(
            "format", f"unsupported format version {version!r} (this edgejudge reads {FORMAT_VERSION})"
        )
    traj_id = _req(raw, "id", str, "")
    if not traj_id:
        raise _Invalid("id", "empty")
    steps_raw = _req(raw, "steps", list, "")
    if not steps_raw:
        raise _Invalid("steps", "empty (a trajectory needs at least one step)")
    meta = raw.get("meta", {})
    if not isinstance(meta, dict):
        raise _Invalid("meta", f"expected object, got {_type_name(meta)}")
    provenance = raw.get("provenance", {})
    if not isinstance(provenance, dict) or not all(isinstance(v, dict) for v in provenance.values()):
        raise _Invalid("provenance", "expected an object of objects (one per label method)")
    return Trajectory(
        id=traj_id,
        instruction=_req(raw, "instruction", str, ""),
        task_type=_req(raw, "task_type", str, ""),
        success=_req(raw, "success", bool, ""),
        steps=[_step_from(s, f"steps[{i}]") for i, s in enumerate(steps_raw)],
        meta=meta,
        provenance=provenance,
    )


def check_trajectory(traj: Trajectory, path: str | os.PathLike[str] = "trajectory") -> Trajectory:
    """``traj`` as a reader would read its line back (validated; raises :class:`DatasetError` naming ``path``
    and the field): what a writer checks before it appends a line."""
    try:
        return trajectory_from_dict(json.loads(traj.to_json()))
    except _Invalid as inv:
        raise DatasetError(path, None, inv.field, inv.problem) from None
    except ValueError as e:  # NaN or infinity in a number
        raise DatasetError(path, None, "json", str(e)) from None


# ------------------------------------------------------------------------------------------------ reading


@dataclass
class ReadReport:
    """What a read saw: counts, the errors of skipped lines (with ``skip_invalid``), and the torn last line
    left out (``torn``: its line number), if any."""

    read: int = 0
    skipped: int = 0
    errors: list[DatasetError] = field(default_factory=list)
    torn: int | None = None


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def file_layout(path: str | os.PathLike[str]) -> tuple[StateLayout, str] | None:
    """The layout inferred for ``path``'s trajectories that record none, and why; None when all record one
    (or say ``twx/1``). Reads the first :data:`models.log_layout.LAYOUT_SAMPLE` such trajectories, once per
    version of the file (a labeler reads its input twice)."""
    p = Path(path).resolve()
    st = p.stat()
    return _file_layout(p, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=32)
def _file_layout(path: Path, _mtime_ns: int, _size: int) -> tuple[StateLayout, str] | None:
    texts: list[str] = []
    n = 0
    for t in iter_trajectories(path, skip_invalid=True, layouts=False):
        if not needs_layout(t.meta):
            continue
        texts.extend(x for s in t.steps for x in (s.observation, s.next_observation))
        n += 1
        if n >= LAYOUT_SAMPLE:
            break
    return infer_layout(texts) if n else None


def iter_trajectories(
    path: str | os.PathLike[str],
    *,
    skip_invalid: bool = False,
    report: ReadReport | None = None,
    layouts: bool = True,
) -> Iterator[Trajectory]:
    """Stream and validate trajectories from a JSONL or JSONL.gz file (gzip detected by its magic bytes).

    With ``skip_invalid`` an invalid line is counted in ``report`` and skipped; otherwise the first problem
    raises :class:`DatasetError`. A last line that the file ends inside (no newline, not complete JSON: a
    write cut by a power loss) is left out with one notice on stderr naming it, and every complete line before
    it is read (``report.torn``). A file with no trajectory at all is an error either way. With ``layouts``
    a trajectory that records no state layout gets the file's inferred one (see the module docstring).
    """
    p = Path(path)
    report = report if report is not None else ReadReport()
    if not p.exists():
        raise DatasetError(p, None, "file", "does not exist")
    if p.is_dir():
        raise DatasetError(p, None, "file", "is a directory, expected a .jsonl or .jsonl.gz file")
    gz = _is_gzip(p)
    lineno = 0
    seen_ids: set[str] = set()
    inferred: tuple[StateLayout, str] | None = None
    try:
        with gzip.open(p, "rt", encoding="utf-8") if gz else open(p, encoding="utf-8") as f:
            for lineno, text in enumerate(f, start=1):  # noqa: B007 - lineno is used after the loop
                if not text.strip():
                    continue
                try:
                    try:
                        raw = json.loads(text)
                    except json.JSONDecodeError as e:
                        if not text.endswith("\n"):  # the file ends inside this line: a torn write
                            report.torn = lineno
                            torn_notice(p, lineno, len(text.encode("utf-8")))
                            continue
                        raise _Invalid("line", f"invalid JSON ({e.msg} at column {e.colno})") from None
                    traj = trajectory_from_dict(raw)
                    if traj.id in seen_ids:
                        raise _Invalid("id", f"duplicate id {traj.id!r}")
                except _Invalid as inv:
                    err = DatasetError(p, lineno, inv.field, inv.problem)
                    if not skip_invalid:
                        raise err from None
                    report.skipped += 1
                    report.errors.append(err)
                    continue
                seen_ids.add(traj.id)
                report.read += 1
                if layouts:
                    if needs_layout(traj.meta):
                        if inferred is None:
                            inferred = file_layout(p)
                        if inferred is not None:
                            layout_notice(p, inferred[1])
                            traj.meta["state_layout"] = inferred[0].to_dict()
                            traj.meta[INFERRED_KEY] = inferred[1]
                    elif traj.meta.get(INFERRED_KEY):
                        layout_notice(p, str(traj.meta[INFERRED_KEY]), earlier=True)
                yield traj
    except (gzip.BadGzipFile, EOFError, zlib.error, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise DatasetError(p, lineno + 1 if lineno else None, "file", f"corrupt gzip stream ({e})") from None
    except UnicodeDecodeError as e:
        raise DatasetError(p, lineno + 1, "line", f"not UTF-8 text ({e.reason})") from None
    if report.read == 0:
        problem = "no valid trajectories" if report.skipped else "empty (no trajectories)"
        raise DatasetError(p, None, "file", problem)


def read_trajectories(path: str | os.PathLike[str], **kwargs: Any) -> list[Trajectory]:
    return list(iter_trajectories(path, **kwargs))


# ------------------------------------------------------------------------------------------------ writing


class TrajectoryWriter:
    """Atomic streaming writer: lines go to a temp file that replaces ``path`` only on a clean close.

    ``path`` ending in ``.gz`` is written gzip-compressed. On an exception inside the ``with`` block (or an
    explicit :meth:`abort`) the temp file is removed and any existing ``path`` is left untouched.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        self.count = 0
        self._atomic = AtomicFile(self.path)
        raw = open(self._atomic.tmp, "wb")  # noqa: SIM115 - closed by close() or abort()
        self._raw = raw
        # no name and no time in the gzip header: the bytes depend on the trajectories alone
        gz = self.path.suffix == ".gz"
        self._gz = gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) if gz else None
        self._closed = False

    def write(self, traj: Trajectory) -> None:
        data = (traj.to_json() + "\n").encode("utf-8")
        (self._gz or self._raw).write(data)
        self.count += 1

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._gz is not None:
                self._gz.close()
            self._raw.close()
        except BaseException:
            self._atomic.discard()
            raise
        self._atomic.commit()

    def abort(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._gz is not None:
                self._gz.close()
            self._raw.close()
        finally:
            self._atomic.discard()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_trajectories(path: str | os.PathLike[str], trajectories: Iterable[Trajectory]) -> int:
    """Write all trajectories atomically; returns the count. Nothing is written if iteration fails."""
    with TrajectoryWriter(path) as w:
        for t in trajectories:
            w.write(t)
    return w.count
