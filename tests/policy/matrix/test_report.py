"""The matrix's report: seeds pooled, rows without a result listed, the imitation ceiling and the labels
beside the rows."""

from __future__ import annotations

from policy.matrix.plan import QUICK, parse_world, units, with_overrides
from policy.matrix.store import RowStore


def test_report_pools_seeds_and_lists_rows_without_a_result(tmp_path):
    from policy.matrix.report import write_report

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


def _verbs(take: tuple[int, int], put: tuple[int, int]) -> dict:
    verbs = {
        v: {"right": r, "decisions": n, "accuracy": r / n, "wrong_picks": {}}
        for v, (r, n) in (("take", take), ("put", put))
    }
    right, n = take[0] + put[0], take[1] + put[1]
    return {"decisions": n, "accuracy": right / n, "verbs": verbs}


def test_report_sets_the_ceiling_and_the_labels_beside_the_rows(tmp_path):
    from policy.matrix.report import markdown

    w = parse_world("twc-easy")
    s = with_overrides(QUICK, sizes=(10,), seeds=(0, 1), sources=("sparse", "trca"), algos=("iql",))
    plan = [r for u in units(w, s) for r in u.rows if r["runner"] == "edge-serve"]
    store = RowStore(tmp_path / "m.json")
    for cfg in plan:
        dense = cfg["source"] == "trca"
        k = 7 if dense else 4
        store.put(cfg, {"status": "ok", "episodes": 10, "successes": k, "success_rate": k / 10,
                        "ci95": [0.2, 0.8], "train_successes": 3, "mean_score": 0.7, "per_episode": [],
                        "gold_decisions": _verbs((18, 20), (15, 20) if dense else (10, 20)),
                        "label_quality": {"channel": "trca.total", "auroc_progress": 0.93,
                                          "auroc_gold": 0.75, "check": "in-sample", "check_auroc": 0.97}
                        if dense else None})  # fmt: skip
    ceiling = {**plan[0], "source": "expert", "algo": "bc", "train_episodes": 200, "seed": 0,
               "status": "ok", "episodes": 10, "successes": 9, "success_rate": 0.9, "ci95": [0.6, 0.98],
               "mean_score": 0.9, "per_episode": [],
               "gold_decisions": _verbs((20, 20), (19, 20))}  # fmt: skip
    same = {**ceiling, "train_episodes": 3, "gold_decisions": _verbs((19, 20), (16, 20))}
    md = markdown(store, plan, {"twc-easy": ("success", 0.9)}, [ceiling])
    line = next(x for x in md.splitlines() if "imitation ceiling" in x and x.startswith("| twc-easy"))
    assert "200 episodes" in line and "90 %" in line and "missed" not in line  # no success-scarce verdict
    assert "### Where the labels help" in md
    put = next(x for x in md.splitlines() if "| put |" in x)
    # ceiling 19/20, no same-size expert row, best dense (TRCA, both seeds pooled) 30/40, best sparse 20/40
    assert "| 0.95 (20) |  | 0.75 (40) | 0.50 (40) |" in put
    # BC on as many expert episodes as the file has successes (3 of 10) stands beside the labels' row
    md = markdown(store, plan, {"twc-easy": ("success", 0.9)}, [ceiling, same])
    put = next(x for x in md.splitlines() if "| put |" in x)
    assert "| 0.95 (20) | 0.80 (20) | 0.75 (40) | 0.50 (40) |" in put
    assert "| twc-easy | 10 | trca | trca.total | 0.930 | 0.750 | in-sample (0.970) |" in md


def test_the_verbs_picked_instead_are_listed_most_frequent_first():
    from policy.matrix.report import _decision_tables

    gold = _verbs((18, 30), (20, 20))
    gold["verbs"]["take"]["wrong_picks"] = {"look": 1, "open": 3, "put": 8}  # a stored row: keys sorted
    row = {"world": "twc-easy", "train_episodes": 36, "seed": 0, "source": "expert", "gold_decisions": gold}
    (line,) = [x for x in _decision_tables([row]) if "| take |" in x]
    assert line.endswith("| 0.600 |  | put 8, open 3, look 1 |")  # stored before 'later' was counted
    for v, later in (("take", 5), ("put", 0)):
        gold["verbs"][v]["later"] = later
    lines = _decision_tables([row])
    assert next(x for x in lines if "| take |" in x).endswith("| 0.600 | 5 | put 8, open 3, look 1 |")
    assert next(x for x in lines if "| **all** |" in x).endswith("| 0.760 | 5 |  |")


def test_the_loop_report_shows_each_learner_per_round_beside_its_baselines(tmp_path):
    from policy.matrix.plan import round_units, unit
    from policy.matrix.report import write_report
    from policy.matrix.rounds import matched_expert_rows

    w = parse_world("twc-easy")
    s = with_overrides(QUICK, sizes=(10,), seeds=(0,), sources=("sparse", "trca"), algos=("credit", "bc"))
    s = with_overrides(s, clients=("guard",), expert_sizes=(), rounds=2, round_set=("credit:detours=false",))
    plan = [r for u in units(w, s) for r in u.rows] + [r for ru in round_units(w, s) for r in ru.rows]
    store = RowStore(tmp_path / "m.json")
    for cfg in plan:
        r = cfg.get("round", 0)
        k = (4 + 2 * r) if cfg["algo"] == "credit" else 4 + r
        deployed = {"episodes": 10, "successes": 5 + r, "success_rate": (5 + r) / 10, "mean_steps": 9.0}
        store.put(cfg, {"status": "ok", "episodes": 10, "successes": k, "success_rate": k / 10,
                        "ci95": [0.1, 0.9], "train_successes": 3 + r, "per_episode": [],
                        "gold_decisions": _verbs((5 + 5 * r, 20), (10, 20)),
                        **({"deployed": deployed} if r else {})})  # fmt: skip
    matched = matched_expert_rows(s, list(store.rows.values()), [w])
    assert sorted({r["train_episodes"] for r in matched}) == [
        3,
        4,
        5,
    ]  # the credit file's successes per round
    assert matched[0] == unit(w, s, "bc", "expert", 3, 0).rows[0]
    for cfg in matched:
        store.put(
            cfg, {"status": "ok", "episodes": 10, "successes": 6, "success_rate": 0.6, "ci95": [0.3, 0.9]}
        )
    write_report(store, plan + matched, tmp_path / "m")
    md = (tmp_path / "m.md").read_text()
    loop = md[md.index("### The loop: 2 rounds") :]
    # success per round [Wilson], the deployed policy's own success beside it from round 1
    assert "| BC on successes, sparse | 40 % [17, 69] | 50 % [24, 76] (60 %) | 60 % [31, 83] (70 %) |" in loop
    assert "| 40 % [17, 69] | 60 % [31, 83] (60 %) | 80 % [49, 94] (70 %) |" in loop  # credit
    assert "rubric) (from round 1: detours=false) | 40 % [17, 69] | 60 %" in loop  # its round settings
    assert "60 % [31, 83], 3 episodes | 60 % [31, 83], 4 episodes | 60 % [31, 83], 5 episodes |" in loop
    assert "take 0.25 → 0.75" in loop  # where the rounds moved the decisions
    assert "### The loop" not in md[: md.index("### The loop")]  # the matrix's own tables hold no round row
    assert (tmp_path / "m.rounds.png").read_bytes()[:4] == b"\x89PNG"


def test_a_looped_learner_is_named_with_what_its_rounds_changed():
    from policy.matrix.rounds_report import _learner

    row = {"world": "w", "algo": "credit", "source": "trca-built"}
    plain = [row, {**row, "round": 1}]
    assert (
        _learner(plain, "w", "credit", "trca-built") == "Credit: steps the labels keep, harmful steps "
        "pushed away, TRCA (rubric built from the data, unreviewed)"
    )
    both = [row, {**row, "round": 1, "round_set": ["detours=false"], "round_rubric": "extend"}]
    assert _learner(both, "w", "credit", "trca-built").endswith(
        "(from round 1: detours=false, rubric extended each round)"
    )


def test_the_loops_ceiling_is_never_a_seeds_matched_baseline():
    from policy.matrix.groups import aggregate
    from policy.matrix.plan import round_units, unit
    from policy.matrix.rounds_report import _ceiling, _matched_sizes

    w = parse_world("twc-easy")
    s = with_overrides(
        QUICK, sizes=(10,), seeds=(0, 1), sources=("trca",), algos=("credit",), clients=("guard",)
    )
    s = with_overrides(s, expert_sizes=(), rounds=1)
    plan = [r for u in units(w, s) for r in u.rows] + [r for ru in round_units(w, s) for r in ru.rows]
    rows = []
    for cfg in plan:  # seed 1's file gathers more successes than the 200-episode ceiling
        n = 5 if cfg.get("round") is None else 150 + 100 * cfg["seed"]
        rows.append(
            {**cfg, "status": "ok", "successes": 5, "episodes": 10, "success_rate": 0.5, "train_successes": n}
        )
    for n, k in ((5, 6), (150, 7), (200, 9), (250, 8)):  # the matched baselines and the ceiling
        cfg = unit(w, s, "bc", "expert", n, 0).rows[0]
        rows.append({**cfg, "status": "ok", "successes": k, "episodes": 10, "success_rate": k / 10})
    agg = aggregate(rows)
    assert _matched_sizes(agg, plan, "twc-easy") == {5, 150, 250}
    assert _ceiling(agg, "twc-easy", _matched_sizes(agg, plan, "twc-easy"))[0] == 200
