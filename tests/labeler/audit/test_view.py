"""What the person sees: the task, the episode so far, the step and what followed; not the outcome."""

from __future__ import annotations

from labeler.audit.view import HELP, render, short
from tests.labeler.audit.helpers import labeled_log


def test_a_step_shows_its_context_and_not_its_outcome():
    traj = labeled_log(1, 6)[0]
    screen = render(traj, 5, context=2, width=80)
    assert screen.startswith("Task    put every thing in the box")
    assert "So far (5 steps, the last shown)" in screen
    assert "    4. look -> Nothing happens." in screen and "    3." not in screen  # the last 2 steps
    assert "    5. put thing 4 in box -> Room 0.5: you did it 4." in screen
    assert "Action  look" in screen and "Then    Nothing happens." in screen
    assert "success" not in screen.lower() and "1.0" not in screen and HELP in screen
    assert "So far" not in render(traj, 0)


def test_short_texts_fit_one_line():
    assert short("a  b\nc", 10) == "a b c"
    assert short("x" * 20, 8) == "xxxxxxx…"
