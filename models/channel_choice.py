"""The label channel a log's check chose to train on, recorded beside the log (``LOG.choice.json``), so that
``edgejudge train --reward auto`` trains on what the check found supported, and says why.

    {"channel": "trca.total", "by": "person", "evidence": "the audit by person supports it: AUROC 0.83 ..."}

Written by ``edgejudge label quality LOG --audit MARKS`` when the audit supports a channel; read by the
trainer and the matrix (:func:`chosen_channel`, the one resolution of ``auto`` both use) and named after the
label check's table (:func:`labeler.label_check.step_credit`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from models.log_set import beside
from models.settings import atomic_write

AUTO = "auto"
"""The reward that means "the channel recorded for this log" (``edgejudge train --reward auto``)."""
AUDIT_MARKS = ".audit.jsonl"
"""The ending of the marks file ``edgejudge label audit`` writes beside a log (``LOG.audit.jsonl``)."""


class ChoiceError(ValueError):
    """No usable choice for a log: none recorded, or a file that is not one; the message says which."""


def choice_path(log: str | os.PathLike[str]) -> Path:
    """``LOG.choice.json`` beside the log (``.jsonl`` / ``.jsonl.gz`` replaced)."""
    return beside(log, ".choice.json")


def write_choice(log: str | os.PathLike[str], channel: str, by: str, evidence: str) -> Path:
    """Record ``channel`` as the one to train on for ``log``; returns where."""
    path = choice_path(log)
    atomic_write(path, json.dumps({"channel": channel, "by": by, "evidence": evidence}, indent=1) + "\n")
    return path


def read_choice(log: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The recorded choice for ``log`` (``channel``, ``by``, ``evidence``), or None when there is none; a
    file that is not a choice is a ValueError naming it."""
    path = choice_path(log)
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(raw.get("channel"), str) or "." not in raw["channel"]:
            raise ValueError("no METHOD.CHANNEL under 'channel'")
    except (json.JSONDecodeError, AttributeError, ValueError) as e:
        raise ValueError(f"{path}: not a channel choice ({e})") from None
    return raw


def how_to_choose(log: str | os.PathLike[str]) -> str:
    """The commands that record a choice for ``log``: an audit of its steps, then the check that reads it."""
    marks = beside(log, AUDIT_MARKS)
    return (
        f"'edgejudge label audit {log}' (a person, or --auditor judge), then "
        f"'edgejudge label quality {log} --audit {marks}'"
    )


def chosen_channel(log: str | os.PathLike[str]) -> tuple[str, str]:
    """What ``auto`` trains on for ``log``: the recorded channel and its evidence. Without a recorded choice
    it is a :class:`ChoiceError` naming the log and the commands that record one; no default channel stands
    in, since ``auto`` promises a channel whose step credit an audit supports."""
    try:
        choice = read_choice(log)
    except ValueError as e:
        raise ChoiceError(str(e)) from None
    if choice is None:
        raise ChoiceError(
            f"no channel chosen for {log}: {how_to_choose(log)} records the one the audit supports"
        )
    return str(choice["channel"]), str(choice.get("evidence", ""))
