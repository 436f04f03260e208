"""Episodes and the tag judge double that the grounded rubric builder is tested with."""

from __future__ import annotations

from dataclasses import dataclass

from labeler.trca.build import TAGS
from models.trajectory import Step, Trajectory

TWX1 = {"state_format": "twx/1"}


INSTR = "Put the things where they belong."


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
