"""Success-grounded rubric statistics and verdicts against hand-computed cases.

A tiny world (an apple, a box that opens, a fridge; success = the apple ends in the fridge) generates the
transitions (tests/support/trca_tags.py), so every number below can be counted by hand."""

from __future__ import annotations

import pytest

from labeler.trca.checks import Transition
from labeler.trca.grounding import Grounding, ground, kept_bindings, lift, novel, prepare, verdict
from labeler.trca.rubric import Item
from models.state_layout import layout_of
from tests.support.trca_tags import F1, INSTR, S1, TWX1, episode

"""The tiny world writes TextWorld's twx/1 state texts."""


TAKE = Item(
    id="t",
    category="execution",
    text="t",
    action=r"^take (?P<object>.+)$",
    feedback=r"^You take the {object}\.$",
)


PUT = Item(
    id="p",
    category="execution",
    text="p",
    action=r"^put (?P<object>.+?) in (?P<place>.+)$",
    feedback=r"^You put",
)


REFUSAL = Item(id="r", category="invalidity", text="r", feedback=r"^Nothing happens\.$")


def _g(**kw) -> Grounding:
    g = Grounding(hits=10, hits_success=5, hits_failure=5, steps_success=50, steps_failure=50)
    for k, v in kw.items():
        setattr(g, k, v)
    return g


def test_lift_is_the_smoothed_ratio_of_per_step_rates():
    assert lift(2, 5, 1, 4) == pytest.approx((3 / 7) / (2 / 6))
    assert lift(0, 10, 0, 10) == pytest.approx(1.0)
    assert lift(3, 5, 0, 0) is None and lift(0, 0, 3, 5) is None


def test_grounding_statistics_by_hand():
    s1, f1 = episode("s1", S1), episode("f1", F1)
    assert s1.success and not f1.success
    eps = prepare([s1, f1])
    g = ground(TAKE, eps)
    # hits: s1 steps 0 and 2, f1 step 0; 5 steps in the success, 4 in the failure
    assert (g.hits, g.hits_success, g.hits_failure, g.steps_success, g.steps_failure) == (3, 2, 1, 5, 4)
    assert g.lift == pytest.approx((3 / 7) / (2 / 6))
    assert g.kept == pytest.approx(1 / 2)  # step 0 lasted, step 2 (taking it back out of the box) did not
    assert g.effect == 1.0 and dict(g.verbs) == {"take": 3}
    r = ground(REFUSAL, eps)
    # s1 step 3, f1 steps 1 and 3: changes nothing, after two verbs, rarer in the success
    assert (r.hits, r.hits_success, r.kept, r.effect) == (3, 1, 0.0, 0.0)
    assert set(r.verbs) == {"push", "pull"}
    assert r.lift == pytest.approx((2 / 7) / (3 / 6))
    p = ground(PUT, eps)
    # the box placement in the success was undone; the fridge one was its last action on the apple
    assert p.bindings["object=apple;place=box"] == {"success": 1, "failure": 1, "kept": 0, "final": 0}
    assert p.bindings["object=apple;place=fridge"] == {"success": 1, "kept": 1, "final": 1}
    assert kept_bindings(p) == {"apple": {"fridge": 1}}
    assert (
        "3 hits (2 in successes, 1 in failures); success lift 1.29; kept on success paths 0.50" in g.summary()
    )


def test_novelty():
    twx = layout_of(TWX1)

    def novel_(obs: str, nxt: str) -> bool:
        return novel(Transition(INSTR, obs, "look", nxt, twx))

    assert novel_("Room: a table", "Feedback: The drawer contains a key.\nRoom: a table")
    assert not novel_("Inventory: a key\nRoom: a table", "Feedback: a key\nInventory: a key\nRoom: a table")


@pytest.mark.parametrize(
    ("tag", "kw", "category", "reason"),
    [
        # the judge's positive tag, borne out by the data: lasts (4/5) and as frequent in successes
        ("done", {"kept_success": 4, "effect_hits": 10}, "execution", "borne out"),
        # positive tag, but undone in successes (1/5): no item
        ("done", {"kept_success": 1, "effect_hits": 10}, None, "undone in successes"),
        # positive tag, lasts, but rarer in successes (2 vs 8 hits over the same number of steps)
        (
            "found",
            {"kept_success": 2, "hits_success": 2, "hits_failure": 8, "effect_hits": 10},
            None,
            "rarer",
        ),
        # idle (changes nothing) after 3 verbs: the world's generic refusal, whatever the judge says
        ("done", {"verbs": {"a": 1, "b": 1, "c": 1}}, "invalidity", "answers 3 verbs alike"),
        # idle, one verb, judge says done: not paid
        ("done", {"verbs": {"a": 10}}, None, "idle"),
        # idle, the judge says failed: invalidity
        ("failed", {"verbs": {"a": 10}}, "invalidity", "judge tags it failed"),
        # the judge says nothing, the data say lasts (8/9) and 3.3x more frequent in successes: execution
        (
            "nothing",
            {"kept_success": 8, "hits_success": 9, "hits_failure": 2, "effect_hits": 11},
            "execution",
            "overrule",
        ),
        # the judge says failed and the data do not contradict it
        (
            "failed",
            {"kept_success": 0, "hits_success": 2, "hits_failure": 8, "effect_hits": 10},
            "invalidity",
            "not contradicted",
        ),
        # no successful trajectory at all: the judge's tag decides
        ("done", {"hits_success": 0, "hits_failure": 10, "steps_success": 0}, "execution", "no successful"),
    ],
)
def test_verdict_rules(tag, kw, category, reason):
    v = verdict(tag, _g(**kw))
    assert v.category == category and reason in v.reason
