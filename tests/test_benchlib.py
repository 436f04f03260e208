"""What the tools write into tools/results/ names paths portably: relative to the repository, or by name."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import ROOT
from tools.bench.benchlib import portable_path, portable_paths


def test_a_path_inside_the_repository_becomes_relative_and_one_outside_its_name(tmp_path):
    assert portable_path(ROOT / "tools" / "results" / "x.json") == "tools/results/x.json"
    assert portable_path(str(ROOT)) == "."
    assert portable_path(tmp_path / "run" / "train.jsonl.gz") == "train.jsonl.gz"
    assert portable_path("/work/other/runs/bundle/") == "bundle"
    assert portable_path("data/train.jsonl.gz") == "data/train.jsonl.gz"  # relative: unchanged


def test_paths_inside_strings_are_rewritten_and_nothing_else():
    payload = {
        "command": f"python -m tools.bench.bench_policy --train /tmp/s2/t.jsonl.gz --out-dir={ROOT}/r/b",
        "log": ["wrote /tmp/x.y/a-b.jsonl.gz: 1 episodes, 40 steps, 0 steps/s (1.5 s)"],
        "machine": "x86_64; EDGEJUDGE_CACHE=/tmp/pe/cache",
        "endpoints": ["tcp://127.0.0.1:5555", "ipc:///tmp/edge.sock", "and/or", "1/2"],
        "numbers": [0.1 + 0.2, 3, None, True],
        "/tmp/key/name": 1.5,
    }
    out = portable_paths(payload)
    assert out["command"] == "python -m tools.bench.bench_policy --train t.jsonl.gz --out-dir=r/b"
    assert out["log"] == ["wrote a-b.jsonl.gz: 1 episodes, 40 steps, 0 steps/s (1.5 s)"]
    assert out["machine"] == "x86_64; EDGEJUDGE_CACHE=cache"
    assert out["endpoints"] == payload["endpoints"]
    assert out["numbers"] == payload["numbers"] and out["name"] == 1.5


@pytest.mark.parametrize("path", sorted((ROOT / "tools" / "results").glob("*.json")), ids=lambda p: p.name)
def test_committed_results_record_no_absolute_paths(path):
    text = path.read_text()
    assert portable_paths(json.loads(text)) == json.loads(text)
    assert not re.search(r"(/tmp/|/work/|/home/|/root/|/Users/)", text)
