"""A step as the person auditing it sees it: the instruction, the episode so far in short, the state, the
action and what followed. The episode's outcome and the labels are not shown: the mark is the person's own
reading of the step."""

from __future__ import annotations

import textwrap

from models.trajectory import Trajectory

KEYS = {"p": "progress", "h": "harmful", "n": "neither", "s": "skip", "u": "undo", "q": "quit"}
"""One keystroke per answer."""
HELP = "[p] progress  [h] harmful  [n] neither  [s] skip  [u] undo  [q] quit"


def short(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def render(traj: Trajectory, step: int, *, context: int = 4, width: int = 100) -> str:
    """The screen of ``traj``'s step ``step``: the last ``context`` steps before it as ``action -> response``
    lines, then the state, the action and the next state, wrapped to ``width``."""
    s = traj.steps[step]

    def wrap(label: str, text: str) -> str:
        return textwrap.fill(
            " ".join(text.split()), width=width, initial_indent=f"{label:<8}", subsequent_indent=" " * 8
        )

    lines = [wrap("Task", traj.instruction), ""]
    first = max(0, step - context)
    if step:
        lines.append(
            f"So far ({step} step{'s' if step > 1 else ''}" + (", the last shown)" if first else ")")
        )
        for i in range(first, step):
            before = traj.steps[i]
            lines.append(
                f"  {i + 1:>3}. {short(before.action, 30)} -> {short(before.next_observation, width - 42)}"
            )
        lines.append("")
    lines += [
        wrap("State", short(s.observation, 6 * width)),
        wrap("Action", s.action),
        wrap("Then", short(s.next_observation, 6 * width)),
        "",
        "Did this step move the episode toward its task?",
        HELP,
    ]
    return "\n".join(lines)
