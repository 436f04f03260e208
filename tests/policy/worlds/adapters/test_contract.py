"""The contract every environment adapter keeps (policy.worlds.adapters.contract): the world's own checks on
tiny real episodes of each shipped world (the cases of tests/support/env_cases.py), and the check that no
state text carries the score."""

from __future__ import annotations

import pytest

from policy.worlds.adapters import EnvState, contract, open_env, parse_env
from policy.worlds.adapters.contract import numbers_near_score, score_leaks
from policy.worlds.adapters.registry import BUILTIN
from tests.support.env_cases import CASES, IDS


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def world(request):
    name, params, limit = request.param
    spec = parse_env(name, params)
    with open_env(spec, step_limit=limit) as env:
        yield env


def _episode(texts: list[str], scores: list[float], **info_series: list[float]) -> list[EnvState]:
    return [
        EnvState(
            observation=text,
            candidates=["wait"],
            instruction="tidy up",
            parts={"feedback": text},
            score=score,
            done=False,
            success=False,
            info={k: v[i] for k, v in info_series.items()},
        )
        for i, (text, score) in enumerate(zip(texts, scores, strict=True))
    ]


ROOM = "Room: a kitchen. The compass points north."


def test_every_builtin_adapter_has_cases():
    assert set(BUILTIN) <= {n.split(":")[0] for n, _, _ in CASES}


@pytest.mark.real
@pytest.mark.parametrize("check", list(contract.CHECKS))
def test_contract(world, check):
    result = contract.run_check(check, world)  # every check applies to a shipped simulator: a skip fails too
    assert result.status == "pass", f"{world.spec} {check}: {result.status}: {result.reason}"


def test_numbers_next_to_a_score_word():
    assert numbers_near_score("Feedback: Done. Your score: 3\nRoom: x") == {
        3.0: "Feedback: Done. Your score: 3"
    }
    assert set(numbers_near_score("You have 2 points. The score is 0.5 now.")) == {2.0, 0.5}
    assert set(numbers_near_score("Progress 50%")) == {50.0}
    assert numbers_near_score("You see 3 apples. Score. 4 more") == {}  # not in the same sentence


@pytest.mark.parametrize(
    "texts, scores, message",
    [
        (
            ["Feedback: Your score: 0", "Feedback: Your score: 0", "Feedback: Your score: 1"],
            [0, 0, 1],
            "score 1 shown as 'Feedback: Your score: 1'",
        ),
        (
            ["Feedback: Score 0 of 2.", "Feedback: ok. 50%", "Feedback: ok. 50%"],
            [0, 0.5, 0.5],
            "score 0.5 shown as 'Feedback: ok. 50%'",
        ),
        (
            ["Feedback: hi", "Feedback: hi", "Feedback: Your score has just gone up."],
            [0, 0, 1],
            "score's changes announced: the text mentions score/points exactly at the 1 steps where",
        ),
    ],
)
def test_a_score_in_the_state_text_is_a_leak(texts, scores, message):
    leaks = score_leaks([_episode(texts, scores)])
    assert len(leaks) == 1 and leaks[0].startswith(message)


def test_raw_info_numbers_are_checked_too():
    texts = ["Feedback: start", "Feedback: 1 points", "Feedback: 2 points"]
    leaks = score_leaks([_episode(texts, [0.0, 0.0, 0.0], points=[0, 1, 2])])
    assert leaks == ["info['points'] 2 shown as 'Feedback: 2 points'"]


@pytest.mark.parametrize(
    "texts, scores",
    [
        ([ROOM, ROOM, ROOM], [0.0, 0.0, 1.0]),  # "points" at every step, not only where the score moves
        (["Feedback: 1 point of interest", "Feedback: a", "Feedback: b"], [1.0, 1.0, 1.0]),  # constant score
        (["Feedback: score: 7", "Feedback: score: 7", "Feedback: a"], [0.0, 0.5, 1.0]),  # another number
        (["Feedback: a", "Feedback: score up", "Feedback: score up"], [0.0, 0.5, 1.0]),  # every step changes
    ],
)
def test_texts_that_do_not_carry_the_score(texts, scores):
    assert score_leaks([_episode(texts, scores)]) == []
