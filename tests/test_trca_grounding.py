"""Success-grounded rubric statistics and verdicts against hand-computed cases, and the grounded builder.

A tiny world (an apple, a box that opens, a fridge; success = the apple ends in the fridge) generates the
transitions, so every number below can be counted by hand. The judge is a test double.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from labeler.dataset import Step, Trajectory
from labeler.paths import loop_erased_steps, path_steps
from labeler.trca.build import TAGS, BuildConfig, build_rubric
from labeler.trca.checks import Transition
from labeler.trca.grounding import Grounding, ground, kept_bindings, lift, novel, prepare, verdict
from labeler.trca.rubric import Item
from models.state_layout import layout_of

TWX1 = {"state_format": "twx/1"}
"""The tiny world writes TextWorld's twx/1 state texts."""

INSTR = "Put the things where they belong."
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


def _state(feedback: str, apple: str, box_open: bool, recent: list[str]) -> str:
    room = "You see a table" + (" with an apple" if apple == "table" else "") + ". "
    room += f"There is a box that is {'open' if box_open else 'closed'}" + (
        " with an apple" if apple == "box" else ""
    )
    room += ". There is a fridge" + (" with an apple" if apple == "fridge" else "") + "."
    inv = "an apple" if apple == "hand" else "empty"
    lines = [f"Feedback: {feedback}"] if feedback else []
    lines += [f"Inventory: {inv}", f"Recent actions: {', '.join(recent[-3:]) or 'none'}", f"Room: {room}"]
    return "\n".join(lines)


def episode(tid: str, actions: list[str]) -> Trajectory:
    """Play ``actions`` in the tiny world; success when the apple ends in the fridge."""
    apple, box_open, recent, steps = "table", False, [], []
    obs = _state("", apple, box_open, recent)
    for a in actions:
        if a == "take apple" and apple != "hand":
            apple, fb = "hand", "You take the apple."
        elif a.startswith("put apple in ") and apple == "hand":
            apple = a.rsplit(" ", 1)[1]
            fb = f"You put the apple in the {apple}."
        elif a in ("open box", "close box"):
            box_open = a == "open box"
            fb = f"You {a.split()[0]} the box."
        else:
            fb = "Nothing happens."
        recent = [*recent, a]
        nxt = _state(fb, apple, box_open, recent)
        steps.append(Step(observation=obs, action=a, candidates=[], next_observation=nxt))
        obs = nxt
    return Trajectory(
        id=tid, instruction=INSTR, task_type="tiny", success=apple == "fridge", steps=steps, meta=TWX1
    )


S1 = ["take apple", "put apple in box", "take apple", "push wall", "put apple in fridge"]
F1 = ["take apple", "pull rope", "put apple in box", "push wall"]


def test_lift_is_the_smoothed_ratio_of_per_step_rates():
    assert lift(2, 5, 1, 4) == pytest.approx((3 / 7) / (2 / 6))
    assert lift(0, 10, 0, 10) == pytest.approx(1.0)
    assert lift(3, 5, 0, 0) is None and lift(0, 0, 3, 5) is None


def test_loop_erasure_by_hand():
    # A -> B -> A -> C: the first two steps are a loop; only the last step lasted
    assert loop_erased_steps(["A", "B", "A", "C"]) == [2]
    assert loop_erased_steps(["A", "A", "B"]) == [1]  # a step that changes nothing is erased
    assert loop_erased_steps(["A", "B", "C"]) == [0, 1]
    t = episode("s1", S1)
    # states: table, hand, box, hand(=1), hand(push, =1), fridge -> path: take (0), put in fridge (4)
    assert path_steps(t) == [0, 4]
    key = layout_of(t.meta).world_key
    assert key(t.steps[0].next_observation) == key(t.steps[2].next_observation)


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


def _g(**kw) -> Grounding:
    g = Grounding(hits=10, hits_success=5, hits_failure=5, steps_success=50, steps_failure=50)
    for k, v in kw.items():
        setattr(g, k, v)
    return g


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


@dataclass
class Scores:
    logprobs: list[float]


class TagJudge:
    """Tags every world-changing response 'done' and everything else 'nothing' (with a bias towards 'done'
    that calibration removes); places the apple in the box (wrong)."""

    model_sha256 = "e" * 64

    def score_many(self, queries, *, template, version, normalize="sum", progress=False):
        out = []
        for prefix, choices in queries:
            if list(choices) == [f" {t}" for t in TAGS]:
                resp = prefix.rsplit("Response:", 1)[1]
                want = "done" if "You " in resp else "nothing"
                out.append(
                    Scores([(0.0 if t == want else -2.0) + (1.0 if t == "done" else 0.0) for t in TAGS])
                )
            else:
                out.append(Scores([0.0 if c == " box" else -1.0 for c in choices]))
        return out


def test_grounded_build_checks_the_judges_tags_against_successes():
    s2 = ["open box", "close box", "take apple", "put apple in fridge"]
    f2 = ["open box", "close box", "push wall", "pull rope", "take apple", "put apple in box", "open box"]
    trajs = [episode("s1", S1), episode("f1", F1), episode("s2", s2), episode("f2", f2)]
    r = build_rubric(trajs, TagJudge(), BuildConfig(task_type="tiny")).rubric
    items = {it.id: it for it in r.items}
    # the judge says the apple goes in the box; both successes left it in the fridge
    assert items["put-where-it-belongs"].pairs == {"apple": ["fridge"]}
    assert items["put-elsewhere"].pairs == {"apple": ["fridge"]} and items["put-elsewhere"].pairs_mismatch
    assert items["take-you-take-the"].category == "execution"
    assert (
        "borne out" in items["take-you-take-the"].note and "success lift" in items["take-you-take-the"].note
    )
    # 'close box' is tagged done by the judge but always undone in successes: not an item
    assert not any(i.startswith("close-") for i in items)
    # "Nothing happens." after two verbs, found from the data (no world-specific string)
    generic = [it for it in r.items if it.id.startswith("generic-")]
    assert [g.category for g in generic] == ["invalidity"] and "Nothing happens" in generic[0].text
    # without grounding the judge's tags and places stand
    plain = {
        it.id: it for it in build_rubric(trajs, TagJudge(), BuildConfig("tiny", grounded=False)).rubric.items
    }
    assert plain["put-where-it-belongs"].pairs == {"apple": ["box"]}
    assert any(i.startswith("close-") for i in plain)
    assert not any(i.startswith("generic-") for i in plain)
