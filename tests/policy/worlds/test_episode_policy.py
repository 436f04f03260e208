"""policy.worlds.episode_policy: an adapter's task strategies by name, and the wrappers composed over a
policy."""

from __future__ import annotations

import pytest

from edge.policies import Guarded, ScoringPolicy
from policy.worlds.adapters import EnvError, parse_env
from policy.worlds.episode_policy import episode_policy, strategy_class
from policy.worlds.twx_placement import PlacementSearchPolicy


class First(ScoringPolicy):
    name = "first"

    def scores(self, instruction, state, candidates, memory=()):
        return [float(i == 0) for i in range(len(candidates))]


def test_strategies_by_name():
    spec = parse_env("twx:twc")
    assert strategy_class(spec, "placement-search") is PlacementSearchPolicy
    with pytest.raises(EnvError, match="unknown strategy 'best' for twx:twc: expected one of placement-sea"):
        strategy_class(spec, "best")


def test_the_wrappers_composed_over_a_policy():
    spec, policy = parse_env("twx:twc"), First()
    assert episode_policy(policy, spec) is policy  # neither: the bare argmax
    guarded = episode_policy(policy, spec, loop_guard=True)
    assert isinstance(guarded, Guarded) and guarded.inner is policy
    searched = episode_policy(policy, spec, loop_guard=True, strategy="placement-search")
    assert isinstance(searched, PlacementSearchPolicy) and searched.inner is policy
