"""The adapter contract in full (policy.worlds.collection_check): the collection check on tiny real episodes
of each shipped world (the cases of tests/support/env_cases.py), and the checks ``envs check`` runs, in
order."""

from __future__ import annotations

import pytest

from policy.worlds.adapters import contract, open_env, parse_env
from policy.worlds.collection_check import CHECKS
from tests.support.env_cases import CASES, IDS


def test_the_contract_is_the_worlds_checks_and_collection_in_order():
    assert list(CHECKS) == [
        "describes-itself",
        "reset-and-state",
        "gold-path",
        "deterministic",
        "disjoint-splits",
        "invalid-answer",
        "collection",
        "no-score-in-state",
    ]
    assert {name: check for name, check in CHECKS.items() if name != "collection"} == contract.CHECKS


@pytest.mark.real
@pytest.mark.parametrize("name, params, limit", CASES, ids=IDS)
def test_collection_on_a_shipped_world(name, params, limit):
    with open_env(parse_env(name, params), step_limit=limit) as world:
        result = contract.run_check("collection", world, CHECKS)
    assert result.status == "pass", f"{world.spec} collection: {result.status}: {result.reason}"
