"""A response-only log, end to end with real components: each state of `examples/response_log/events.jsonl.gz`
is only the last response and an inventory line (ScienceWorld, two task types). The real judge builds one
unreviewed rubric per task type in one ``rubrics build`` without --task-type, each with a header that says
the checks read the episode so far; TRCA and the success-model potential label it; both rank steps above
the sparse reward; a policy trains on the potential and exports."""

from __future__ import annotations

import json

import pytest

from models.trajectory import read_trajectories
from tests.support.paths import ROOT

pytestmark = pytest.mark.real

EXAMPLE = ROOT / "examples" / "response_log" / "events.jsonl.gz"
TASKS = ("find-animal", "find-plant")


def test_the_response_only_log_how_to(tmp_path, cli):
    log = tmp_path / "events.jsonl.gz"
    log.write_bytes(EXAMPLE.read_bytes())
    assert sorted({t.task_type for t in read_trajectories(log)}) == list(TASKS)
    b = cli("rubrics", "build", "--dataset", str(log), "--out", str(tmp_path / "events.toml"),
            "--check-folds", "0", "--no-progress", timeout=1200)  # fmt: skip
    assert b.returncode == 0, b.stderr  # one call, one rubric per task type
    rubrics = []
    for task in TASKS:
        rubric = tmp_path / f"events.{task}.toml"
        assert "show only part of the scene in each state: their checks read the episode so far" in (
            " ".join(line.lstrip("# ").strip() for line in rubric.read_text().splitlines())
        )
        rubrics += ["--rubrics", str(rubric)]
    trca, labeled = tmp_path / "events.trca.jsonl.gz", tmp_path / "events.labeled.jsonl.gz"
    lab = cli("label", "trca", str(log), *rubrics, "--out", str(trca), "--no-progress")
    assert lab.returncode == 0, lab.stderr
    pot = cli("label", "potential", str(trca), "--out", str(labeled))
    assert pot.returncode == 0, pot.stderr
    q = cli("label", "quality", str(labeled), "--json")
    assert q.returncode == 0, q.stderr
    auroc = {c["channel"]: c["auroc_progress"] for c in json.loads(q.stdout)["channels"]}
    assert auroc["potential.delta"] >= 0.75, auroc  # 0.795 when measured
    assert auroc["trca.total"] > auroc["env.reward"] + 0.05, auroc
    ckpt, bundle = tmp_path / "ckpt", tmp_path / "bundle"
    t = cli("train", str(labeled), "--algo", "iql", "--reward", "potential", "--steps", "40",
            "--encoder", "static", "--out", str(ckpt), "--no-progress", timeout=900)  # fmt: skip
    assert t.returncode == 0, t.stderr
    e = cli("export", str(ckpt), "--out", str(bundle), timeout=900)
    assert e.returncode == 0, e.stderr
    assert (bundle / "manifest.json").exists()
