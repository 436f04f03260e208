"""tools.probes.probe_policy_failures: hand-computed episode statistics, and a real rollout on a tiny
bundle."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.serving import ROOT, build_tiny_bundle
from tools.probes.probe_policy_failures import episode_stats, placements


def test_placements_and_episode_stats_by_hand():
    gold = placements(["look around", "take cup", "open cupboard", "put cup in cupboard", "put pen in desk"])
    assert gold == {"cup": "cupboard", "pen": "desk"}
    steps = [  # (action, the game's score after it): TWC scores a take and an accepted put 0.25 each
        ("take cup", 0.25),
        ("put cup in sink", 0.25),  # first put of cup: not accepted
        ("take cup", 0.25),  # from a place the game does not accept: not a take-back
        ("put cup in shelf", 0.5),  # accepted, though the gold path says cupboard
        ("take pen", 0.75),
        ("put pen in desk", 1.0),  # first put of pen: accepted
        ("take pen", 0.75),  # a take-back from an accepted place
        ("put pen in bed", 0.75),
    ]
    actions, scores = [a for a, _ in steps], [s for _, s in steps]
    assert episode_stats(actions, scores, list(gold)) == {
        "objects": 2,
        "first_put_correct": 1,
        "ever_correct": 2,
        "takebacks_from_correct_place": 1,
    }
    assert episode_stats([], [], list(gold))["first_put_correct"] == 0
    with pytest.raises(ValueError):
        episode_stats(["take cup"], [], list(gold))


@pytest.mark.real
def test_probe_runs_real_twc_episodes_on_a_bundle(tmp_path):
    bundle = build_tiny_bundle(tmp_path / "b")
    out = tmp_path / "probe.json"
    cmd = [sys.executable, "-m", "tools.probes.probe_policy_failures", str(bundle), "--episodes", "2"]
    cmd += ["--max-steps", "6"]
    p = subprocess.run(
        [*cmd, "--loop-guard", "--oracle-no-takeback", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    rep = json.loads(out.read_text())
    s = rep["summary"]
    assert s["episodes"] == 2 and s["loop_guard"] and s["oracle_no_takeback"]
    assert 0.0 <= s["first_put_correct"] <= s["ever_correct"] <= 1.0
    for ep in rep["episodes"]:
        assert ep["objects"] == len(ep["gold"]) == 2  # the default TWC configuration puts away two objects
        assert 1 <= len(ep["actions"]) == len(ep["scores"]) <= 6
