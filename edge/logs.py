"""Structured JSON logs (one object per line on stderr) and optional systemd readiness notification."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from typing import Any, TextIO

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


class JsonLogger:
    def __init__(self, level: str = "info", stream: TextIO | None = None, **fields: Any):
        """``fields``: set on every line (a worker process's ``worker`` index)."""
        if level not in LEVELS:
            raise ValueError(f"unknown log level {level!r}: expected one of {', '.join(LEVELS)}")
        self.level = LEVELS[level]
        self.level_name = level
        self.stream = stream or sys.stderr
        self.fields = fields

    def log(self, level: str, event: str, **fields: Any) -> None:
        if LEVELS[level] < self.level:
            return
        rec = {"ts": round(time.time(), 6), "level": level, "event": event, **self.fields, **fields}
        try:
            self.stream.write(json.dumps(rec, default=str) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed stderr must not take the daemon down
            pass

    def info(self, event: str, **fields: Any) -> None:
        self.log("info", event, **fields)

    def warning(self, event: str, **fields: Any) -> None:
        self.log("warning", event, **fields)

    def error(self, event: str, **fields: Any) -> None:
        self.log("error", event, **fields)

    def debug(self, event: str, **fields: Any) -> None:
        self.log("debug", event, **fields)


def sd_notify(state: str) -> bool:
    """Tell systemd (``Type=notify``) about ``state`` (``READY=1``); a no-op without ``NOTIFY_SOCKET``."""
    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr:
        return False
    if addr.startswith("@"):
        addr = "\0" + addr[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.settimeout(1.0)
            s.connect(addr)
            s.sendall(state.encode())
        return True
    except OSError:
        return False
