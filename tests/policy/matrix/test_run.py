"""The matrix's rows computed (policy.matrix.run), without a simulator or judge: a row whose reward is
``auto`` and whose labeled file has no recorded choice is stored as an error that says how to record one."""

from __future__ import annotations

from pathlib import Path

from models.trajectory import Step, Trajectory, read_trajectories, write_trajectories
from policy.matrix.plan import QUICK, parse_world, units, with_overrides
from policy.matrix.run import Matrix
from policy.matrix.store import RowStore


def _traj(tid: str, success: bool) -> Trajectory:
    steps = [
        Step(f"o{i}", f"a{i}", [f"a{i}"], f"o{i + 1}", labels={"trca": {"total": 0.5}}) for i in range(2)
    ]
    return Trajectory(id=tid, instruction="i", task_type="t", success=success, steps=steps)


def test_an_auto_row_without_a_choice_is_stored_as_an_error_before_any_training(tmp_path):
    s = with_overrides(QUICK, sizes=(4,), seeds=(0,), sources=("trca-auto",), algos=("credit",),
                       max_success_rate=0.5)  # fmt: skip
    w = parse_world("twc-easy")
    m = Matrix(s, [w], tmp_path / "work", RowStore(tmp_path / "rows.json"), keep_bundles=False)
    wd = m.data(w)
    write_trajectories(wd.dir / "pool-20.jsonl.gz", [_traj(f"e{i}", i % 3 == 0) for i in range(20)])
    labeled = wd.label_path("trca", 4)
    write_trajectories(labeled, read_trajectories(wd.plain(4)))
    (u,) = units(w, s)
    m.run_unit(u)
    rows = [m.store.get(r) for r in u.rows]
    assert rows and all(r["status"] == "error" for r in rows)
    assert all(f"no channel chosen for {labeled}" in r["reason"] for r in rows)
    assert all("edgejudge label audit" in r["reason"] for r in rows)
    assert not (wd.dir / "ckpt").exists()  # nothing trained


def test_an_auto_checkpoint_of_another_channel_than_the_recorded_choice_is_trained_again(
    tmp_path, monkeypatch
):
    """The file was audited again and now supports another channel: the checkpoint that learned the old one
    is not reused for rows that name the new one."""
    import json

    import policy.matrix.run as run
    from models.channel_choice import write_choice

    calls: list[tuple[str, ...]] = []

    def fake_edgejudge(*args: str, **_kw) -> str:
        calls.append(args)
        out = Path(args[args.index("--out") + 1])
        out.mkdir(parents=True, exist_ok=True)
        if args[0] == "train":
            (out / "checkpoint.json").write_text(json.dumps({"reward": args[args.index("--reward") + 1]}))
        else:
            (out / "manifest.json").write_text("{}")
        return "{}"

    monkeypatch.setattr(run, "edgejudge", fake_edgejudge)
    s = with_overrides(QUICK, sizes=(4,), seeds=(0,), sources=("trca-auto",), algos=("credit",))
    w = parse_world("twc-easy")
    m = Matrix(s, [w], tmp_path / "work", RowStore(tmp_path / "rows.json"), keep_bundles=False)
    (u,) = units(w, s)
    labeled = tmp_path / "labeled.jsonl.gz"
    write_trajectories(labeled, [_traj("e0", True)])
    ckpt, bundle = tmp_path / "ckpt", tmp_path / "bundle"
    write_choice(labeled, "trca.total", "person", "the audit by person supports it")
    m.fit(u, labeled, ckpt, bundle)
    assert [c[0] for c in calls] == ["train", "export"]
    m.fit(u, labeled, ckpt, bundle)
    assert len(calls) == 2  # the same choice: reused
    write_choice(labeled, "trca.progress", "person", "the audit by person supports it")
    m.fit(u, labeled, ckpt, bundle)
    assert [c[0] for c in calls[2:]] == ["train", "export"]
    assert json.loads((ckpt / "checkpoint.json").read_text())["reward"] == "trca.progress"
