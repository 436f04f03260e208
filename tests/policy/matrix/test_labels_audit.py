"""The label grid's audit columns without a judge: which rows are audited, and the report that sets the
check's choice against every channel's per-step AUROC (hand-made rows; the real judge runs in test_cli.py)."""

from __future__ import annotations

from policy.matrix.labels import POOLED, markdown, plan
from policy.matrix.plan import FULL, parse_world, with_overrides
from policy.matrix.store import RowStore

WORLDS = [parse_world("a=twx:twc@8"), parse_world("b=twx:cookingworld@8")]
S = with_overrides(FULL, sizes=(5,), split="dev", audit_steps=40)


def test_only_each_worlds_labels_are_audited_never_the_baselines_or_the_pooled_rows():
    rows = plan(WORLDS, S, ("full",), ("sparse", "success", "potential"))
    audited = [r for r in rows if "audit_steps" in r]
    assert {(r["world"], r["method"]) for r in audited} == {("a", "potential"), ("b", "potential")}
    assert all(r["audit_steps"] == 40 and r["judge"] == S.judge for r in audited)
    pooled = next(r for r in rows if r["world"] == POOLED and r["method"] == "potential")
    assert "judge" not in pooled
    # without --audit the rows are the ones an earlier run stored
    assert all(
        "audit_steps" not in r
        for r in plan(WORLDS, with_overrides(S, audit_steps=0), ("full",), ("potential",))
    )


def _audit(choice, verdicts):
    return {
        "flag_auroc_progress": 0.62,
        "by": "judge:gemma3-270m",
        "asked": 40,
        "marked": 30,
        "progress": 12,
        "choice": choice,
        "channels": {
            f"potential.{c}": {"auroc": 0.7, "check": before, "check_after_audit": after}
            for c, (before, after) in verdicts.items()
        },
    }


def test_the_report_counts_choices_near_the_best_poor_choices_and_separates_on_poor_credit(tmp_path):
    rows = plan(WORLDS, S, ("full", "response"), ("success", "potential"))
    store = RowStore(tmp_path / "l.json")
    counts = {"trajectories": 5, "steps": 40, "progress_steps": 9, "successes": 2}
    truth = {"delta": 0.60, "support": 0.80, "phi": 0.70}
    audits = {
        ("a", "full"): _audit(
            "potential.support",
            {"delta": ("separates", "audit disagrees"), "support": ("separates", "separates")},
        ),
        ("a", "response"): _audit(
            "potential.phi", {"delta": ("separates", "separates"), "support": ("weak", "audit disagrees")}
        ),
        ("b", "full"): _audit("potential.delta", {"delta": ("weak", "weak")}),
        ("b", "response"): _audit(None, {}),
    }  # fmt: skip
    for r in rows:
        if r["world"] == POOLED:
            continue
        if r["method"] == "success":
            store.put(
                r, {"status": "ok", **counts, "auroc_progress": 0.62, "auroc_gold": None, "check": None}
            )
            continue
        store.put(
            r,
            {
                "status": "ok",
                **counts,
                "auroc_progress": 0.60,
                "auroc_gold": None,
                "check": "weak",
                "channels": {
                    f"potential.{c}": {"auroc_progress": v, "auroc_gold": None} for c, v in truth.items()
                },
                "audit": audits[(r["world"], r["shape"])],
            },
        )
    md = markdown(store, rows)
    assert "### The check's choice against per-step AUROC (the judge's audit of 40 steps)" in md
    assert (
        "| a | full | support 0.800, phi 0.700, delta 0.600 | 0.620 | 30 of 40 (12) | potential.support | "
        "0.000 | separates |" in md
    )
    assert (
        "| b | response | support 0.800, phi 0.700, delta 0.600 | 0.620 | 30 of 40 (12) | none: step credit "
        in md
    )
    assert (
        "The choice within 0.03 of the best channel: **1 of 4 logs**; no choice (the audit supports no " in md
    )
    assert "unverified): 1; a worse channel: 2." in md
    assert (
        "A choice under 0.65 while a channel of 0.75 or more exists: b full potential.delta 0.600 (best "
        in md
    )
    assert (
        "under 0.65: 2 from the success flags alone, **1 after the audit** (a response potential.delta "
        "0.600)." in md
    )
    refuted = "(the audit refutes good step credit): 1 (a response potential.support 0.800)."
    assert f"`audit disagrees` on a channel of 0.75 or more {refuted}" in md


def test_the_judges_marks_spread_to_every_step_compete_for_the_choice_and_old_audits_are_redone(tmp_path):
    from policy.matrix.labels import done
    from policy.matrix.labels_audit import AUDIT_VERSION

    rows = [r for r in plan(WORLDS[:1], S, ("full",), ("potential",)) if "audit_steps" in r]
    store = RowStore(tmp_path / "l.json")
    audit = {
        **_audit("audit.spread", {"delta": ("weak", "weak"), "support": ("separates", "separates")}),
        "version": AUDIT_VERSION,
        "spread_auroc_progress": 0.91,
        "consistency": 0.95,
    }
    audit["channels"]["audit.spread"] = {"auroc": 0.95, "check": "weak", "check_after_audit": "weak"}
    truth = {"delta": 0.60, "support": 0.80}
    store.put(
        rows[0],
        {
            "status": "ok",
            "trajectories": 5,
            "steps": 40,
            "progress_steps": 9,
            "successes": 2,
            "auroc_progress": 0.60,
            "auroc_gold": None,
            "check": "weak",
            "channels": {f"potential.{c}": {"auroc_progress": v} for c, v in truth.items()},
            "audit": audit,
        },
    )
    assert done(store, rows[0])
    md = markdown(store, rows)
    assert (
        "| a | full | spread 0.910, support 0.800, delta 0.600 | 0.620 | 30 of 40 (12), consistency 0.95 | "
        "audit.spread | 0.000 | weak |" in md
    )
    assert "(audit.spread) are the best channel on 1 of 1 logs." in md
    # a row audited before the marks were spread is audited again
    store.put(rows[0], {**store.get(rows[0]), "audit": {k: v for k, v in audit.items() if k != "version"}})
    assert not done(store, rows[0])


def test_an_auditor_who_is_always_right_marks_by_the_logs_score_progress():
    from policy.matrix.labels_audit import TRUTH, TruthAuditor, audit_log
    from tests.labeler.audit.helpers import labeled_log

    truth_rows = plan(WORLDS, with_overrides(S, auditor=TRUTH), ("full",), ("potential",))
    audited = [r for r in truth_rows if "audit_steps" in r]
    assert audited and all(r["auditor"] == TRUTH and "judge" not in r for r in audited)
    assert all("auditor" not in r for r in plan(WORLDS, S, ("full",), ("potential",)))  # the judge's rows
    log = labeled_log(10, 4)
    for t in log:
        for i, s in enumerate(t.steps):
            if i != 3:  # the last step of each episode has no ground truth: not asked
                s.info["progress"] = 0.0 if s.action == "look" else 1.0
    a = audit_log(log, "good.r", TruthAuditor(), steps=40)
    assert (a["by"], a["asked"], a["marked"], a["progress"], a["queries"]) == (TRUTH, 30, 30, 15, 0)
    assert a["choice"] in ("good.r", "audit.spread") and a["consistency"] == 1.0
    assert set(a["channels"]) == {"good.r", "audit.spread"}  # the row's method's channels and the spread
    assert a["channels"]["good.r"]["verdict"] == "supported"
