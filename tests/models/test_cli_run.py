"""``edgejudge`` in a subprocess, as a pipeline of commands runs each step: this checkout's code from any
folder, its stdout, and a failure that names the command and ends with its stderr."""

from __future__ import annotations

import click
import pytest

from models.cli_run import edgejudge


def test_the_child_runs_this_checkouts_code_in_the_folder_given(tmp_path):
    (tmp_path / "models").mkdir()  # a folder of the same name where the command runs is not imported
    out = edgejudge("data", "--help", cwd=tmp_path, timeout=120)
    assert "subset" in out and "response-only" in out


def test_a_failing_step_names_the_command_and_its_error(tmp_path):
    with pytest.raises(click.ClickException) as e:
        edgejudge("data", "stats", str(tmp_path / "missing.jsonl"), cwd=tmp_path, timeout=120)
    assert e.value.message.startswith(f"edgejudge data stats {tmp_path / 'missing.jsonl'} failed:\n")
    assert "missing.jsonl" in e.value.message.splitlines()[-1]
