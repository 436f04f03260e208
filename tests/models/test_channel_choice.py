"""The channel a log's check chose, recorded beside the log for ``train --reward auto``."""

from __future__ import annotations

import pytest

from models.channel_choice import choice_path, read_choice, write_choice


def test_a_choice_is_recorded_beside_its_log_and_read_back(tmp_path):
    log = tmp_path / "fleet.trca.jsonl.gz"
    assert choice_path(log) == tmp_path / "fleet.trca.choice.json"
    assert read_choice(log) is None
    write_choice(log, "trca.total", "person", "the audit by person supports it")
    assert read_choice(log) == {
        "channel": "trca.total",
        "by": "person",
        "evidence": "the audit by person supports it",
    }
    choice_path(log).write_text('{"channel": "total"}')
    with pytest.raises(ValueError, match="not a channel choice"):
        read_choice(log)
