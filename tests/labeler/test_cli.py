from __future__ import annotations

import json


def test_data_validate_and_stats_cli(tmp_path, cli):
    from labeler.dataset import write_trajectories
    from tests.support.trajectories import make_traj

    good = tmp_path / "good.jsonl"
    write_trajectories(good, [make_traj(0), make_traj(1, success=False)])
    ok = cli("data", "validate", str(good))
    assert ok.returncode == 0 and "OK (2 trajectories)" in ok.stdout
    st = cli("data", "stats", str(good), "--json", check=True)
    assert json.loads(st.stdout)["success_rate"] == 0.5

    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + '{"id": 1}\n')
    proc = cli("data", "validate", str(bad))
    assert proc.returncode == 1
    assert f"{bad}:3: id: expected str, got int" in proc.stderr
    assert cli("data", "stats", str(bad)).returncode != 0
    skipped = cli("data", "stats", str(bad), "--skip-invalid", "--json", check=True)
    assert json.loads(skipped.stdout)["skipped_lines"] == 1
