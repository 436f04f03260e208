"""tools.bench.bench_collect on a real world, tiny: one row per world with both sides' speeds, the ratio, the
runs per side and the load average."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.paths import ROOT


@pytest.mark.real
def test_bench_collect_writes_a_row_per_world(tmp_path):
    out = tmp_path / "collect.json"
    proc = subprocess.run(
        [sys.executable, "-m", "tools.bench.bench_collect", "--world", "twx:twc@level=easy",
         "--episodes", "3", "--max-steps", "10", "--repeats", "2", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(out.read_text())["worlds"]
    assert row["world"] == "twx:twc@level=easy" and row["episodes"] == 3 and row["max_steps"] == 10
    assert row["baseline_env_steps"] > 0 and row["collect_steps"] > 0
    assert len(row["runs_steps_per_s"]["baseline"]) == len(row["runs_steps_per_s"]["collect"]) == 2
    assert row["baseline_env_steps_per_s"] == max(row["runs_steps_per_s"]["baseline"])
    ratio = row["collect_steps_per_s"] / row["baseline_env_steps_per_s"]
    assert abs(row["ratio_collect_vs_env"] - ratio) < 0.01
    assert len(row["load_avg_1min"]) == 2


def test_bench_collect_rejects_a_world_without_a_baseline(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tools.bench.bench_collect", "--world", "nosuch:task"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode != 0 and "Error" in proc.stderr and "Traceback" not in proc.stderr
