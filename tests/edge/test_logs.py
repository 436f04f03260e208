from __future__ import annotations

import io
import json

import pytest

from edge.logs import JsonLogger, sd_notify


def test_json_logger_levels_and_sd_notify_without_socket(monkeypatch):
    buf = io.StringIO()
    log = JsonLogger("info", buf)
    log.debug("hidden")
    log.info("shown", n=1)
    (line,) = buf.getvalue().splitlines()
    assert json.loads(line)["event"] == "shown"
    with pytest.raises(ValueError):
        JsonLogger("verbose")
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sd_notify("READY=1") is False
