"""tools.bench.bench_matrix: a tiny real matrix on TWC (collect, label, train, export, edge-serve, random
and the LLM-as-agent), its JSON / Markdown / PNG, and a second run that recomputes nothing; plus the row
store."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import ROOT
from tools.bench.matrix_plan import QUICK, parse_world, units, with_overrides
from tools.bench.matrix_store import RowStore, pool_is_enough, row_key, scarce_subset


def test_row_key_is_the_configuration_in_any_order():
    assert row_key({"a": 1, "b": [2, 3]}) == row_key({"b": [2, 3], "a": 1})
    assert row_key({"a": 1}) != row_key({"a": 1, "b": None})


def test_store_round_trip_and_refuses_a_foreign_file(tmp_path):
    store = RowStore(tmp_path / "m.json")
    store.put({"world": "w", "seed": 0}, {"status": "ok", "success_rate": 0.5})
    again = RowStore(tmp_path / "m.json")
    assert again.get({"seed": 0, "world": "w"})["success_rate"] == 0.5
    assert again.get({"world": "w", "seed": 1}) is None
    assert not list(tmp_path.glob(".*tmp"))  # the atomic rewrite leaves no temporary file
    (tmp_path / "other.json").write_text(json.dumps({"rows": []}))
    with pytest.raises(ValueError, match="not a benchmark-matrix file"):
        RowStore(tmp_path / "other.json")


@given(st.lists(st.booleans(), min_size=1, max_size=80), st.integers(1, 40), st.integers(1, 40))
def test_scarce_subsets_are_nested_and_success_scarce(flags, a, b):
    trajs = [SimpleNamespace(success=f, i=i) for i, f in enumerate(flags)]
    small, big = sorted((a, b))
    succ = sum(flags)
    assert pool_is_enough(trajs, big, 0.3) == (
        succ >= int(0.3 * big) and len(flags) - succ >= big - int(0.3 * big)
    )
    if len(flags) - succ < big - min(succ, int(0.3 * big)):
        with pytest.raises(ValueError, match="failed episodes"):
            scarce_subset(trajs, big, 0.3)
        return
    sub_small, sub_big = scarce_subset(trajs, small, 0.3), scarce_subset(trajs, big, 0.3)
    assert len(sub_big) == big and sum(t.success for t in sub_big) <= 0.3 * big
    assert {t.i for t in sub_small} <= {t.i for t in sub_big}
    assert [t.i for t in sub_big] == sorted(t.i for t in sub_big)  # file order kept


def test_world_names_and_the_headline_unit():
    w = parse_world("cw=twx:cookingworld[level=small]@30")
    assert (w.label, w.env, w.params, w.max_steps) == ("cw", "twx:cookingworld", "level=small", 30)
    assert parse_world("twc-easy").target == 0.9
    with pytest.raises(ValueError, match="bad world"):
        parse_world("twx twc")
    us = units(parse_world("twc-easy"), with_overrides(QUICK, sizes=(10, 20), seeds=(0, 1)))
    checks = [r for u in us for r in u.rows if r["runner"] == "in-process"]
    assert len(checks) == 1 and checks[0]["source"] == "trca" and checks[0]["train_episodes"] == 20
    sparse = next(u for u in us if u.source == "sparse" and u.algo == "iql")
    assert sparse.rows[0]["detour_penalty"] == 0.0 and all(r["runner"] == "edge-serve" for r in sparse.rows)
    # the imitation ceiling: BC on pure expert episodes, at its own sizes, served like every trained row
    expert = [u for u in us if u.source == "expert"]
    assert [(u.algo, u.episodes) for u in expert] == [("bc", 50), ("bc", 50)]  # two seeds
    assert expert[0].rows[0]["bc_filter"] == "all" and expert[0].rows[0]["noise"] == 0.0
    assert not [
        u for u in units(parse_world("twc-easy"), with_overrides(QUICK, algos=("iql",))) if u.algo == "bc"
    ]


@pytest.mark.real
def test_tiny_matrix_writes_json_md_png_and_resumes(tmp_path):
    out = tmp_path / "res" / "m"
    cmd = [
        sys.executable, "-m", "tools.bench.bench_matrix", "--world", "twc-easy=twx:twc@5", "--sizes", "6",
        "--seeds", "0", "--sources", "trca,trca-built", "--algos", "iql", "--clients", "guard",
        "--test-episodes", "2", "--llm-episodes", "1", "--steps", "20", "--work-dir", str(tmp_path / "work"),
        "--out", str(out),
    ]  # fmt: skip

    def run():
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        return p.stdout

    first = run()
    assert "5 rows computed, 0 reused, 0 unfinished" in first
    payload = json.loads((tmp_path / "res" / "m.json").read_text())
    rows = {(r["algo"], r["source"], r["runner"]): r for r in payload["rows"]}
    assert set(rows) == {("iql", "trca", "edge-serve"), ("iql", "trca", "in-process"),
                         ("iql", "trca-built", "edge-serve"), ("random", "-", "in-process"),
                         ("llm-agent", "-", "in-process")}  # fmt: skip
    for r in rows.values():
        assert r["status"] == "ok" and r["world"] == "twc-easy" and r["episodes"] in (1, 2)
        assert 0 <= r["ci95"][0] <= r["success_rate"] <= r["ci95"][1] <= 1 and r["mean_score"] is not None
        assert {"source", "algo", "train_episodes", "seed", "client", "config"} <= set(r)
    served = rows[("iql", "trca", "edge-serve")]
    assert served["train_episodes"] == 6 and served["source"] == "trca" and served["client"] == "guard"
    assert served["train_success_rate"] <= 0.3 and served["detour_penalty"] == 0.05
    check = rows[("iql", "trca", "in-process")]["agrees_with_edge_serve"]
    assert check == {"episodes_equal": 2, "of": 2}  # the in-process runner acts exactly as edge-serve
    md = (tmp_path / "res" / "m.md").read_text()
    assert (
        "| twc-easy | IQL, TRCA (shipped rubric) |" in md
        and "| twc-easy | IQL, TRCA (rubric built from the data, unreviewed) |" in md
        and "| twc-easy | LLM-as-agent | " in md
        and "2 of 2 episodes identical" in md
    )
    assert (tmp_path / "res" / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ckpts = list((tmp_path / "work").glob("*/ckpt/*/checkpoint.json"))
    built = rows[("iql", "trca-built", "edge-serve")]
    assert built["detour_penalty"] == 0.05 and built["train_episodes"] == 6
    rubrics = list((tmp_path / "work").glob("*/rubric-n6.*.toml"))  # built from the 6-episode file alone
    assert [r.name for r in rubrics] == ["rubric-n6.twc.toml"]
    assert len(ckpts) == 2 and not list((tmp_path / "work").glob("*/bundle/*"))  # bundles removed after use
    mtime = ckpts[0].stat().st_mtime

    second = run()
    assert "0 rows computed, 5 reused, 0 unfinished" in second
    again = json.loads((tmp_path / "res" / "m.json").read_text())
    assert again["rows"] == payload["rows"] and ckpts[0].stat().st_mtime == mtime
    assert len(again["meta"]["runs"]) == 2


def test_report_pools_seeds_and_lists_rows_without_a_result(tmp_path):
    from tools.bench.matrix_report import write_report

    w = parse_world("twc-easy")
    s = with_overrides(QUICK, sizes=(10,), seeds=(0, 1), sources=("sparse", "trca"), algos=("iql",))
    plan = [r for u in units(w, s) for r in u.rows]
    store = RowStore(tmp_path / "m.json")
    for i, cfg in enumerate(plan[:-1]):
        k = 5 + i % 3
        eps = [[j, int(j < k), 1.0 if j < k else 0.5, 10] for j in range(10)]
        store.put(cfg, {"status": "ok", "episodes": 10, "successes": k, "success_rate": k / 10,
                        "ci95": [0.2, 0.8], "mean_score": 0.7, "per_episode": eps})  # fmt: skip
    write_report(store, plan, tmp_path / "m")
    md = (tmp_path / "m.md").read_text()
    assert "| twc-easy | IQL, sparse |" in md and "missed: success" in md
    assert "Rows without a result:" in md and "not run" in md  # the last row was never computed
    assert "### Dense labels minus sparse" in md
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"
