"""The marks of an audit: one JSON line per mark, appended and synced as it is made, so a session cut short
keeps every mark it took; the last mark of a step wins, and an ``undone`` mark takes a step's mark back.

    {"id": "twc-train-3", "step": 4, "mark": "harmful", "by": "person", "at": 1765000000.0}

``by`` says who marked (``person``, or the judge's name): the check compares each channel with each
auditor's marks. A last line cut mid-write is left out.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from models.channel_choice import AUDIT_MARKS
from models.log_set import beside

MARKS = ("progress", "harmful", "neither")
"""What a step did toward the episode's instruction."""
UNDONE = "undone"
"""Takes back the step's earlier mark."""
UNSURE = "unsure"
"""Asked and left without an answer (the judge's two prompts disagreed): not a mark of the step, but it counts
toward how consistent the auditor was."""
KINDS = (*MARKS, UNDONE, UNSURE)
JUDGE = "judge:"
"""How the marks name a judge auditor: this and the model's reference (a person's name never starts so)."""


def by_judge(by: str) -> bool:
    """Whether the auditor ``by`` is a judge."""
    return by.startswith(JUDGE)


class MarksError(ValueError):
    """A marks file that cannot be read: its path, line and problem."""


@dataclass(frozen=True)
class Mark:
    id: str
    """The trajectory's id."""
    step: int
    """The step's index in the trajectory (0-based)."""
    mark: str
    """One of :data:`MARKS`, :data:`UNDONE` or :data:`UNSURE`."""
    by: str = "person"
    at: float = 0.0
    """When it was made (seconds since the epoch)."""

    @property
    def key(self) -> tuple[str, int]:
        return self.id, self.step


def default_marks_path(log: str | os.PathLike[str]) -> Path:
    """``LOG.audit.jsonl`` beside the log (``.jsonl`` / ``.jsonl.gz`` replaced)."""
    return beside(log, AUDIT_MARKS)


def append_mark(path: str | os.PathLike[str], mark: Mark) -> None:
    """Append ``mark`` and sync it to disk (a mark is a person's minute: never lost to a crash)."""
    if mark.mark not in KINDS:
        raise ValueError(f"mark {mark.mark!r}: expected one of {', '.join(KINDS)}")
    line = json.dumps({**asdict(mark), "at": mark.at or round(time.time(), 3)}) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())


def read_marks(path: str | os.PathLike[str]) -> list[Mark]:
    """Every mark in ``path`` in the order made (none when the file does not exist); a torn last line is
    left out; any other bad line is a :class:`MarksError`."""
    p = Path(path)
    if not p.exists():
        return []
    out = []
    text = p.read_text(encoding="utf-8")
    lines = text.split("\n")
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            m = Mark(str(raw["id"]), int(raw["step"]), str(raw["mark"]), str(raw.get("by", "person")),
                     float(raw.get("at", 0.0)))  # fmt: skip
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            if i == len(lines) and not text.endswith("\n"):
                break  # the last line, cut mid-write
            raise MarksError(f"{p}:{i}: not a mark ({e})") from None
        if m.mark not in KINDS:
            raise MarksError(f"{p}:{i}: mark {m.mark!r}: expected one of {', '.join(KINDS)}")
        out.append(m)
    return out


def current(marks: list[Mark], by: str | None = None) -> dict[tuple[str, int], Mark]:
    """Each step's standing mark (the last one made; none where that was :data:`UNDONE`), of auditor ``by``
    (every auditor's when None: then the last mark of anyone)."""
    out: dict[tuple[str, int], Mark] = {}
    for m in marks:
        if by is not None and m.by != by:
            continue
        if m.mark == UNDONE:
            out.pop(m.key, None)
        else:
            out[m.key] = m
    return out
