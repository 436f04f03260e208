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


def test_a_judge_unsure_of_too_many_steps_neither_supports_nor_contradicts():
    log = labeled_log(6, 4)
    judge = "judge:gemma3-270m"

    def figures(unsure: int):
        """The judge marks every step as it is, but leaves the first ``unsure`` of the 24 unsure."""
        marks = [Mark(m.id, m.step, m.mark, by=judge) for m in _marks(log).values()]
        marks = [Mark(m.id, m.step, "unsure", by=judge) if k < unsure else m for k, m in enumerate(marks)]
        return audit_figures(log, current(marks), ["good.r", "bad.r"], by=judge, boots=50)

    # 18 of 24 agreed (75 %): the judge is consistent enough, its marks decide as a person's would
    good, bad = figures(6)
    assert (good.marked, good.asked) == (18, 24) and good.consistent
    assert good.verdict == "supported" and bad.contradicted
    assert "18 marked steps (6 more asked, unsure)" in format_audit([good, bad])
    # 17 of 24 (71 %): the same figures, but no verdict either way
    good, bad = figures(7)
    assert good.figure.value == 1.0 and not good.consistent
    assert (good.verdict, bad.verdict) == ("judge unsure", "judge unsure")
    assert not good.supported and not bad.contradicted and best_supported([good, bad]) is None
    assert (
        "step credit unverified: the judge's two prompts agreed on 17 of the 24 steps asked (under 75%)"
        in (format_audit([good, bad]))
    )
    # a person's skipped steps are never recorded, so a person is always consistent
    (person,) = audit_figures(log, _marks(log), ["good.r"], boots=50)
    assert person.consistent and person.asked == person.marked == 24


def test_beside_the_channel_an_audit_names_a_separating_channel_it_does_not_support_is_not_separates():
    from dataclasses import replace

    from labeler.label_check import MESSAGES, check_channels, with_audit

    (check,) = check_channels(labeled_log(6, 4), ["good.r"], boots=50)
    a, b, c = (replace(check, channel=n, verdict="separates") for n in ("x.a", "x.b", "x.c"))
    out = with_audit([a, b, c], {"x.c"}, preferred="x.a", vouched={"x.a"})
    assert [o.verdict for o in out] == ["separates", "audit prefers", "audit disagrees"]
    assert out[1].message == MESSAGES["audit prefers"]
    assert [o.verdict for o in with_audit([a, b], set())] == [
        "separates",
        "separates",
    ]  # the audit names none
    assert with_audit([b], set(), "x.a", {"x.a", "x.b"})[0].verdict == "separates"  # vouched for too


def test_the_audit_vouches_only_for_supported_channels_whose_interval_reaches_the_one_it_names():
    from labeler.audit.agreement import AuditFigure, vouched
    from labeler.label_check import Figure

    def fig(channel, value, low, high, by="person"):
        return AuditFigure(channel, by, 100, 40, Figure(value, low, high))

    named = fig("x.spread", 0.90, 0.85, 0.95)
    level = fig("x.phi", 0.86, 0.80, 0.91)  # its interval reaches 0.90
    lower = fig("x.delta", 0.70, 0.62, 0.78)  # supported, but clearly under the named channel
    unclear = fig("x.support", 0.55, 0.45, 0.65)
    assert [f.supported for f in (named, level, lower, unclear)] == [True, True, True, False]
    assert vouched([named, level, lower, unclear]) == {"x.spread", "x.phi"}
    assert vouched([unclear]) == set()  # names none: vouches for none
