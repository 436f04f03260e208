from __future__ import annotations

import re

import pytest

LEAKY = {"EDGEJUDGE_ENVS": "leaky=tests.support.leaky_adapter:LeakyAdapter"}


def test_envs_command_lists_names_and_parameters(cli):
    listing = cli("envs", check=True).stdout
    assert "twx:twc " in listing and "twx:cookingworld " in listing
    detail = cli("envs", "twx:twc", check=True).stdout
    assert "state format twx/2" in detail and "level=...  default 'easy' (easy, medium, hard)" in detail
    assert "strategies (opt-in): placement-search" in detail
    bad = cli("envs", "twx:nope")
    assert bad.returncode == 2 and "expected one of twc, cookingworld" in bad.stderr


def test_envs_check_bad_names_are_usage_errors(cli):
    proc = cli("envs", "check", "mine:x", env={"EDGEJUDGE_ENVS": "mine=no_such_module:X"})
    assert proc.returncode == 2 and "No module named 'no_such_module'" in proc.stderr
    assert "PYTHONPATH" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("envs", "check", "twx:twc", "--only", "everything")
    assert (
        proc.returncode == 2 and "unknown check 'everything': expected one of describes-itself" in proc.stderr
    )


@pytest.mark.real
def test_envs_check_passes_on_a_shipped_world(cli):
    proc = cli("envs", "check", "twx:twc", "--params", "level=easy", "--max-steps", "20", check=True)
    lines = proc.stdout.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == ["PASS"] * 8, proc.stdout
    assert "PASS no-score-in-state" in lines and lines[-1].endswith("8 passed, 0 failed, 0 skipped")


@pytest.mark.real
def test_envs_check_fails_on_an_adapter_that_shows_the_score(cli):
    proc = cli("envs", "check", "leaky:twc", "--max-steps", "20", env=LEAKY)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1, proc.stdout
    assert failed[0].startswith("FAIL no-score-in-state: the state text carries the ground truth: ")
    assert re.search(r"\bscore 1 shown as '[^']*Your score: 1'", failed[0]), failed[0]
    assert "under EnvState.info only" in failed[0]
