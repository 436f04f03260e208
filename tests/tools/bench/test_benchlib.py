"""What the tools write into tools/results/: every results JSON through one writer that records the machine,
the load average and the commit, and names paths portably (relative to the repository, or by name)."""

from __future__ import annotations

import ast
import json
import re

import numpy as np
import pytest

from tests.support.paths import ROOT
from tools.bench.benchlib import (
    PROVENANCE,
    machine,
    portable_path,
    portable_paths,
    write_results,
)


def test_a_path_inside_the_repository_becomes_relative_and_one_outside_its_name(tmp_path):
    assert portable_path(ROOT / "tools" / "results" / "x.json") == "tools/results/x.json"
    assert portable_path(str(ROOT)) == "."
    assert portable_path(tmp_path / "run" / "train.jsonl.gz") == "train.jsonl.gz"
    assert portable_path("/work/other/runs/bundle/") == "bundle"
    assert portable_path("data/train.jsonl.gz") == "data/train.jsonl.gz"  # relative: unchanged


def test_paths_inside_strings_are_rewritten_and_nothing_else():
    payload = {
        "command": f"python -m tools.bench.bench_collect --train /tmp/s2/t.jsonl.gz --out-dir={ROOT}/r/b",
        "log": ["wrote /tmp/x.y/a-b.jsonl.gz: 1 episodes, 40 steps, 0 steps/s (1.5 s)"],
        "machine": "x86_64; EDGEJUDGE_CACHE=/tmp/pe/cache",
        "endpoints": ["tcp://127.0.0.1:5555", "ipc:///tmp/edge.sock", "and/or", "1/2"],
        "numbers": [0.1 + 0.2, 3, None, True],
        "/tmp/key/name": 1.5,
    }
    out = portable_paths(payload)
    assert out["command"] == "python -m tools.bench.bench_collect --train t.jsonl.gz --out-dir=r/b"
    assert out["log"] == ["wrote a-b.jsonl.gz: 1 episodes, 40 steps, 0 steps/s (1.5 s)"]
    assert out["machine"] == "x86_64; EDGEJUDGE_CACHE=cache"
    assert out["endpoints"] == payload["endpoints"]
    assert out["numbers"] == payload["numbers"] and out["name"] == 1.5


@pytest.mark.parametrize("path", sorted((ROOT / "tools" / "results").glob("*.json")), ids=lambda p: p.name)
def test_committed_results_record_no_absolute_paths(path):
    text = path.read_text()
    assert portable_paths(json.loads(text)) == json.loads(text)
    assert not re.search(r"(/tmp/|/work/|/home/|/root/|/Users/)", text)


def test_write_results_puts_provenance_first_and_overrides_a_tool_own_fields(tmp_path):
    out = tmp_path / "deep" / "r.json"
    written = write_results(
        out,
        {"machine": "my laptop", "rows": [1, np.float64(0.5), np.int64(3)], "log": f"wrote {tmp_path}/x.gz"},
        indent=1,
    )
    assert json.loads(out.read_text()) == written and out.read_text().endswith("}\n")
    assert list(written)[:3] == list(PROVENANCE)
    assert written["machine"] == machine() and written["rows"] == [1, 0.5, 3]
    assert written["log"] == "wrote x.gz"
    assert len(written["load_average"]) == 3 and all(isinstance(x, float) for x in written["load_average"])
    assert [p.name for p in out.parent.iterdir()] == ["r.json"]  # no temporary file left


def test_no_tool_formats_its_own_machine_string_or_load_average():
    """One definition each: benchlib.machine() and benchlib.load_average()."""
    bad = []
    for path in sorted((ROOT / "tools").rglob("*.py")):
        if path.name == "benchlib.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("getloadavg", "machine", "cpu_count"):
                if getattr(node.value, "id", None) in ("os", "platform"):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    assert bad == []
