from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from models.trajectory import Step, Trajectory, write_trajectories
from tests.support.paths import ROOT


def _labeled(path: Path, value: float) -> None:
    steps = [Step("o", "a", ["a"], "o2", labels={"coren": {"contextual": value, "temporal": 1.0}})]
    write_trajectories(path, [Trajectory("t0", "do", "twc", False, steps)])


def test_compare_labels_says_whether_two_files_agree(tmp_path):
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    _labeled(a, 1.0)
    _labeled(b, 1.0)
    _labeled(c, 2.0)
    tool = [sys.executable, "-m", "tools.setup.compare_labels", "coren"]
    same = subprocess.run([*tool, str(a), str(b)], capture_output=True, text=True, cwd=ROOT)
    assert same.returncode == 0 and "1 of 1 steps identical" in same.stdout
    differ = subprocess.run([*tool, str(a), str(c)], capture_output=True, text=True, cwd=ROOT)
    assert differ.returncode == 1 and "contextual" in differ.stderr
    only = subprocess.run(
        [*tool, str(a), str(c), "--channels", "temporal"], capture_output=True, text=True, cwd=ROOT
    )
    assert only.returncode == 0
