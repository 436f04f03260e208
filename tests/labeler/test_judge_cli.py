"""`edgejudge judge batch|cache`: input errors say file:line, nothing written on failure (subprocesses)."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"prefix": "a", "choices": [" Yes"]}', "not json"], "q.jsonl:2: not JSON"),
        (['{"prefix": "a", "choices": [" Yes"], "extra": 1}'], "q.jsonl:1: expected an object with prefix"),
        (['{"prefix": 3, "choices": [" Yes"]}'], "q.jsonl:1: prefix: expected a string"),
        (['{"prefix": "a", "choices": []}'], "q.jsonl:1: choices: expected a non-empty list"),
        ([""], "q.jsonl: no queries"),
    ],
    ids=["not-json", "unknown-field", "prefix-type", "no-choices", "empty"],
)
def test_batch_rejects_bad_query_files(cli, tmp_path, lines, message):
    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    r = cli("judge", "batch", str(q), "--out", str(out), "--cache", str(tmp_path / "c.sqlite"))
    assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


@pytest.mark.real
def test_batch_then_cache_summary(cli, tmp_path):
    q = tmp_path / "q.jsonl"
    rows = [
        {"prefix": "Question: Is the sun hot?\nAnswer:", "choices": [" Yes", " No"]},
        {"prefix": "Question: Is ice hot?\nAnswer:", "choices": [" Yes", " No", " It depends"]},
        {"prefix": "Question: Is the sun hot?\nAnswer:", "choices": [" Yes", " No"]},
    ]
    q.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cache = tmp_path / "c.sqlite"
    out = tmp_path / "out.jsonl"
    r = cli("judge", "batch", str(q), "--out", str(out), "--cache", str(cache), "--template", "t", check=True)
    summary = json.loads(r.stdout)
    assert summary["queries"] == 3 and summary["stats"]["cache_hits"] == 1  # the duplicate
    res = [json.loads(line) for line in out.read_text().splitlines()]
    assert [len(x["probs"]) for x in res] == [2, 3, 2] and res[0] == res[2]
    info = json.loads(cli("judge", "cache", str(cache), check=True).stdout)
    assert info["entries"] == 2 and info["integrity"] == "ok" and info["groups"][0]["template"] == "t"
