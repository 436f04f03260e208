"""tools.bench.bench_memory_reach on a real world, tiny: per verb, the decisions whose action needs words of
an earlier response, and whether the policy's items still hold them."""

from __future__ import annotations

import pytest

from models.inputs.state import StateEncoding
from policy.worlds.adapters.registry import open_env
from tools.bench.bench_memory_reach import markdown, reach


@pytest.mark.real
def test_the_recipe_reaches_every_cooking_decision_and_a_short_window_loses_it():
    with open_env("twx:cookingworld", 40, "level=small") as env:
        full = reach(env, "test", 2, StateEncoding())
        short = reach(env, "test", 2, StateEncoding(memory=1, facts=2))
    cook = full["verbs"]["cook"]
    # every cook decision needs what the recipe said of the ingredient; the default window reads it
    assert cook["needing"] == cook["decisions"] > 0 and cook["all_read"] == cook["needing"]
    assert cook["read"] == cook["pieces"] > 0
    assert short["verbs"]["cook"]["read"] < cook["read"]  # a window of one step has forgotten the recipe
    assert "| cook |" in markdown([{"world": "cw", **full}])
