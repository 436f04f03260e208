from __future__ import annotations

from tools.bench.matrix_plan import QUICK, parse_world, units, with_overrides
from tools.bench.matrix_store import RowStore


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
