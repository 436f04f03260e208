"""The label channel a log's check chose to train on, recorded beside the log (``LOG.choice.json``), so that
``edgejudge train --reward auto`` trains on what the check found supported, and says why.

    {"channel": "trca.total", "by": "person", "evidence": "the audit by person supports it: AUROC 0.83 ..."}

Written by ``edgejudge label quality LOG --audit MARKS`` when the audit supports a channel; read by the
trainer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from models.log_set import beside
from models.settings import atomic_write


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
