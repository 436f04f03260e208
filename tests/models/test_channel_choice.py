"""The channel a log's check chose, recorded beside the log for ``train --reward auto``."""

from __future__ import annotations

import pytest

from models.channel_choice import ChoiceError, choice_path, chosen_channel, read_choice, write_choice


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


def test_the_chosen_channel_is_the_recorded_one_with_its_evidence(tmp_path):
    log = tmp_path / "fleet.trca.jsonl.gz"
    write_choice(log, "trca.total", "person", "the audit by person supports it")
    assert chosen_channel(log) == ("trca.total", "the audit by person supports it")


def test_no_recorded_choice_is_an_error_naming_the_log_and_the_commands_that_record_one(tmp_path):
    """No default channel stands in: ``auto`` means a channel an audit supports, and there is none."""
    log = tmp_path / "fleet.trca.jsonl.gz"
    with pytest.raises(ChoiceError) as e:
        chosen_channel(log)
    assert str(e.value) == (
        f"no channel chosen for {log}: 'edgejudge label audit {log}' (a person, or --auditor judge), then "
        f"'edgejudge label quality {log} --audit {tmp_path / 'fleet.trca.audit.jsonl'}' records the one the "
        "audit supports"
    )
    choice_path(log).write_text("[]")
    with pytest.raises(ChoiceError, match="not a channel choice"):
        chosen_channel(log)
