"""COREN end to end with the REAL components: TextWorldExpress episodes, the embedded Gemma 3 270M judge
(llama.cpp, 1 thread), the all-MiniLM-L6-v2 encoder and the torch orchestrator — on 2 trajectories of 3 steps.

The second run applies the saved orchestrator and must be served entirely from the judge cache."""

from __future__ import annotations

import json
import math
import re

import pytest

from models.trajectory import read_trajectories

pytestmark = pytest.mark.real


CHANNELS = ("contextual", "structural", "temporal", "ensemble")


def test_label_coren_real_judge_end_to_end(cli, tmp_path):
    raw = tmp_path / "raw.jsonl"
    cli(
        "collect",
        "--env",
        "twx:twc",
        "--split",
        "dev",
        "--episodes",
        "2",
        "--behaviour",
        "gold-noise",
        "--noise",
        "0.3",
        "--max-steps",
        "3",
        "--seed",
        "3",
        "--out",
        str(raw),
        check=True,
        timeout=300,
    )
    out = tmp_path / "labeled.jsonl.gz"
    cache = tmp_path / "judge.sqlite"
    report = tmp_path / "report.json"
    common = ["--prompts", "2", "--n-ctx", "2048", "--threads", "1", "--qa-size", "4", "--cache", str(cache)]
    proc = cli(
        "label",
        "coren",
        str(raw),
        "--out",
        str(out),
        "--report",
        str(report),
        *common,
        check=True,
        timeout=600,
    )
    assert "orchestrator: trained" in proc.stderr

    trajs = read_trajectories(out)
    assert len(trajs) == 2
    for t in trajs:
        for s in t.steps:
            lab = s.labels["coren"]
            for ch in CHANNELS:
                assert math.isfinite(lab[ch]), (t.id, ch, lab)
            for ch in ("contextual", "structural", "temporal"):  # the mean vote: on the scale, not rounded
                assert -2.0 <= lab[ch] <= 2.0
            # effective weights (gate * scale * softmax share); what they leave of 1 is the sparse reward's
            w = (lab["w_contextual"], lab["w_structural"], lab["w_temporal"])
            assert all(x >= 0 for x in w) and sum(w) <= 1.0 + 1e-4
            ens = sum(x * lab[c] for x, c in zip(w, ("contextual", "structural", "temporal"), strict=True))
            assert math.isclose(lab["ensemble"], ens, abs_tol=1e-3)
            assert len(lab["dist_p0"]) == 2 and math.isclose(sum(lab["dist_p0"]), 1.0, abs_tol=1e-3)
        prov = t.provenance["coren"]
        assert re.fullmatch(r"[0-9a-f]{64}", prov["judge_sha256"])
        assert [p["name"] for p in prov["prompts"]] == ["progress", "progress_towards"]
        assert all(p["version"] == 2 for p in prov["prompts"]) and prov["templates"]["version"] == 3
        assert re.fullmatch(r"[0-9a-f]{64}", prov["qa_sha256"])
        assert re.fullmatch(r"[0-9a-f]{64}", prov["orchestrator_sha256"])
        assert prov["orchestrator_check"]["gate"] == 1.0  # 2 trajectories: too few to check, kept
        assert prov["vote"] == "mean"
    first = json.loads(report.read_text())
    assert first["total_queries"] > 0 and first["queries"]["rate"] == 2 * sum(len(t.steps) for t in trajs)

    # apply the saved orchestrator; every judge query is a cache hit now
    ckpt = tmp_path / "labeled.orchestrator.safetensors"
    assert ckpt.is_file()
    out2 = tmp_path / "again.jsonl"
    report2 = tmp_path / "report2.json"
    cli(
        "label",
        "coren",
        str(raw),
        "--out",
        str(out2),
        "--orchestrator",
        str(ckpt),
        "--report",
        str(report2),
        *common,
        check=True,
        timeout=600,
    )
    second = json.loads(report2.read_text())
    assert second["cache_hits"] == second["total_queries"] == first["total_queries"]
    again = read_trajectories(out2)
    assert (
        again[0].provenance["coren"]["orchestrator_sha256"]
        == trajs[0].provenance["coren"]["orchestrator_sha256"]
    )
    assert [s.labels["coren"]["ensemble"] for s in again[0].steps] == [
        s.labels["coren"]["ensemble"] for s in trajs[0].steps
    ]

    # the quality command reads the labels (ground truth is used only there)
    q = json.loads(cli("label", "quality", str(out), "--json", check=True).stdout)
    assert {"coren.contextual", "coren.ensemble"} <= {c["channel"] for c in q["channels"]}
