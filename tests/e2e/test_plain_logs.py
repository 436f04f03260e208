"""A user's own log, end to end with real components: TextWorld episodes flattened into plain text (no layout,
format or environment recorded), the real judge builds an unreviewed rubric, TRCA labels, and the labels rank
steps better than the sparse reward; the how-to's robot event log goes validate -> layout -> rubrics ->
labels -> quality -> train -> export."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from labeler.quality import measure
from models.state_layout import PLAIN_LAYOUT, layout_of
from models.trajectory import read_trajectories, write_trajectories
from tests.support.paths import ROOT

pytestmark = pytest.mark.real


EXAMPLE = ROOT / "examples" / "robot_log" / "events.jsonl.gz"


def _flatten(path: Path, out: Path) -> None:
    """``path`` as a log no adapter wrote: each 'Label: value' line reduced to its value, no layout."""
    trajs = read_trajectories(path)
    for t in trajs:
        labels = tuple(p.label + ":" for p in layout_of(t.meta).parts)
        for s in t.steps:
            for attr in ("observation", "next_observation"):
                lines = []
                for line in getattr(s, attr).splitlines():
                    head = next((lb for lb in labels if line.startswith(lb)), "")
                    if line[len(head) :].strip():
                        lines.append(line[len(head) :].strip())
                setattr(s, attr, "\n".join(lines))
        t.meta = {}
    write_trajectories(out, trajs)


def _auroc(path: Path, channel: str) -> float:
    rep = measure(read_trajectories(path)).to_dict()
    return next(c["auroc_progress"] for c in rep["channels"] if c["channel"] == channel)


def test_trca_on_a_flattened_textworld_log_beats_sparse(tmp_path, cli):
    from policy.worlds.adapters import parse_env
    from policy.worlds.collect import CollectConfig, collect

    cfg = CollectConfig(parse_env("twx:twc"), split="train", episodes=12, behaviour="gold-noise", noise=0.4,
                        seed=3, max_steps=25)  # fmt: skip
    raw, plain = tmp_path / "twc.jsonl.gz", tmp_path / "twc.plain.jsonl.gz"
    write_trajectories(raw, collect(cfg))
    _flatten(raw, plain)
    rubric, labeled = tmp_path / "twc.toml", tmp_path / "twc.plain.trca.jsonl.gz"
    b = cli("rubrics", "build", "--dataset", str(plain), "--task-type", "twc", "--out", str(rubric),
            "--check-folds", "0", "--no-progress", timeout=600)  # fmt: skip
    assert b.returncode == 0, b.stderr
    assert b.stderr.count("no state layout recorded; inferred: plain text") == 1  # one line, said once
    lab = cli("label", "trca", str(plain), "--rubrics", str(rubric), "--out", str(labeled), "--no-progress")
    assert lab.returncode == 0, lab.stderr
    assert lab.stderr.count("no state layout recorded; inferred: plain text") == 1
    trajs = read_trajectories(labeled)
    assert layout_of(trajs[0].meta) == PLAIN_LAYOUT and trajs[0].meta["state_layout_inferred"]
    trca, sparse = _auroc(labeled, "trca.total"), _auroc(labeled, "env.reward")
    assert trca > sparse + 0.1, (trca, sparse)


def test_the_robot_event_log_how_to(tmp_path, cli):
    log = tmp_path / "events.jsonl.gz"
    log.write_bytes(EXAMPLE.read_bytes())
    v = cli("data", "validate", str(log))
    assert v.returncode == 0 and "inferred: plain text" in v.stdout
    rubric = tmp_path / "tidy-arm.toml"
    b = cli("rubrics", "build", "--dataset", str(log), "--task-type", "tidy-arm", "--out", str(rubric),
            "--no-progress", timeout=600)  # fmt: skip
    assert b.returncode == 0, b.stderr
    labeled = tmp_path / "events.trca.jsonl.gz"
    lab = cli("label", "trca", str(log), "--rubrics", str(rubric), "--out", str(labeled), "--no-progress")
    assert lab.returncode == 0, lab.stderr
    q = cli("label", "quality", str(labeled), "--json")
    assert q.returncode == 0, q.stderr
    channels = {c["channel"]: c for c in json.loads(q.stdout)["channels"]}
    assert channels["trca.total"]["auroc_progress"] > channels["env.reward"]["auroc_progress"]
    # COREN on the same plain-text log, unchanged in method: the judge rates its steps
    coren = tmp_path / "events.coren.jsonl.gz"
    c = cli("label", "coren", str(labeled), "--out", str(coren), "--limit", "1", "--prompts", "1",
            "--no-progress", timeout=600)  # fmt: skip
    assert c.returncode == 0, c.stderr
    assert "coren.ensemble" in c.stdout and "step credit unverified" in c.stdout  # the closing check
    first = read_trajectories(coren)[0]
    for s in first.steps:
        lab = s.labels["coren"]
        assert {"contextual", "structural", "temporal", "ensemble"} <= set(lab)
        assert all(math.isfinite(lab[k]) for k in ("contextual", "structural", "temporal", "ensemble"))
    ckpt, bundle = tmp_path / "ckpt", tmp_path / "bundle"
    t = cli("train", str(labeled), "--algo", "iql", "--reward", "trca", "--steps", "60",
            "--encoder", "static",
            "--out", str(ckpt), "--no-progress", timeout=900)  # fmt: skip
    assert t.returncode == 0, t.stderr
    e = cli("export", str(ckpt), "--out", str(bundle), timeout=900)
    assert e.returncode == 0, e.stderr
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["world"]["state_layout"] == PLAIN_LAYOUT.to_dict()
    ev = cli("eval", str(bundle), "--episodes", "1")
    assert ev.returncode != 0 and "names no environment" in ev.stderr  # no simulator to guess: one line
