"""``edgejudge envs check NAME``: the adapter contract on any registered adapter (policy.envs.contract), the
check that no state text carries the score, and registration errors that say how to register an adapter."""

from __future__ import annotations

import re

import pytest

from policy.envs import EnvError, EnvState, adapter_class
from policy.envs.contract import numbers_near_score, score_leaks

LEAKY = {"EDGEJUDGE_ENVS": "leaky=tests.support.leaky_adapter:LeakyAdapter"}


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


def test_registration_errors_say_how_to_register(monkeypatch, tmp_path):
    with pytest.raises(EnvError) as e:
        adapter_class("gym")
    text = str(e.value)
    assert text.startswith("unknown environment adapter 'gym': expected one of ")
    assert "EDGEJUDGE_ENVS=NAME=module:Class" in text and "PYTHONPATH" in text and "'edgejudge.envs'" in text

    monkeypatch.setenv("EDGEJUDGE_ENVS", "mine=my_world_adapter:MyAdapter")
    with pytest.raises(EnvError) as e:
        adapter_class("mine")
    text = str(e.value)
    assert "(my_world_adapter:MyAdapter, EDGEJUDGE_ENVS) cannot be loaded" in text
    assert "No module named 'my_world_adapter'" in text
    assert "put the folder that holds my_world_adapter.py on PYTHONPATH" in text and "\n" not in text

    (tmp_path / "my_world_adapter.py").write_text("import gymnasium_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        EnvError, match="No module named 'gymnasium_not_installed'.*install what my_world_adapter"
    ):
        adapter_class("mine")

    monkeypatch.setenv("EDGEJUDGE_ENVS", "mine=policy.envs.twx:TwxAdapter")
    with pytest.raises(EnvError, match="module policy.envs.twx has no attribute 'TwxAdapter'"):
        adapter_class("mine")


def test_envs_check_bad_names_are_usage_errors(cli):
    proc = cli("envs", "check", "mine:x", env={"EDGEJUDGE_ENVS": "mine=no_such_module:X"})
    assert proc.returncode == 2 and "No module named 'no_such_module'" in proc.stderr
    assert "PYTHONPATH" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("envs", "check", "twx:twc", "--only", "everything")
    assert (
        proc.returncode == 2 and "unknown check 'everything': expected one of describes-itself" in proc.stderr
    )


@pytest.mark.real
def test_envs_check_passes_on_a_shipped_world(cli):
    proc = cli("envs", "check", "twx:twc", "--params", "level=easy", "--max-steps", "20", check=True)
    lines = proc.stdout.splitlines()
    assert [line.split()[0] for line in lines[:-1]] == ["PASS"] * 8, proc.stdout
    assert "PASS no-score-in-state" in lines and lines[-1].endswith("8 passed, 0 failed, 0 skipped")


@pytest.mark.real
def test_envs_check_fails_on_an_adapter_that_shows_the_score(cli):
    proc = cli("envs", "check", "leaky:twc", "--max-steps", "20", env=LEAKY)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1, proc.stdout
    assert failed[0].startswith("FAIL no-score-in-state: the state text carries the ground truth: ")
    assert re.search(r"\bscore 1 shown as '[^']*Your score: 1'", failed[0]), failed[0]
    assert "under EnvState.info only" in failed[0]
