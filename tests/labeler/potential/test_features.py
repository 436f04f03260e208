"""Step features of the success-model potential: templates, where an argument was named, repeats."""

from __future__ import annotations

from labeler.potential.features import step_features, template
from models.actions import argument_words
from models.trajectory import Step, Trajectory


def _traj(steps: list[tuple[str, str, str]], instruction: str = "Find the apple.") -> Trajectory:
    return Trajectory(
        id="t",
        instruction=instruction,
        task_type="find",
        success=False,
        steps=[Step(obs, act, [act], nxt) for obs, act, nxt in steps],
    )


def test_template_replaces_the_arguments_and_digits_and_keeps_the_first_sentence():
    words = argument_words("move egg giant tortoise to blue box")  # the parser's own cases: tests/models
    assert (
        template("You move the giant tortoise egg to the blue box. Done.", words)
        == "you move the {x} to the {x}."
    )
    assert template("The thermometer reads 23.5 degrees.", ("thermometer",)) == "the {x} reads # degrees."
    assert template("  ") == "-"


def test_features_say_where_the_argument_was_named_and_whether_the_response_is_new():
    t = _traj(
        [
            ("You are in a hall. A door leads to the kitchen.", "go to kitchen", "You move to the kitchen."),
            ("You move to the kitchen.", "take apple", "You take the apple."),
            ("You take the apple.", "take pear", "You can't see that."),
            ("You can't see that.", "look", "You see a table."),
            ("You see a table.", "take pear", "You can't see that."),
        ]
    )
    f = list(step_features(t))
    assert "*|vn:go|episode" in f[0]  # the state before named the kitchen
    assert "*|vn:take|instruction" in f[1]
    assert "*|vn:take|nowhere" in f[2]
    assert "*|vr:take|new" in f[2] and "*|vr:take|repeated" in f[4]
    assert "find|at:take apple|you take the {x}." in f[1]  # per task type too
    assert all(any(n.startswith("*|") for n in s) and any(n.startswith("find|") for n in s) for s in f)
