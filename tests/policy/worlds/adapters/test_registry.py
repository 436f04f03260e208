"""The adapter registry (policy.worlds.adapters.registry): names and their one-line errors, levels resolved to
game parameters, adapters registered through the environment variable."""

from __future__ import annotations

import pytest

from policy.worlds.adapters import EnvError, adapter_class, parse_env


@pytest.mark.parametrize("name", ["gym:cartpole", "twx:coin", "twx", "twc"])
def test_unknown_env(name):
    with pytest.raises(EnvError):
        parse_env(name)


def test_bad_params():
    with pytest.raises(EnvError, match="expected an integer"):
        parse_env("twx:twc", "numLocations=many")


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
    monkeypatch.setenv("EDGEJUDGE_ENVS", "mine=policy.worlds.adapters.twx:TWXAdapter")
    assert adapter_class("mine") is adapter_class("twx")
    monkeypatch.setenv("EDGEJUDGE_ENVS", "broken")
    with pytest.raises(EnvError, match="name=module:Class"):
        adapter_class("twx")


def test_registration_errors_say_how_to_register(monkeypatch, tmp_path):
    with pytest.raises(EnvError) as e:
        adapter_class("gym")
    text = str(e.value)
    assert text.startswith("unknown environment adapter 'gym': expected one of ")
    assert "EDGEJUDGE_ENVS=NAME=module:Class" in text and "PYTHONPATH" in text and "'edgejudge.envs'" in text

    monkeypatch.setenv("EDGEJUDGE_ENVS", "mine=my_world_adapter:MyAdapter")
    with pytest.raises(EnvError) as e:
        adapter_class("mine")
    text = str(e.value)
    assert "(my_world_adapter:MyAdapter, EDGEJUDGE_ENVS) cannot be loaded" in text
    assert "No module named 'my_world_adapter'" in text
    assert "put the folder that holds my_world_adapter.py on PYTHONPATH" in text and "\n" not in text

    (tmp_path / "my_world_adapter.py").write_text("import gymnasium_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        EnvError, match="No module named 'gymnasium_not_installed'.*install what my_world_adapter"
    ):
        adapter_class("mine")

    monkeypatch.setenv("EDGEJUDGE_ENVS", "mine=policy.worlds.adapters.twx:TwxAdapter")
    with pytest.raises(EnvError, match="module policy.worlds.adapters.twx has no attribute 'TwxAdapter'"):
        adapter_class("mine")
