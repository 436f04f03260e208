"""tools.bench.judge_queries: the judge benchmark's query shapes, built from one step (no environment)."""

from __future__ import annotations

from types import SimpleNamespace

from labeler.coren.prompts import PROMPT_DIR
from tools.bench.judge_queries import CAND_CHOICES, CAND_HEADERS, _cand_queries, _coren_queries, _head

STEP = SimpleNamespace(
    action="take apple",
    observation="Room: You are in the kitchen.\nYou see an apple and a fridge.",
    candidates=["take apple", "open fridge", "look around"],
)


def test_the_observation_head_keeps_line_breaks_and_marks_a_cut():
    assert _head("a b\nc d", 3) == "a b\nc ..."
    assert _head("  a b  ", 5) == "a b"


def test_cand_rates_the_taken_action_then_each_picked_candidate_per_prompt_variant():
    qs = _cand_queries(3, "Tidy up.", STEP, "You take the apple.", ["open fridge"])
    assert len(qs) == 2 * len(CAND_HEADERS)
    assert [q["variant"] for q in qs] == [0, 0, 1, 1]
    assert all(q["pattern"] == "cand" and q["traj"] == 3 and q["choices"] == CAND_CHOICES for q in qs)
    assert qs[0]["prefix"].startswith(CAND_HEADERS[0])
    assert qs[0]["prefix"].endswith("Action: take apple\nResult: You take the apple.\nRating:")
    assert qs[1]["prefix"].endswith("Action: open fridge\nResult: (not taken yet)\nRating:")


def test_coren_asks_a_rate_and_a_choose_query_per_prompt_variant():
    qs = _coren_queries("coren", PROMPT_DIR, 2, "Tidy up.", "Room: kitchen", STEP, "You take the apple.")
    assert len(qs) == 4 and [q["variant"] for q in qs] == [0, 0, 1, 1]
    rate, choose = qs[0], qs[1]
    assert "take apple" in rate["prefix"] and "You take the apple." in rate["prefix"]
    assert choose["choices"] == [" A", " B", " C"]
    assert all(c in choose["prefix"] for c in STEP.candidates)
