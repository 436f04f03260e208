"""The label grid's plan and report without running anything: world x shape x method x episodes, COREN only
on small logs, pooled rows with several worlds; the tables show each cell's figures and verdict, say n/a and
error rather than guess, and list the rows without a result."""

from __future__ import annotations

from policy.matrix.labels import POOLED, markdown, plan
from policy.matrix.plan import FULL, parse_world, with_overrides
from policy.matrix.store import RowStore
from policy.worlds.adapters.registry import parse_env

WORLDS = [parse_world("a=twx:twc@8"), parse_world("b=twx:cookingworld@8")]
S = with_overrides(FULL, sizes=(5, 20), coren_max_episodes=5, split="dev")


def test_the_plan_is_the_grid_with_coren_on_small_logs_and_pooled_rows():
    rows = plan(WORLDS, S, ("full", "response"), ("sparse", "trca-built", "coren"))
    per_world = [r for r in rows if r["world"] != POOLED]
    # 2 shapes x (2 sizes x 2 methods + 1 size x COREN) x 2 worlds
    assert len(per_world) == 2 * (2 * 2 + 1) * 2 and len(rows) == len(per_world) * 3 // 2
    assert {r["episodes"] for r in rows if r["method"] == "coren"} == {5}
    r = next(r for r in rows if r["method"] == "coren")
    assert (r["split"], r["judge"], r["coren_prompts"], r["kind"]) == (
        "dev",
        S.judge,
        S.coren_prompts,
        "labels",
    )
    assert "judge" not in next(r for r in rows if r["method"] == "sparse")
    pooled = next(r for r in rows if r["world"] == POOLED)
    assert pooled["worlds"] == ["a", "b"] and "env" not in pooled
    twc, cw = (parse_env(e).params for e in ("twx:twc", "twx:cookingworld"))  # the adapters' defaults
    assert pooled["world_configs"] == [["twx:twc", twc, 8], ["twx:cookingworld", cw, 8]]
    # one world: nothing to pool
    assert all(r["world"] != POOLED for r in plan(WORLDS[:1], S, ("full",), ("sparse",)))


def test_a_given_log_keys_its_rows_by_its_content_not_by_a_collections_settings(tmp_path):
    from dataclasses import replace

    log = tmp_path / "robot.jsonl"
    log.write_text("episodes\n")
    given = [replace(WORLDS[0], pool=str(log)), WORLDS[1]]
    rows = plan(given, S, ("full",), ("sparse",))
    first = {r["world"]: r for r in reversed(rows)}  # each world's first row (episodes 5)
    a, b, pooled = first["a"], first["b"], first[POOLED]
    assert "behaviour" not in a and "collect_seed" not in a and len(a["pool"]) == 16
    assert b["behaviour"] == S.behaviour and "pool" not in b
    assert "pool" not in pooled and pooled["world_configs"][0][-1] == a["pool"]
    (tmp_path / "robot2.jsonl").write_text("other episodes\n")  # another log: other rows
    other = replace(WORLDS[0], pool=str(tmp_path / "robot2.jsonl"))
    assert plan([other], S, ("full",), ("sparse",))[0]["pool"] != a["pool"]


def test_the_report_shows_figures_and_verdicts_and_lists_rows_without_a_result(tmp_path):
    rows = plan(WORLDS, with_overrides(S, sizes=(5,)), ("full", "plain"), ("success", "potential"))
    store = RowStore(tmp_path / "l.json")
    counts = {"trajectories": 5, "steps": 40, "progress_steps": 9, "successes": 2}
    for r in rows:
        if r["method"] == "success":
            store.put(
                r, {"status": "ok", **counts, "auroc_progress": 0.65, "auroc_gold": None, "check": None}
            )
        elif r["world"] == "a":
            store.put(
                r, {"status": "ok", **counts, "auroc_progress": 0.8123, "auroc_gold": 0.7, "check": "weak"}
            )
        elif r["world"] == "b" and r["shape"] == "full":
            store.put(
                r, {"status": "error", "reason": "Error: it needs at least 2 successful\n and 2 failed"}
            )
    md = markdown(store, rows)
    assert "### full-state log (the adapter's layout)" in md and "### plain text (flattened, no layout)" in md
    assert "| own success flag: flag | potential (no judge): potential.delta |" in md
    assert "| a | 5 | 40 (9) | 2 | 0.650 / n/a | 0.812 / 0.700 (weak) |" in md
    assert "| b | 5 | 40 (9) | 2 | 0.650 / n/a | error |" in md
    assert "| pooled, 2 worlds | 5 | 40 (9) | 2 | 0.650 / n/a |  |" in md  # not computed: left empty
    assert "| a | 5 | potential (no judge) | 0.812 | 0.812 |" in md  # the shapes side by side
    assert "Rows without a result:" in md
    assert "- b full potential n=5: error: and 2 failed" in md and "- b plain potential n=5: not run" in md


def test_the_report_sets_the_check_against_per_step_auroc_and_names_every_separates_below_the_floor(tmp_path):
    rows = plan(WORLDS, with_overrides(S, sizes=(5,)), ("full", "response"), ("potential",))
    store = RowStore(tmp_path / "l.json")
    counts = {"trajectories": 5, "steps": 40, "progress_steps": 9, "successes": 2}
    figures = {  # (world, shape): per-step AUROC, verdict, check AUROC, without the last step
        ("a", "full"): (0.81, "separates", 0.9, 0.85),
        ("b", "full"): (0.60, "separates", 0.8, 0.7),
        ("a", "response"): (0.55, "last step", 0.75, 0.5),
        ("b", "response"): (0.70, "weak", 0.55, 0.55),
    }
    for r in rows:
        if r["world"] == POOLED:  # pooled rows are not counted
            store.put(
                r, {"status": "ok", **counts, "auroc_progress": 0.1, "auroc_gold": None, "check": "inverted"}
            )
            continue
        a, verdict, check, body = figures[(r["world"], r["shape"])]
        store.put(r, {"status": "ok", **counts, "auroc_progress": a, "auroc_gold": None, "check": verdict,
                      "check_auroc": check, "check_body_auroc": body})  # fmt: skip
    md = markdown(store, rows)
    assert "| separates | 2 | 1 | 1 | 0.600-0.810 |" in md
    assert "| last step | 1 | 1 | 0 | 0.550-0.550 |" in md and "| weak | 1 | 0 | 1 | 0.700-0.700 |" in md
    assert "inverted" not in md.split("### The label check against per-step AUROC")[1]
    assert (
        "- `separates` on step credit below 0.65: b full potential 0.600 "
        "(check 0.800, without the last step 0.700, over the first steps n/a, moves vs idle steps n/a)" in md
    )
