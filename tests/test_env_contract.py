"""The contract every environment adapter keeps, on tiny real episodes of each registered world.

An adapter joins by adding its cases to ``CASES`` (name, parameters, step limit). Every built-in adapter
must have at least one case.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from labeler.dataset import Trajectory
from models.state_layout import StateLayout, layout_of
from policy.collect import CollectConfig, collect
from policy.envs import EnvAdapter, EnvError, EnvState, adapter_class, open_env, parse_env
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
EPISODES = 2
IDS = [f"{n}[{p}]" for n, p, _ in CASES]


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def world(request):
    name, params, limit = request.param
    spec = parse_env(name, params)
    with open_env(spec, step_limit=limit) as env:
        yield env


def _walk_gold(env: EnvAdapter, episode, split: str) -> tuple[list[EnvState], list[str]]:
    state = env.reset(episode, split, gold=True)
    gold = env.gold_path()
    assert gold, f"{env.spec}: an empty gold path"
    states = [state]
    for action in gold:
        assert action in state.candidates, f"{env.spec} {episode}: gold action {action!r} not a candidate"
        state = env.step(action)
        states.append(state)
        if state.done:
            break
    return states, gold


def test_every_builtin_adapter_has_cases():
    assert set(BUILTIN) <= {n.split(":")[0] for n, _, _ in CASES}


@pytest.mark.real
def test_describes_itself(world):
    cls = type(world)
    assert cls.name == world.spec.adapter and world.spec.task in cls.tasks
    assert isinstance(cls.layout, StateLayout) and "/" in cls.state_format
    assert set(cls.splits) >= {"train", "test"}
    assert parse_env(world.spec.name, world.spec.params) == world.spec, "recorded parameters read back"


@pytest.mark.real
def test_reset_and_state(world):
    for split in world.splits:
        ids = world.episodes(split)
        assert ids, f"{world.spec}: no {split} episodes"
        s = world.reset(ids[0], split)
        assert isinstance(s, EnvState) and s.instruction.strip() and not s.done
        assert s.candidates and all(isinstance(c, str) and c for c in s.candidates)
        assert s.observation == type(world).compose(s.parts, world.history), "one composition function"
        assert type(world).layout.is_structured(s.observation)
        assert 0.0 <= s.score <= 1.0 and world.num_steps == 0


@pytest.mark.real
def test_gold_path_is_admissible_and_succeeds(world):
    split = world.splits[0]
    for episode in world.episodes(split)[:EPISODES]:
        states, _ = _walk_gold(world, episode, split)
        last = states[-1]
        assert last.done and last.success and not last.failure
        assert last.score == pytest.approx(1.0) and all(0.0 <= s.score <= 1.0 for s in states)


@pytest.mark.real
def test_deterministic_per_episode(world):
    split = world.splits[-1]
    episode = world.episodes(split)[0]

    if not type(world).exact_replay:
        # names of look-alike objects change between resets: the same episode starts from the same state
        first, again = world.reset(episode, split), world.reset(episode, split)
        assert first.observation == again.observation and len(first.candidates) == len(again.candidates)
        return

    def run():
        rng = random.Random(7)
        s = world.reset(episode, split)
        out = [(s.observation, tuple(s.candidates))]
        for _ in range(4):
            s = world.step(rng.choice(s.candidates))
            out.append((s.observation, tuple(s.candidates)))
            if s.done:
                break
        return out

    assert run() == run()


@pytest.mark.real
def test_splits_are_disjoint_where_the_world_says_so(world):
    ids = {split: set(world.episodes(split)) for split in world.splits}
    assert all(ids.values())
    if not type(world).disjoint_splits:
        return
    names = list(ids)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not ids[a] & ids[b], f"{world.spec}: {a} and {b} share episodes"
    first = {split: world.reset(world.episodes(split)[0], split).observation for split in world.splits}
    assert len(set(first.values())) == len(first), "the splits' first episodes are different worlds"


@pytest.mark.real
def test_invalid_answer_spends_a_step_and_keeps_the_world(world):
    split = world.splits[0]
    s = world.reset(world.episodes(split)[0], split)
    after = world.invalid()
    assert world.num_steps == 1
    assert type(world).world_key(after.observation) == type(world).world_key(s.observation)
    assert after.observation == type(world).compose(after.parts, world.history)


class _Poisoned(dict):
    """Ground truth that raises on any read: labelers must never look at ``info``."""

    def _no(self, *a, **k):
        raise AssertionError("a labeler read the ground truth under info")

    __getitem__ = get = keys = items = values = __iter__ = __contains__ = __len__ = _no


GENERIC_RUBRIC = """
format = "edgejudge.rubrics"
format_version = 1
task_type = "*"
version = 1

[[items]]
id = "inventory-gain"
category = "execution"
text = "Something was picked up"
inventory = "gain"

[[items]]
id = "no-effect"
category = "invalidity"
text = "Nothing changed"
unchanged = true
"""


@pytest.mark.real
def test_collection_records_the_world_and_labelers_never_read_info(world):
    from labeler.coren.pipeline import CorenLabeler
    from labeler.coren.prompts import load_prompts, load_templates
    from labeler.trca.checks import CompiledRubric
    from labeler.trca.mine import mine
    from labeler.trca.pipeline import TRCAConfig, label_trajectory_rewards
    from labeler.trca.rubric import parse_rubric

    cfg = CollectConfig(
        env=world.spec,
        split=world.splits[0],
        episodes=EPISODES,
        noise=0.3,
        max_steps=world.step_limit,
        seed=1,
    )
    trajs = list(collect(cfg, world))
    for t in trajs:
        assert t.meta["env"] == world.spec.name and t.meta["params"] == world.spec.params
        assert t.meta["state_format"] == type(world).state_format
        assert layout_of(t.meta) == type(world).layout
        assert all(s.action in s.candidates for s in t.steps)

    poisoned = [
        dataclasses.replace(t, steps=[dataclasses.replace(s, info=_Poisoned()) for s in t.steps])
        for t in trajs
    ]
    rubric = CompiledRubric(parse_rubric(GENERIC_RUBRIC))
    for clean, dirty in zip(trajs, poisoned, strict=True):
        a = label_trajectory_rewards(clean, rubric, TRCAConfig())
        b = label_trajectory_rewards(dirty, rubric, TRCAConfig())
        assert a[1] == b[1]
    assert mine(poisoned).steps == sum(len(t.steps) for t in trajs)

    class Counter:  # the two judge properties COREN's text building uses
        n_ctx = 2048

        @staticmethod
        def count_tokens(text: str) -> int:
            return len(text.split())

    coren = CorenLabeler(Counter(), None, load_prompts(1), load_templates())
    for t in poisoned:
        assert isinstance(t, Trajectory)
        _, texts = coren.step_texts(t)
        assert len(texts) == len(t.steps)


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
