"""One policy base: every policy of the package subclasses ``edge.policies.ScoringPolicy`` and defines its
scores (its resources through the base's hooks), with one argument name; the wrappers (loop guard, sampling,
timing) compose over any policy."""

from __future__ import annotations

import inspect

import pytest

from edge.policies import Guarded, Policy, PolicyWrapper, Sampled, ScoringPolicy, Timed, percentile


def _policy_classes() -> list[type]:
    from edge.bundle_policy import BundlePolicy
    from edge.edge_policy import EdgePolicy
    from policy.evaluation.evaluate import RandomPolicy
    from policy.evaluation.llm_policy import LLMPolicy
    from policy.evaluation.torch_policy import TorchPolicy

    return [BundlePolicy, EdgePolicy, TorchPolicy, LLMPolicy, RandomPolicy]


class Toy(ScoringPolicy):
    """Scores from a table; counts its hooks."""

    name = "toy"

    def __init__(self, table: dict[str, list[float]]):
        self.table, self.resets, self.closes = table, 0, 0

    def scores(self, instruction, state, candidates, memory=()):
        return self.table[state][: len(candidates)]

    def on_reset(self) -> None:
        self.resets += 1

    def on_close(self) -> None:
        self.closes += 1


@pytest.mark.parametrize("cls", _policy_classes(), ids=lambda c: c.__name__)
def test_every_policy_is_the_base_with_scores_over_the_state(cls):
    assert issubclass(cls, ScoringPolicy) and cls.__name__.endswith("Policy")
    assert "scores" in vars(cls) and not {"reset", "close", "__enter__", "__exit__"} & set(vars(cls))
    if cls.__name__ != "RandomPolicy":  # random draws one number per step (the recorded baselines' stream)
        assert "act" not in vars(cls)
    assert list(inspect.signature(cls.scores).parameters)[:4] == [
        "self",
        "instruction",
        "state",
        "candidates",
    ]


def test_the_base_acts_by_argmax_and_runs_its_hooks_once_per_close():
    toy = Toy({"s": [0.1, 0.9, 0.9]})
    assert isinstance(toy, Policy) and toy.act("i", "s", ["a", "b", "c"]) == 1  # the first of the best
    toy.reset()
    with toy:
        pass
    toy.close()
    assert toy.resets == 1 and toy.closes == 1


def test_wrappers_compose_and_reach_the_inner_policy():
    toy = Toy({"s": [0.9, 0.5]})
    timed = Timed(Guarded(toy))
    assert timed.name == "toy+guard" and isinstance(timed, PolicyWrapper)
    assert [timed.act("i", "s", ["a", "b"]) for _ in range(3)] == [0, 1, 0]  # the guard, under the timer
    assert len(timed.ms) == 3 and all(ms >= 0 for ms in timed.ms) and timed.percentile(0.5) is not None
    assert timed.scores("i", "s", ["a", "b"]) == [0.9, 0.5] and len(timed.ms) == 4  # every call is timed
    timed.reset()
    assert timed.act("i", "s", ["a", "b"]) == 0 and toy.resets == 1  # the guard's memory and the inner reset
    timed.close()
    timed.close()
    assert toy.closes == 1
    assert percentile([], 0.5) is None and percentile([3.0, 1.0, 2.0], 0.5) == 2.0


def test_sampling_draws_from_the_scores():
    toy = Toy({"s": [0.0, 50.0]})
    with pytest.raises(ValueError, match="temperature must be > 0"):
        Sampled(toy, 0.0)
    sampled = Sampled(toy, 1.0, seed=3)
    assert sampled.name == "toy~T1" and {sampled.act("i", "s", ["a", "b"]) for _ in range(20)} == {1}
    spread = Sampled(Toy({"s": [0.0, 0.0]}), 1.0, seed=3)
    assert {spread.act("i", "s", ["a", "b"]) for _ in range(50)} == {0, 1}


def test_guarded_keys_a_plain_log_with_the_actions_it_took():
    from models.state_layout import PLAIN_LAYOUT

    room = "You are in the hall. A bench."
    toy = Toy({f"{room}\n{echo}": [0.9, 0.1] for echo in ("none", "wait", "wait, wait")})
    guarded = Guarded(toy, PLAIN_LAYOUT.world_key)  # called as world_key(state, actions)
    picks = [guarded.act("i", f"{room}\n{echo}", ["wait", "go"]) for echo in ("none", "wait", "wait, wait")]
    assert picks == [0, 0, 1] and guarded.guard.actions == ("wait", "wait", "go")
