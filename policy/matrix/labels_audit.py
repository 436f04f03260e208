"""The judge's audit in the label grid (``edgejudge matrix labels --audit N``): does the channel the check
names match the channel whose steps are right?

On each world's labeled log (not the pooled ones, not the two baselines) the local judge marks ``N`` sampled
steps as ``edgejudge label audit --auditor judge`` does; every channel of the row's method, and the marks
spread to every step (:mod:`labeler.audit.spread`: channel ``audit.spread`` of ``edgejudge label spread``),
are compared with the marks as ``label quality --audit`` compares them. The row records the channel the check
would name (the one the audit supports best; none: step credit unverified) and every channel's verdict after
the audit, beside each channel's per-step AUROC against score progress (ground truth the check never reads).
The report counts how often the choice is within :data:`NEAR_BEST` of the best channel, whether it ever takes
a poor channel while a good one exists, and whether ``separates`` survives on poor step credit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from labeler.audit.spread import CHANNEL as SPREAD
from policy.matrix.store import RowStore

UNAUDITED = ("sparse", "success")
"""Methods the audit skips: the environment's reward and the success flag have one fixed channel."""

NEAR_BEST = 0.03
"""The choice counts as right when its per-step AUROC is this close to the best channel's."""
POOR, GOOD = 0.65, 0.75
"""A choice under POOR while a channel reaches GOOD exists is the failure the check must never make."""


_PER_LOG = ("channel", "by", "marked", "progress", "asked", "consistency")
"""Figures of the whole audit, kept once per row rather than per channel."""
AUDIT_VERSION = 4
"""What a row's audit holds; a row audited by an older version is audited again (from the judge's cache).
2: the marks spread to every step compete for the choice, and a judge under the consistency gate
(:data:`labeler.audit.agreement.MIN_JUDGE_CONSISTENCY`) neither supports nor contradicts. 3: beside the
channel the audit names, one it does not support is ``audit prefers``, not ``separates``. 4: so is one it
supports whose interval stays under the named channel's agreement
(:func:`labeler.audit.agreement.vouched`)."""


def stale(result: dict[str, Any]) -> bool:
    """Whether an audited row's figures come from an older audit (:data:`AUDIT_VERSION`)."""
    return result.get("status") == "ok" and result.get("audit", {}).get("version", 1) < AUDIT_VERSION


def audited(method: str) -> bool:
    return method not in UNAUDITED


TRUTH = "truth"
"""The auditor who marks a step by the log's own score progress (``matrix labels --auditor truth``)."""


class TruthAuditor:
    """Marks each asked step as its ground truth says (``info["progress"]`` above 0: progress, else neither;
    a step without it is not asked): an auditor who is always right, the upper bound of a person's audit.
    A benchmark's auditor only: a robot's log holds no such truth."""

    by = TRUTH

    def audit(self, trajectories, refs):
        from labeler.audit.judge_audit import JudgeAudit
        from labeler.audit.marks import Mark

        marks = []
        for r in refs:
            t = trajectories[r.traj]
            progress = t.steps[r.step].info.get("progress")
            if progress is not None:
                marks.append(Mark(t.id, r.step, "progress" if float(progress) > 0 else "neither", TRUTH))
        return JudgeAudit(marks, len(marks), len(marks), 0, 0)

    def close(self) -> None:
        pass


def audit_log(trajectories: Sequence[Any], channel: str, auditor, steps: int, seed: int = 0) -> dict:
    """The audit of ``steps`` sampled steps of a labeled log by ``auditor`` (the judge, or
    :class:`TruthAuditor`), over the channels of ``channel``'s method and the marks spread to every step: the
    marks' counts, every channel's agreement and verdict before and after the audit, and the channel the
    check names (None: the audit supports none)."""
    from labeler.audit.agreement import audit_figures, best_supported, vouched
    from labeler.audit.marks import UNSURE, current
    from labeler.audit.sample import audited_channels, sample_steps
    from labeler.audit.spread import METHOD, NAME, spread
    from labeler.label_check import check_channels, with_audit
    from labeler.label_writer import put_labels
    from labeler.quality import measure
    from policy.matrix.data import label_summary

    method = channel.split(".")[0]
    channels = [c for c in audited_channels(trajectories) if c.split(".")[0] == method]
    t0 = time.perf_counter()
    refs = sample_steps(trajectories, steps, seed, channels)
    by = auditor.by
    result = auditor.audit(trajectories, refs)
    marks = current(result.marks, by)
    progress = {k: m.mark == "progress" for k, m in marks.items() if m.mark != UNSURE}
    spread_marks = spread(trajectories, progress)
    for t, values in zip(trajectories, spread_marks.values, strict=True):
        put_labels(t, METHOD, [{NAME: v} for v in values], {"by": by, "marks": spread_marks.marked})
    channels.append(SPREAD)
    figures = audit_figures(trajectories, marks, channels, by)
    checks = check_channels(trajectories, channels)
    before = {c.channel: c.verdict for c in checks}
    best = best_supported(figures)
    contradicted = {f.channel for f in figures if f.contradicted}
    after = {
        c.channel: c.verdict
        for c in with_audit(checks, contradicted, best and best.channel, vouched(figures))
    }
    spread_truth = {c.channel: c.auroc_progress for c in measure(list(trajectories)).channels}.get(SPREAD)
    return {
        "version": AUDIT_VERSION,
        "flag_auroc_progress": label_summary(list(trajectories), "success")["auroc_progress"],
        "spread_auroc_progress": spread_truth,
        "consistency": spread_marks.consistency,
        "by": by,
        "asked": result.asked,
        "marked": result.agreed,
        "progress": sum(m.mark == "progress" for m in result.marks),
        "queries": result.queries,
        "cached": result.cached,
        "seconds": round(time.perf_counter() - t0, 1),
        "choice": best.channel if best else None,
        "channels": {
            f.channel: {k: v for k, v in f.to_dict().items() if k not in _PER_LOG}
            | {"check": before.get(f.channel), "check_after_audit": after.get(f.channel)}
            for f in figures
        },
    }


def _f(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def choice_report(store: RowStore, rows: Sequence[dict[str, Any]]) -> list[str]:
    """The check's choice per audited log against every channel's per-step AUROC, and the counts the
    module docstring names; nothing when no row holds an audit."""
    got = []
    for r in rows:
        v = store.get(r)
        if v and v.get("status") == "ok" and v.get("audit") and v.get("channels"):
            truth = {c: x["auroc_progress"] for c, x in v["channels"].items()}
            truth[SPREAD] = v["audit"].get("spread_auroc_progress")
            truth = {c: x for c, x in truth.items() if x is not None}
            if truth:
                got.append((r, v, truth))
    if not got:
        return []
    steps = ", ".join(str(x) for x in sorted({r["audit_steps"] for r, _, _ in got}))
    by_truth = all(r.get("auditor") == TRUTH for r, _, _ in got)
    who = "an audit by the log's own score progress" if by_truth else "the judge's audit"
    lines = [
        f"### The check's choice against per-step AUROC ({who} of {steps} steps)",
        "",
        "| world | shape | channels by per-step AUROC vs progress | own success flag | audit: marked of "
        "asked (progress), the marks' consistency | the check's choice | best minus choice | its verdict "
        "after the audit |",
        "|---|---|---|---|---|---|---|---|",
    ]
    near = unverified = spread_best = 0
    poor, wrong_before, wrong_after, refuted = [], [], [], []
    for r, v, truth in got:
        a = v["audit"]
        ranked = sorted(truth, key=truth.get, reverse=True)
        spread_best += ranked[0] == SPREAD
        best = truth[ranked[0]]
        choice = a["choice"]
        gap = "" if choice is None else f"{best - truth[choice]:.3f}"
        if choice is None:
            unverified += 1
        elif best - truth[choice] <= NEAR_BEST:
            near += 1
        if choice is not None and truth[choice] < POOR and best >= GOOD:
            poor.append(
                f"{r['world']} {r['shape']} {choice} {truth[choice]:.3f} (best {ranked[0]} {best:.3f})"
            )
        for ch, x in a["channels"].items():
            if ch in truth and truth[ch] < POOR:
                where = f"{r['world']} {r['shape']} {ch} {truth[ch]:.3f}"
                if x["check"] == "separates":
                    wrong_before.append(where)
                if x["check_after_audit"] == "separates":
                    wrong_after.append(where)
            if ch in truth and truth[ch] >= GOOD and x["check_after_audit"] == "audit disagrees":
                refuted.append(f"{r['world']} {r['shape']} {ch} {truth[ch]:.3f}")
        listed = ", ".join(f"{c.split('.', 1)[1]} {truth[c]:.3f}" for c in ranked)
        verdict = a["channels"].get(choice, {}).get("check_after_audit") if choice else None
        lines.append(
            f"| {r['world']} | {r['shape']} | {listed} | {_f(a['flag_auroc_progress'])}"
            f" | {a['marked']} of {a['asked']} ({a['progress']}){_consistency(a)} | "
            f"{choice or 'none: step credit unverified'} | {gap} | {verdict or ''} |"
        )
    n, worse = len(got), len(got) - near - unverified
    lines += [
        "",
        f"- The choice within {NEAR_BEST} of the best channel: **{near} of {n} logs**; no choice (the audit "
        f"supports no channel, step credit unverified): {unverified}; a worse channel: {worse}.",
        f"- A choice under {POOR} while a channel of {GOOD} or more exists: "
        + ("; ".join(poor) if poor else "none")
        + ".",
        f"- `separates` on a channel whose per-step AUROC is under {POOR}: {len(wrong_before)} from the "
        f"success flags alone, **{len(wrong_after)} after the audit**"
        + (f" ({'; '.join(wrong_after)})" if wrong_after else "")
        + ".",
        f"- `audit disagrees` on a channel of {GOOD} or more (the audit refutes good step credit): "
        f"{len(refuted)}" + (f" ({'; '.join(refuted)})" if refuted else "") + ".",
        f"- The marks spread to every step ({SPREAD}) are the best channel on {spread_best} of {n} logs.",
        "",
    ]
    return lines


def _consistency(audit: dict[str, Any]) -> str:
    c = audit.get("consistency")
    return "" if c is None else f", consistency {c:.2f}"
