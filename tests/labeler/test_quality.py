"""Label quality: rank-based AUROC (hand-computed cases, ties) and the ``label quality`` command."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labeler.dataset import Step, Trajectory, write_trajectories
from labeler.quality import BASELINE, auroc, average_ranks, channel_names, measure


def _dataset() -> list[Trajectory]:
    def step(progress: float, gold: bool, value: float, reward: float = 0.0) -> Step:
        return Step(
            observation="o",
            action="a",
            candidates=["a", "b"],
            next_observation="o2",
            env_reward=reward,
            info={"progress": progress, "gold": gold},
            labels={"m": {"good": value, "bad": -value, "dist": [0.5, 0.5]}},
        )

    ok = Trajectory(
        id="t1",
        instruction="i",
        task_type="x",
        success=True,
        steps=[step(0.5, True, 1.0), step(0.0, False, 0.0), step(0.5, True, 1.0, reward=1.0)],
    )
    fail = Trajectory(
        id="t2",
        instruction="i",
        task_type="x",
        success=False,
        steps=[step(0.0, False, 0.0), step(0.0, True, 0.0)],
    )
    return [ok, fail]


def test_average_ranks_ties():
    assert average_ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]
    assert average_ranks([5.0, 5.0, 5.0]) == [2.0, 2.0, 2.0]
    assert average_ranks([]) == []


def test_auroc_hand_computed():
    # perfect separation
    assert auroc([0.1, 0.2, 0.8, 0.9], [False, False, True, True]) == 1.0
    # perfectly inverted
    assert auroc([0.9, 0.8, 0.2, 0.1], [False, False, True, True]) == 0.0
    # pairs (pos, neg): (0.5 vs 0.1) win, (0.5 vs 0.7) loss, (0.9 vs 0.1) win, (0.9 vs 0.7) win -> 3/4
    assert auroc([0.1, 0.7, 0.5, 0.9], [False, False, True, True]) == 0.75


def test_auroc_ties_count_half():
    # all tied: chance
    assert auroc([1.0, 1.0, 1.0, 1.0], [True, False, True, False]) == 0.5
    # pos {1, 2}, neg {1, 0}: (1 vs 1) tie .5, (1 vs 0) 1, (2 vs 1) 1, (2 vs 0) 1 -> 3.5/4
    assert auroc([1.0, 2.0, 1.0, 0.0], [True, True, False, False]) == 0.875


def test_auroc_one_class_is_none_and_bad_input_raises():
    assert auroc([0.1, 0.2], [True, True]) is None
    assert auroc([], []) is None
    with pytest.raises(ValueError, match="not finite"):
        auroc([float("nan"), 1.0], [True, False])
    with pytest.raises(ValueError, match="2 scores but 1 labels"):
        auroc([1.0, 2.0], [True])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.booleans()), min_size=2, max_size=30))
def test_auroc_matches_pairwise_definition(pairs):
    scores = [float(s) for s, _ in pairs]
    labels = [y for _, y in pairs]
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    got = auroc(scores, labels)
    if not pos or not neg:
        assert got is None
        return
    want = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))
    assert math.isclose(got, want, abs_tol=1e-12)


def test_measure_channels_and_baseline():
    trajs = _dataset()
    assert channel_names(trajs) == ["m.bad", "m.good"]  # list-valued channels are not rewards
    r = measure(trajs, "mem")
    by = {c.channel: c for c in r.channels}
    assert set(by) == {"m.bad", "m.good", BASELINE}
    assert (r.steps, r.progress_steps, r.gold_steps, r.successes) == (5, 2, 3, 1)
    assert by["m.good"].auroc_progress == 1.0 and by["m.bad"].auroc_progress == 0.0
    # gold: positives {1, 1, 0}, negatives {0, 0}: 2 wins * 2 + 1 * (0.5 + 0.5) -> 5/6
    assert by["m.good"].auroc_gold == pytest.approx(5 / 6)
    assert by["m.good"].auroc_success == 1.0
    # env reward: only the last step of the success is 1
    assert by[BASELINE].auroc_progress == pytest.approx(0.75)


def test_quality_cli_json_and_plot(cli, tmp_path):
    path = tmp_path / "labeled.jsonl"
    write_trajectories(path, _dataset())
    png = tmp_path / "q.png"
    proc = cli("label", "quality", str(path), "--json", "--plot", str(png), check=True)
    data = json.loads(proc.stdout)
    assert {c["channel"] for c in data["channels"]} == {"m.bad", "m.good", BASELINE}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = cli("label", "quality", str(path), check=True).stdout
    assert "m.good" in text and "AUROC progress" in text


def test_quality_cli_bad_input(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n')
    proc = cli("label", "quality", str(bad))
    assert proc.returncode == 1 and f"{bad}:1:" in proc.stderr
    proc = cli("label", "quality", str(bad), "--bogus")
    assert proc.returncode == 2 and "--bogus" in proc.stderr
