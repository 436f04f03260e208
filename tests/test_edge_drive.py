"""tools/drive_edge.py: real TextWorldExpress episodes (JVM) driven through a real edge-serve daemon, and the
refusal of a bundle trained on another state format."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.edge_support import ROOT, exported_bundle

pytestmark = pytest.mark.real


def drive(*args: str) -> dict:
    """tools/drive_edge.py on the shared real bundle (format 2: the client sends the memory), 2 TWC test
    episodes; its JSON output."""
    cmd = [sys.executable, "tools/drive_edge.py", "--bundle", str(exported_bundle(2)), "--episodes", "2"]
    proc = subprocess.run(
        [*cmd, "--split", "test", "--json", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_drive_twx_episodes_through_edge_serve():
    out = drive("--max-steps", "3")
    assert out["episodes"] == 2 and out["split"] == "test" and out["env"] == "twx:twc"
    assert out["actions"] == out["latency"]["n"] and 1 <= out["actions"] <= 6
    assert out["invalid_action_rate"] == 0.0  # the daemon's index is always one of the admissible actions
    assert 0 < out["latency"]["server_ms_p50"] <= out["latency"]["round_trip_ms_p50"]
    assert len(out["model"]) == 64
    assert out["loop_guard"] is True and out["guard_overrides"] >= 0  # the default: the client keeps memory


def test_drive_with_the_placement_strategy_ranks_places_through_the_daemon():
    out = drive("--max-steps", "4", "--strategy", "placement-search")
    assert out["strategy"] == "placement-search" and out["searches"] >= 0
    assert out["invalid_action_rate"] == 0.0
    # every episode starts by taking an object; ranking its places is one more request to the daemon
    assert out["latency"]["n"] >= out["actions"] + 2


def test_drive_needs_exactly_one_target():
    proc = subprocess.run(
        [sys.executable, "tools/drive_edge.py", "--episodes", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "exactly one of --bundle" in proc.stderr
