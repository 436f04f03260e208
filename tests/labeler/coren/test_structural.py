from __future__ import annotations

import numpy as np
import pytest
import torch

from labeler.coren import structural
from models.trajectory import Step, Trajectory

torch.set_num_threads(1)


def _traj(
    tid: str,
    actions: list[str],
    success: bool,
    obs: str = "Room: kitchen with plate and dishwasher",
    cands: list[str] | None = None,
) -> Trajectory:
    steps = [
        Step(
            observation=f"{obs} {i}",
            action=a,
            candidates=cands or sorted({*actions, "look around"}),
            next_observation=f"Feedback: you {a}.\n{obs} {i + 1}",
        )
        for i, a in enumerate(actions)
    ]
    return Trajectory(id=tid, instruction="Put things away.", task_type="t", success=success, steps=steps)


def test_key_objects_are_the_phrases_acted_on_twice_or_last():
    t = _traj("a", ["open fridge", "take plate", "put plate in dishwasher"], True)
    assert structural.key_objects(t) == ["dishwasher", "plate"]  # plate twice, dishwasher in the final action


def test_candidate_entries_from_successes_only():
    ok = _traj("a", ["take plate", "put plate in dishwasher"], True)
    fail = _traj("b", ["take plate", "put plate in dishwasher"], False)
    entries = structural.candidate_entries([ok, fail])
    assert entries and all(e.observation.startswith("Room: kitchen") for e in entries)
    assert entries[0].answer == "plate, dishwasher"  # in order of appearance
    assert len(entries) == 1  # the same answer in one trajectory is kept once


def test_farthest_point_is_diverse_and_deterministic():
    emb = np.array([[1, 0], [0.99, 0.14], [0, 1], [-1, 0]], dtype=float)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    assert structural.farthest_point(emb, 2) == [0, 3]
    assert structural.farthest_point(emb, 10) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "line,problem",
    [
        ('{"instruction": "i", "observation": "o"}', ":2: answer: missing"),
        ('{"instruction": "i", "observation": "o", "answer": 3}', ":2: answer: expected a non-empty string"),
        ('{"instruction": "i", "observation": "o", "answer": "a", "x": 1}', ":2: x: unknown field"),
        ("not json", ":2: line: invalid JSON"),
        ("[1]", ":2: line: expected a JSON object"),
    ],
)
def test_load_qa_reports_file_line(tmp_path, line, problem):
    p = tmp_path / "qa.jsonl"
    p.write_text('{"instruction": "i", "observation": "o", "answer": "a"}\n' + line + "\n")
    with pytest.raises(structural.QAError) as e:
        structural.load_qa(p)
    assert str(e.value).startswith(f"{p}{problem}")


def test_load_qa_ok_and_hash(tmp_path):
    p = tmp_path / "qa.jsonl"
    p.write_text('{"instruction": "i", "observation": "o", "answer": "a"}\n\n')
    entries = structural.load_qa(p)
    assert entries == [structural.QAEntry("i", "o", "a")]
    assert structural.qa_hash(entries) == structural.qa_hash([structural.QAEntry("i", "o", "a")])
    assert structural.qa_hash(entries) != structural.qa_hash([structural.QAEntry("i", "o", "b")])
    with pytest.raises(structural.QAError, match="does not exist"):
        structural.load_qa(tmp_path / "nope.jsonl")


def test_answer_pass_threshold():
    assert structural.answer_passes(0.5) and not structural.answer_passes(0.49)
    assert structural.clean_answer("  plate, dishwasher\nmore") == "plate, dishwasher"
