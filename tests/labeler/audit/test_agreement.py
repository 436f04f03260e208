"""Each channel's credit against the marks: hand-computed AUROCs, support, contradiction, too few marks."""

from __future__ import annotations

from labeler.audit.agreement import audit_figures, best_supported, format_audit
from labeler.audit.marks import Mark, current
from tests.labeler.audit.helpers import labeled_log


def _marks(log, flip: int = 0):
    """A person's marks of every step: progress where the step moved (``flip`` of them marked wrong)."""
    out = []
    for t in log:
        for i, s in enumerate(t.steps):
            moved = s.action != "look"
            wrong = len(out) < flip
            out.append(Mark(t.id, i, "progress" if moved != wrong else "neither"))
    return current(out)


def test_the_audit_supports_the_channel_that_credits_what_the_person_saw():
    log = labeled_log(6, 4)
    good, bad = audit_figures(log, _marks(log), ["good.r", "bad.r"], boots=100)
    assert (good.marked, good.progress) == (24, 12)
    assert good.figure.value == 1.0 and good.verdict == "supported"
    assert bad.figure.value == 0.0 and bad.verdict == "contradicted" and bad.contradicted
    assert best_supported([good, bad]) is good
    text = format_audit([good, bad])
    assert "train on good.r: the audit supports its step credit (1.000)" in text
    assert "24 marked steps, 12 progress" in text


def test_a_few_wrong_marks_lower_the_figure_by_hand():
    log = labeled_log(6, 4)
    (good,) = audit_figures(log, _marks(log, flip=2), ["good.r"], boots=50)
    # the first two steps marked the other way (a moved one neither, an idle one progress): 12 progress
    # marks, 11 on steps credited 1; 12 others, 1 credited 1. AUROC = (wins + ties / 2) / pairs
    # = (11 * 11 + (11 * 1 + 1 * 11) / 2) / (12 * 12)
    assert abs(good.figure.value - (11 * 11 + 11) / 144) < 1e-9


def test_too_few_marks_give_no_figure_and_the_marks_of_others_are_not_read():
    log = labeled_log(2, 2)
    few = current(
        [Mark("ep0", 0, "progress"), Mark("ep0", 1, "neither"), Mark("ep1", 0, "harmful", by="judge")]
    )
    (fig,) = audit_figures(log, few, ["good.r"])
    assert fig.marked == 2 and fig.figure.value is None and fig.verdict == "too few marks"
    assert "step credit unverified" in format_audit([fig])
    assert best_supported([fig]) is None
