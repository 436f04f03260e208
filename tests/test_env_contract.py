"""The contract every environment adapter keeps (policy.envs.contract), on tiny real episodes of each shipped
world; ``edgejudge envs check NAME`` runs the same checks on any registered adapter.

A shipped adapter joins by adding its cases to ``CASES`` (name, parameters, step limit). Every built-in
adapter must have at least one case.
"""

from __future__ import annotations

import pytest

from policy.envs import EnvError, adapter_class, contract, open_env, parse_env
from policy.envs.registry import BUILTIN

# (environment name, parameters, step limit): small worlds and the harder levels, a few episodes each
CASES = [
    ("twx:twc", "level=easy", 20),
    ("twx:twc", "level=medium", 30),
    ("twx:twc", "level=hard", 50),
    ("twx:cookingworld", "level=small", 30),
    ("twx:cookingworld", "level=large", 50),
    ("scienceworld:find-non-living-thing", "simplifications=easy", 25),
]
IDS = [f"{n}[{p}]" for n, p, _ in CASES]


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def world(request):
    name, params, limit = request.param
    spec = parse_env(name, params)
    with open_env(spec, step_limit=limit) as env:
        yield env


def test_every_builtin_adapter_has_cases():
    assert set(BUILTIN) <= {n.split(":")[0] for n, _, _ in CASES}


@pytest.mark.real
@pytest.mark.parametrize("check", list(contract.CHECKS))
def test_contract(world, check):
    result = contract.run_check(check, world)
    if result.status == "skip":
        pytest.skip(result.reason)
    assert result.status == "pass", f"{world.spec} {check}: {result.reason}"


@pytest.mark.parametrize(
    "name, params, message",
    [
        ("twc", None, "expected ADAPTER:TASK with ADAPTER one of"),
        ("gym:cartpole", None, "unknown environment adapter 'gym': expected one of"),
        ("twx:coin", None, "unknown twx task 'coin': expected one of twc, cookingworld"),
        ("twx:twc", "level=extreme", "bad value 'extreme' for level: expected one of easy, medium, hard"),
        ("twx:twc", "numRooms=2", "unknown parameter 'numRooms' for twx:twc: expected one of level,"),
        ("twx:twc", "numLocations=two", "expected an integer"),
        ("twx:cookingworld", "level=hard", "expected one of small, large"),
        ("twx:twc", "level", "expected key=value"),
    ],
)
def test_bad_names_are_one_line_errors_listing_valid_ones(name, params, message):
    with pytest.raises(EnvError) as e:
        parse_env(name, params)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_levels_resolve_to_game_parameters():
    easy = parse_env("twx:twc")
    assert easy.params == "numLocations=1,numItemsToPutAway=2,includeDoors=0,limitInventorySize=0"
    assert parse_env("twx:twc", easy.params) == easy
    medium = parse_env("twx:twc", "level=medium")
    assert medium.values["numLocations"] == "2" and medium.values["includeDoors"] == "1"
    tweaked = parse_env("twx:twc", "level=hard,numItemsToPutAway=2")
    assert tweaked.values["numLocations"] == "3" and tweaked.values["numItemsToPutAway"] == "2"
    cls = adapter_class("twx")
    assert [cls.level(s) for s in (easy, medium, tweaked)] == ["easy", "medium", "custom"]


def test_adapters_from_the_environment_variable(monkeypatch):
    monkeypatch.setenv("EDGEJUDGE_ENVS", "mine=policy.envs.twx:TWXAdapter")
    assert adapter_class("mine") is adapter_class("twx")
    monkeypatch.setenv("EDGEJUDGE_ENVS", "broken")
    with pytest.raises(EnvError, match="name=module:Class"):
        adapter_class("twx")


def test_envs_command_lists_names_and_parameters(cli):
    listing = cli("envs", check=True).stdout
    assert "twx:twc " in listing and "twx:cookingworld " in listing
    detail = cli("envs", "twx:twc", check=True).stdout
    assert "state format twx/2" in detail and "level=...  default 'easy' (easy, medium, hard)" in detail
    assert "strategies (opt-in): placement-search" in detail
    bad = cli("envs", "twx:nope")
    assert bad.returncode == 2 and "expected one of twc, cookingworld" in bad.stderr
