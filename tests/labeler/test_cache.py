"""The SQLite (WAL) label cache: unit tests, and a REAL labeling subprocess killed with SIGKILL, resumed."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from labeler.cache import SCHEMA_VERSION, CacheError, LabelCache, make_key
from tests.support.paths import ROOT


def _put(c: LabelCache, key: str, payload: dict) -> None:
    c.put(key, payload, kind="score", model_sha256="m" * 64, template="t", version=1)


WORKER_ENV = {"EDGEJUDGE_THREADS": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}


def test_roundtrip_and_reopen(tmp_path):
    path = tmp_path / "sub" / "c.sqlite"
    k = make_key("score", "m" * 64, "t", 1, "prompt", [" Yes", " No"])
    with LabelCache(path) as c:
        assert c.get(k) is None
        _put(c, k, {"logprobs": [-0.1, -2.5], "ntokens": [1, 1]})
        assert c.get(k) == {"logprobs": [-0.1, -2.5], "ntokens": [1, 1]}
        assert c.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with LabelCache(path) as c:  # persisted
        assert len(c) == 1
        assert c.get_many([k, "missing"]) == {k: {"logprobs": [-0.1, -2.5], "ntokens": [1, 1]}}
        assert c.summary()["groups"][0]["entries"] == 1
        assert c.integrity_check() == "ok"


def test_key_depends_on_everything_that_changes_the_answer():
    base = ("score", "m" * 64, "t", 1, "prompt", [" Yes", " No"])
    k = make_key(*base)
    assert make_key(*base) == k
    variants = [
        ("score", "n" * 64, "t", 1, "prompt", [" Yes", " No"]),
        ("score", "m" * 64, "u", 1, "prompt", [" Yes", " No"]),
        ("score", "m" * 64, "t", 2, "prompt", [" Yes", " No"]),
        ("score", "m" * 64, "t", 1, "prompt ", [" Yes", " No"]),
        ("score", "m" * 64, "t", 1, "prompt", [" No", " Yes"]),
        ("generate", "m" * 64, "t", 1, "prompt", [" Yes", " No"]),
    ]
    assert len({make_key(*v) for v in variants} | {k}) == len(variants) + 1


def test_bad_files_give_clear_errors(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all, just text" * 100)
    with pytest.raises(CacheError, match="not a usable label cache"):
        LabelCache(junk)
    newer = tmp_path / "newer.sqlite"
    with LabelCache(newer):
        pass
    db = sqlite3.connect(newer)
    db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    with pytest.raises(CacheError, match="schema"):
        LabelCache(newer)
    c = LabelCache(tmp_path / "closed.sqlite")
    c.close()
    with pytest.raises(CacheError, match="closed"):
        c.get("x")


def test_two_connections_share_one_file(tmp_path):
    path = tmp_path / "c.sqlite"
    with LabelCache(path) as a, LabelCache(path) as b:
        _put(a, "k1", {"v": 1})
        _put(b, "k2", {"v": 2})
        assert a.get("k2") == {"v": 2} and b.get("k1") == {"v": 1}


@pytest.mark.real
def test_sigkilled_labeling_run_resumes_without_recomputation(tmp_path):
    """A real `edgejudge judge batch` subprocess on the real GGUF, killed with SIGKILL mid-run, then rerun."""
    n = 30
    queries = tmp_path / "q.jsonl"
    with open(queries, "w") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {
                        "prefix": f"Question: Is the number {i} larger than 10?\nAnswer:",
                        "choices": [" Yes", " No"],
                    }
                )
                + "\n"
            )
    cache = tmp_path / "labels.sqlite"
    out = tmp_path / "out.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "models.cli",
        "judge",
        "batch",
        str(queries),
        "--out",
        str(out),
        "--cache",
        str(cache),
        "--template",
        "kill-test",
        "--no-progress",
    ]
    env = {**os.environ, **WORKER_ENV}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = 0
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            if cache.exists():
                try:
                    db = sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5)
                    done = db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
                    db.close()
                except sqlite3.OperationalError:
                    done = 0  # tables not created yet
            if done >= 5:
                break
            time.sleep(0.05)
        assert proc.poll() is None, (
            f"worker ended before it could be killed: {proc.stderr.read().decode()[-2000:]}"
        )
        assert done >= 5, "worker wrote nothing within 180 s"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()  # no partial output file
    with LabelCache(cache) as c:  # opens (WAL recovery) and is consistent
        assert c.integrity_check() == "ok"
        finished = len(c)
    assert 5 <= finished < n

    rerun = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    stats = json.loads(rerun.stdout.strip().splitlines()[-1])["stats"]
    assert stats["cache_hits"] == finished  # every finished query came from the cache ...
    assert stats["queries"] == n  # ... and only the rest was computed
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == n
    assert all(abs(sum(r["probs"]) - 1.0) < 1e-9 for r in lines)
    with LabelCache(cache) as c:
        assert len(c) == n and c.integrity_check() == "ok"
