from __future__ import annotations

import hashlib
import math

import pytest

from models.trajectory import read_trajectories
from tests.support.trca_toy import RUBRIC

"""The toy worlds write TextWorld's state texts (policy.worlds.adapters.twx.compose_state)."""


# Hand computation, lambda 0.8, gamma 0.5; M: execution 2, evidence 1, invalidity 2.
# A: t0 take (+1/2, first) r = 0.2*0.5 + 0.8*0.5 = 0.5; t1 pear appears (+1, first) r = 1.0;
#    t2 put apple in fridge (+1/2, first) r = 0.5.  G2 = 0.5 + 1 = 1.5, G1 = 1 + 0.75 = 1.75, G0 = 1.375
# B: t0 not understood: r^F = -0.5, r = -0.1; t1 not understood + repeat without effect: r^F = -1, r = -0.2.
#    G1 = -0.2, G0 = -0.1 - 0.1 = -0.2
# C: t0 take: r = 0.5, G0 = 0.5 (failure: no terminal reward)
EXPECT = {
    "A": [(0.5, 0.5, 0.5, 1.375), (1.0, 1.0, 1.0, 1.75), (0.5, 0.5, 0.5, 1.5)],
    "B": [(-0.5, 0.0, -0.1, -0.2), (-1.0, 0.0, -0.2, -0.2)],
    "C": [(0.5, 0.5, 0.5, 0.5)],
}


def test_label_trca_cli_hand_computed(files, tmp_path, cli):
    data, rub = files
    out = tmp_path / "out.jsonl.gz"
    proc = cli(
        "label",
        "trca",
        str(data),
        "--rubrics",
        str(rub),
        "--gamma",
        "0.5",
        "--out",
        str(out),
        "--no-progress",
        check=True,
    )
    assert "3 trajectories, 6 steps" in proc.stdout and "steps/s" in proc.stdout
    # the label check of trca.total follows: one success in three is too few for a verdict, and it says so
    assert "label check from the success flags alone" in proc.stdout
    assert "warning: trca.total:" in proc.stdout and "too few" in proc.stdout
    trajs = {t.id: t for t in read_trajectories(out)}
    for tid, rows in EXPECT.items():
        got = [
            (
                s.labels["trca"]["foundational"],
                s.labels["trca"]["breakthrough"],
                s.labels["trca"]["total"],
                s.labels["trca"]["return"],
            )
            for s in trajs[tid].steps
        ]
        assert got == [pytest.approx(r) for r in rows], tid
    # episode-relative: G0 = 1.375, -0.2, 0.5 in one group (same instruction)
    g0 = [1.375, -0.2, 0.5]
    mean = sum(g0) / 3
    std = math.sqrt(sum((g - mean) ** 2 for g in g0) / 3)
    z = {tid: (g - mean) / std for tid, g in zip("ABC", g0, strict=False)}
    for tid in "ABC":
        assert [s.labels["trca"]["adv_episode"] for s in trajs[tid].steps] == pytest.approx(
            [z[tid]] * len(trajs[tid].steps)
        )
    # step-relative: the three first steps share the context O0 (same G0s as above); all others are singletons
    assert trajs["A"].steps[0].labels["trca"]["adv_step"] == pytest.approx(z["A"])
    assert trajs["B"].steps[0].labels["trca"]["adv_step"] == pytest.approx(z["B"])
    assert trajs["C"].steps[0].labels["trca"]["adv_step"] == pytest.approx(z["C"])
    assert [s.labels["trca"]["adv_step"] for s in trajs["A"].steps[1:]] == [0.0, 0.0]
    for t in trajs.values():
        for s in t.steps:
            lab = s.labels["trca"]
            assert lab["advantage"] == pytest.approx(lab["adv_episode"] + lab["adv_step"])
    # COREN labels and provenance kept; TRCA provenance added
    assert trajs["A"].steps[0].labels["coren"] == {"contextual": 1.0}
    assert trajs["A"].provenance["coren"] == {"judge_sha256": "x"}
    prov = trajs["A"].provenance["trca"]
    assert prov["rubric_sha256"] == hashlib.sha256(rub.read_bytes()).hexdigest()
    assert prov["rubric_version"] == 2 and prov["lambda"] == 0.8 and prov["gamma"] == 0.5


def test_dry_run_and_bad_input_write_nothing(files, tmp_path, cli):
    data, rub = files
    out = tmp_path / "out.jsonl"
    proc = cli("label", "trca", str(data), "--rubrics", str(rub), "--dry-run")
    assert proc.returncode == 0 and "3 trajectories, 6 steps" in proc.stdout and not out.exists()
    # no rubric for the task type (no embedded 'toy' rubric): one-line error, no output
    proc = cli("label", "trca", str(data), "--out", str(out))
    assert proc.returncode != 0 and "no rubric for task type 'toy'" in proc.stderr and not out.exists()
    # a broken rubric: file:line error, no output
    bad = tmp_path / "bad.toml"
    bad.write_text(RUBRIC.replace('category = "evidence"', 'category = "evidince"'))
    proc = cli("label", "trca", str(data), "--rubrics", str(bad), "--out", str(out))
    assert (
        proc.returncode != 0 and f"{bad}:" in proc.stderr and "evidince" in proc.stderr and not out.exists()
    )
    # an invalid dataset line: file:line error, and an existing output is left untouched
    out.write_text("keep me")
    data.write_text(data.read_text() + '{"format": 1, "id": "Z"}\n')
    proc = cli("label", "trca", str(data), "--rubrics", str(rub), "--out", str(out))
    assert proc.returncode != 0 and f"{data}:4:" in proc.stderr and out.read_text() == "keep me"
    # unknown options and out-of-range values are rejected loudly
    proc = cli("label", "trca", str(data), "--rubrics", str(rub), "--out", str(out), "--lamda", "0.5")
    assert proc.returncode == 2 and "No such option" in proc.stderr
    proc = cli("label", "trca", str(data), "--rubrics", str(rub), "--out", str(out), "--lambda", "1.5")
    assert proc.returncode == 2 and "1.5" in proc.stderr
    assert "--item-judge" in cli("label", "trca", "--help").stdout
