"""An audit's marks spread to every step: hand-computed weights, values held out by episode, the auditor's
consistency, the judge's consistency gate, and ``edgejudge label spread`` feeding the check."""

from __future__ import annotations

import json

import pytest

from labeler.audit.agreement import MIN_JUDGE_CONSISTENCY, audit_figures, best_supported, format_audit
from labeler.audit.marks import Mark, current
from labeler.audit.spread import SHRINK, TIE_BREAK, spread, step_names, value, weights
from models.trajectory import read_trajectories, write_trajectories
from tests.labeler.audit.helpers import labeled_log, mark_truly

JUDGE = "judge:gemma3-270m"


def _moved(log) -> dict[tuple[str, int], bool]:
    """Every step marked as it is: progress where it moved."""
    return {(t.id, i): s.action != "look" for t in log for i, s in enumerate(t.steps)}


def test_weights_and_values_by_hand():
    # marks 1, 0, 0 (mean 1/3); a on the first two, b on the first, c on the third
    w = weights([({"a", "b"}, 1.0), ({"a"}, 0.0), ({"c"}, 0.0)])
    assert w["a"] == pytest.approx((2 / 3 - 1 / 3) / (2 + SHRINK))
    assert w["b"] == pytest.approx((2 / 3) / (1 + SHRINK))
    assert w["c"] == pytest.approx((-1 / 3) / (1 + SHRINK))
    assert value({"a", "b"}, w) == pytest.approx(w["b"] + TIE_BREAK * (w["a"] + w["b"]))
    assert value({"unseen"}, w) == 0.0 and value(set(), w) == 0.0 and weights([]) == {}


def test_a_step_counts_its_action_once_per_episode_and_every_task_shares_the_names():
    (t,) = labeled_log(1, 4)
    names = step_names(t)
    assert all(n.startswith("*|") for ns in names for n in ns)
    assert "*|a:look" in names[1] and "*|a:look" not in names[3]  # the second look adds no action
    assert any(n.startswith("*|vt:look|") for n in names[3])  # ... but its verb and response count again


def test_marks_spread_to_the_steps_like_the_marked_ones_and_each_episode_is_valued_by_the_others():
    log = labeled_log(10, 4)
    s = spread(log, _moved(log))
    assert s.marked == 40 and s.consistency == 1.0
    steps = [st for t in log for st in t.steps]
    pairs = list(zip((st.action for st in steps), (v for vs in s.values for v in vs), strict=True))
    assert min(v for a, v in pairs if a != "look") > max(v for a, v in pairs if a == "look")
    # only ep0 marked: its own values come from the other folds' marks (none), the others' from its marks
    only = spread(log, {k: v for k, v in _moved(log).items() if k[0] == "ep0"})
    assert only.values[0] == [0.0] * 4 and any(v != 0.0 for vs in only.values[1:] for v in vs)
    assert only.marked == 4


def test_a_judge_whose_marks_change_from_one_episode_to_the_next_is_held_inconsistent():
    log = labeled_log(10, 4)

    def judge_marks(flip_odd: bool):
        return current(
            [
                Mark(t.id, i, "progress" if moved != (flip_odd and n % 2 == 1) else "neither", by=JUDGE)
                for n, t in enumerate(log)
                for i, moved in enumerate(s.action != "look" for s in t.steps)
            ]
        )

    good, _ = audit_figures(log, judge_marks(False), ["good.r", "bad.r"], by=JUDGE, boots=50)
    assert good.consistency == 1.0 and good.verdict == "supported"
    # the odd episodes marked the other way round: what a step did no longer predicts its mark
    good, bad = audit_figures(log, judge_marks(True), ["good.r", "bad.r"], by=JUDGE, boots=50)
    assert good.consistency < MIN_JUDGE_CONSISTENCY and good.agreeing and not good.consistent
    assert (good.verdict, bad.verdict) == ("judge inconsistent", "judge inconsistent")
    assert best_supported([good, bad]) is None and not bad.contradicted
    assert "the judge marks the same kind of step differently across episodes" in format_audit([good, bad])
    # a consistent auditor whose marks no channel matches is pointed to the spread channel
    (bad,) = audit_figures(log, judge_marks(False), ["bad.r"], by=JUDGE, boots=50)
    assert "agree with them at 1.000 on held-out episodes: 'edgejudge label spread" in format_audit([bad])
    # a person's marks are taken as they are
    person = current([Mark(m.id, m.step, m.mark) for m in judge_marks(True).values()])
    (p,) = audit_figures(log, person, ["good.r"], boots=50)
    assert p.consistency < MIN_JUDGE_CONSISTENCY and p.consistent and p.verdict != "judge inconsistent"


def test_label_spread_writes_the_channel_the_check_supports_and_train_auto_reads(tmp_path, cli):
    log, out = tmp_path / "fleet.jsonl", tmp_path / "fleet.spread.jsonl"
    trajs = labeled_log(10, 4)
    write_trajectories(log, trajs)
    marks = tmp_path / "fleet.audit.jsonl"  # the default beside the log
    mark_truly(marks, trajs[:6])  # six episodes marked, four not
    p = cli("label", "spread", str(log), "--out", str(out), check=True)
    assert "wrote" in p.stdout and "24 marks of person spread" in p.stdout
    assert "consistency: person's marks predicted from other episodes' at AUROC 1.000" in p.stdout
    labeled = read_trajectories(out)
    assert labeled[0].provenance["audit"] == {"by": "person", "marks": 24, "consistency": 1.0, "seed": 0}
    assert all("good" in s.labels and "spread" in s.labels["audit"] for t in labeled for s in t.steps)
    unmarked = [(s.action, s.labels["audit"]["spread"]) for t in labeled[6:] for s in t.steps]
    assert min(v for a, v in unmarked if a != "look") > max(v for a, v in unmarked if a == "look")
    d = json.loads(cli("label", "quality", str(out), "--audit", str(marks), "--json", check=True).stdout)
    figures = {a["channel"]: a for a in d["audit"]}
    assert figures["audit.spread"]["verdict"] == "supported" and figures["audit.spread"]["auroc"] == 1.0
    assert figures["audit.spread"]["consistency"] == 1.0


def test_label_spread_refuses_what_it_cannot_spread_and_names_whose_marks(tmp_path, cli):
    log, out = tmp_path / "fleet.jsonl", tmp_path / "out.jsonl"
    trajs = labeled_log(6, 4)
    write_trajectories(log, trajs)
    p = cli("label", "spread", str(log), "--out", str(out))
    assert p.returncode == 1 and "no marks" in p.stderr and not out.exists()
    marks = tmp_path / "fleet.audit.jsonl"
    mark_truly(marks, trajs, by="ann")
    mark_truly(marks, trajs, by=JUDGE)
    p = cli("label", "spread", str(log), "--out", str(out), "--by", "bob")
    assert p.returncode == 1 and "no marks by 'bob'" in p.stderr and "ann" in p.stderr
    p = cli("label", "spread", str(log), "--out", str(out), check=True)
    assert "spreading the marks of ann (a person's before a judge's" in p.stdout
    p = cli("label", "spread", str(log), "--out", str(out), "--by", JUDGE, "--no-check", check=True)
    assert f"marks of {JUDGE} spread" in p.stdout and "warning" not in p.stderr
