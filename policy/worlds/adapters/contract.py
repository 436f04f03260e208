"""The contract every environment adapter keeps, checked on a few tiny real episodes of its world.

Each check takes an open adapter and raises :class:`ContractError` (one line saying what is wrong),
:class:`CheckSkipped` where it does not apply to the world (e.g. a log replay cannot answer an action it did
not log), or returns. :func:`run_contract` runs them on one world. These are the checks of the world alone;
``collection`` (collection records the world, and the labelers never read ``info``) runs the collector and
the labelers, so it lives above the world package, in :mod:`policy.worlds.collection_check`, which holds the
whole contract as ``edgejudge envs check NAME`` runs it on any registered adapter. The contract tests run them
on the shipped adapters' cases. The checks here:

- ``describes-itself``: name, tasks, layout, state format; the recorded parameters read back;
- ``reset-and-state``: every split has episodes; a reset's state is the adapter's ``compose`` of its parts;
- ``gold-path``: the expert's actions are admissible where they are taken and succeed with score 1 (a log
  replay: its logged actions are admissible and end the episode);
- ``deterministic``: the same episode and actions give the same texts (or, without ``exact_replay``, the
  same start);
- ``disjoint-splits``: the splits' episodes are different worlds, where the adapter says so;
- ``invalid-answer``: an answer outside the candidates spends a step and keeps the world;
- ``no-score-in-state``: no state text carries the score or other numeric ground truth of ``info``
  (:func:`check_no_score_in_state`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from policy.worlds.adapters.base import EnvAdapter, EnvSpec, EnvState

EPISODES = 2
"""Episodes per check where a check walks several."""


class ContractError(AssertionError):
    """A broken contract: one line naming what is wrong."""


class CheckSkipped(Exception):
    """The check does not apply to this world (the reason is the message)."""


def require(condition: Any, reason: str) -> None:
    if not condition:
        raise ContractError(reason)


def _snippet(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------------------------------------------ walks


def walk_gold(env: EnvAdapter, episode: Any, split: str) -> list[EnvState]:
    """Reset ``episode`` with its gold path and follow it (each action must be a candidate); the states."""
    state = env.reset(episode, split, gold=True)
    gold = env.gold_path()
    if gold is None:
        raise CheckSkipped(f"{env.spec.name} has no expert path (gold_path() is None)")
    require(gold, f"{env.spec}: episode {episode!r} has an empty gold path")
    states = [state]
    for i, action in enumerate(gold):
        require(
            action in state.candidates,
            f"{env.spec} episode {episode!r}: gold action {i} {action!r} is not a candidate there",
        )
        state = env.step(action)
        states.append(state)
        if state.done:
            break
    return states


def walk_random(env: EnvAdapter, episode: Any, split: str, rng: random.Random, steps: int) -> list[EnvState]:
    """Reset ``episode`` and take up to ``steps`` random actions among the adapter's ``noise_candidates``."""
    state = env.reset(episode, split)
    states = [state]
    for _ in range(steps):
        if state.done:
            break
        state = env.step(rng.choice(env.noise_candidates(state) or state.candidates))
        states.append(state)
    return states


# ------------------------------------------------------------------------------------------------ checks


def check_describes_itself(env: EnvAdapter) -> None:
    from models.state_layout import StateLayout
    from policy.worlds.adapters.registry import parse_env

    cls = type(env)
    require(
        cls.name == env.spec.adapter,
        f"the class's name {cls.name!r} is not its registered name {env.spec.adapter!r}",
    )
    require(env.spec.task in cls.tasks, f"task {env.spec.task!r} is not among its tasks")
    require(isinstance(cls.layout, StateLayout), "layout is not a models.state_layout.StateLayout")
    require("/" in cls.state_format, f"state_format {cls.state_format!r} is not NAME/VERSION")
    require(set(cls.splits) >= {"train", "test"}, f"splits {cls.splits} lack train or test")
    again = parse_env(env.spec.name, env.spec.params)
    require(again == env.spec, f"the recorded parameters {env.spec.params!r} read back as {again.params!r}")


def check_reset_and_state(env: EnvAdapter) -> None:
    cls = type(env)
    for split in env.splits:
        ids = env.episodes(split)
        require(ids, f"no {split} episodes")
        s = env.reset(ids[0], split)
        require(isinstance(s, EnvState), f"reset() returned {type(s).__name__}, not an EnvState")
        require(s.instruction.strip(), f"{split} episode {ids[0]!r}: an empty instruction")
        require(not s.done, f"{split} episode {ids[0]!r} is done at reset")
        require(
            s.candidates and all(isinstance(c, str) and c for c in s.candidates),
            f"{split} episode {ids[0]!r}: no candidates, or an empty one",
        )
        require(
            s.observation == cls.compose(s.parts, env.history),
            "the state text is not compose(parts, history): one composition function makes every state text",
        )
        require(cls.layout.is_structured(s.observation), "the state text does not follow the layout's labels")
        require(0.0 <= s.score <= 1.0, f"score {s.score} is outside 0-1")
        require(env.num_steps == 0, f"{env.num_steps} steps counted after reset")


def check_gold_path(env: EnvAdapter) -> None:
    split = env.splits[0]
    for episode in env.episodes(split)[:EPISODES]:
        states = walk_gold(env, episode, split)
        last = states[-1]
        require(all(0.0 <= s.score <= 1.0 for s in states), "a score outside 0-1 on the gold path")
        if not env.needs_simulator:
            require(last.done, f"episode {episode!r}: the logged path does not end the episode")
            continue  # a replay's logged path is what happened, not an expert's
        require(
            last.done and last.success and not last.failure,
            f"episode {episode!r}: the gold path does not succeed (done={last.done}, "
            f"success={last.success}, failure={last.failure})",
        )
        require(
            abs(last.score - 1.0) < 1e-6, f"episode {episode!r}: the gold path ends with score {last.score}"
        )


def check_deterministic(env: EnvAdapter) -> None:
    split = env.splits[-1]
    episode = env.episodes(split)[0]
    if not env.exact_replay:
        # names of look-alike objects may change between resets: the same episode starts from the same state
        first, again = env.reset(episode, split), env.reset(episode, split)
        require(
            first.observation == again.observation and len(first.candidates) == len(again.candidates),
            f"{split} episode {episode!r} starts differently on a second reset",
        )
        return

    def run() -> list[tuple[str, tuple[str, ...]]]:
        return [
            (s.observation, tuple(s.candidates))
            for s in walk_random(env, episode, split, random.Random(7), 4)
        ]

    require(run() == run(), f"{split} episode {episode!r}: the same actions gave different texts")


def check_disjoint_splits(env: EnvAdapter) -> None:
    ids = {split: set(env.episodes(split)) for split in env.splits}
    require(all(ids.values()), "a split without episodes")
    if not env.disjoint_splits:
        raise CheckSkipped("the adapter says its splits share worlds (disjoint_splits = False)")
    names = list(ids)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            require(not ids[a] & ids[b], f"{a} and {b} share episodes {sorted(ids[a] & ids[b], key=str)[:3]}")
    first = {split: env.reset(env.episodes(split)[0], split).observation for split in env.splits}
    require(len(set(first.values())) == len(first), "the splits' first episodes start in the same state")


def check_invalid_answer(env: EnvAdapter) -> None:
    if not env.needs_simulator:
        raise CheckSkipped("a log replay cannot answer an action it did not log")
    cls = type(env)
    split = env.splits[0]
    s = env.reset(env.episodes(split)[0], split)
    after = env.invalid()
    require(env.num_steps == 1, f"an invalid answer counted {env.num_steps} steps, not 1")
    require(
        cls.world_key(after.observation) == cls.world_key(s.observation),
        "an invalid answer changed the world state",
    )
    require(
        after.observation == cls.compose(after.parts, env.history),
        "the state text after an invalid answer is not compose(parts, history)",
    )


SCORE_WORD = re.compile(r"\b(?:score|points?)\b", re.I)
"""A word that talks about the score."""
NUMBER_NEAR_SCORE = re.compile(
    r"\b(?:score|points?|progress|reward)\b[^.!?\n\d]{0,20}?(\d+(?:\.\d+)?)"  # "score: 3", "score is 0.5"
    r"|(\d+(?:\.\d+)?)\s*(?:%|points?\b)",  # "3 points", "50%"
    re.I,
)
"""A number next to a score word: after it (within 20 characters, in the same sentence) or before ``points``
or ``%``."""


def numbers_near_score(text: str) -> dict[float, str]:
    """The numbers a state text shows next to a score word (:data:`NUMBER_NEAR_SCORE`), each with the words
    around it."""
    out: dict[float, str] = {}
    for m in NUMBER_NEAR_SCORE.finditer(text):
        context = " ".join(text[max(0, m.start() - 30) : m.end()].split())
        out.setdefault(float(m.group(1) or m.group(2)), ("..." if m.start() > 30 else "") + context)
    return out


def _numeric_truth(state: EnvState) -> dict[str, float]:
    out = {"score": float(state.score)}
    for key, value in state.info.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[f"info[{key!r}]"] = float(value)
    return out


def score_leaks(episodes: Sequence[Sequence[EnvState]]) -> list[str]:
    """The ways the state texts of ``episodes`` carry numeric ground truth; one line each (empty: none).

    Only values that vary within an episode are looked at (a constant says nothing about progress): the
    state's normalised ``score`` and every number in its ``info``. A value leaks when

    1. *it is shown*: at two or more steps with different values, the state text shows that step's value
       (or 100 times it) next to a score word (:data:`NUMBER_NEAR_SCORE`: "score: 3", "score is 0.5",
       "3 points", "50%"); or
    2. *its changes are announced*: the text mentions ``score``/``points`` at exactly the steps where the
       value changed ("your score has just gone up"), and there are steps where it did not change.
    """
    series: dict[str, list[list[tuple[float, str]]]] = {}
    for states in episodes:
        per = [(_numeric_truth(s), s.observation) for s in states]
        for key in sorted(set().union(*(v for v, _ in per))):
            values = [(v[key], text) for v, text in per if key in v]
            if len({x for x, _ in values}) > 1:
                series.setdefault(key, []).append(values)
    leaks = []
    for key, runs in series.items():
        shown: dict[float, str] = {}
        changed = mentioned = transitions = 0
        agree, announced = True, ""
        for values in runs:
            for value, text in values:
                for number, context in numbers_near_score(text).items():
                    if abs(number - value) < 1e-6 or abs(number - 100 * value) < 1e-6:
                        shown.setdefault(value, context)
            for (before, _), (value, text) in zip(values, values[1:], strict=False):
                change, mention = value != before, SCORE_WORD.search(text)
                transitions += 1
                changed += change
                mentioned += bool(mention)
                agree = agree and change == bool(mention)
                if mention and not announced:
                    announced = " ".join(text[max(0, mention.start() - 30) : mention.end() + 30].split())
        if len(shown) >= 2:
            value = max(shown, key=abs)
            leaks.append(f"{key} {value:g} shown as {shown[value]!r}")
        elif agree and changed and mentioned and changed < transitions:
            leaks.append(
                f"{key}'s changes announced: the text mentions score/points exactly at the {changed} "
                f"steps where it changed ({announced!r})"
            )
    return leaks


def check_no_score_in_state(env: EnvAdapter) -> None:
    """No state text carries the score or other numeric ground truth of ``info``, over the gold paths of a
    few episodes (where the score moves) and a random episode (:func:`score_leaks`)."""
    split = env.splits[0]
    ids = env.episodes(split)
    episodes = []
    for episode in ids[:EPISODES]:
        try:
            episodes.append(walk_gold(env, episode, split))
        except CheckSkipped:
            break
    rng = random.Random(3)
    for episode in ids[:EPISODES]:
        episodes.append(walk_random(env, episode, split, rng, env.step_limit))
    leaks = score_leaks(episodes)
    require(
        not leaks,
        "the state text carries the ground truth: "
        + "; ".join(leaks)
        + ". Keep the score and progress under EnvState.info only",
    )


Check = Callable[[EnvAdapter], None]


CHECKS: dict[str, Check] = {
    "describes-itself": check_describes_itself,
    "reset-and-state": check_reset_and_state,
    "gold-path": check_gold_path,
    "deterministic": check_deterministic,
    "disjoint-splits": check_disjoint_splits,
    "invalid-answer": check_invalid_answer,
    "no-score-in-state": check_no_score_in_state,
}


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: str  # "pass" | "fail" | "skip"
    reason: str = ""


def run_check(name: str, env: EnvAdapter, checks: Mapping[str, Check] = CHECKS) -> CheckResult:
    """Run the check ``name`` of ``checks``; an exception other than a contract failure (the adapter crashed)
    is a failure too."""
    try:
        checks[name](env)
    except CheckSkipped as e:
        return CheckResult(name, "skip", str(e))
    except ContractError as e:
        return CheckResult(name, "fail", str(e))
    except Exception as e:  # noqa: BLE001 - an adapter that crashes fails the check, with the reason
        return CheckResult(name, "fail", f"{type(e).__name__}: {_snippet(str(e), 300)}")
    return CheckResult(name, "pass")


def run_contract(
    spec: EnvSpec, step_limit: int = 30, checks: Mapping[str, Check] = CHECKS
) -> Iterator[CheckResult]:
    """Open ``spec``'s world once and run ``checks`` (name -> check, in order; by default the world's own) on
    it, yielding each result as it comes; a world that does not open is one failed ``open`` result."""
    from policy.worlds.adapters.registry import open_env

    try:
        env = open_env(spec, step_limit=step_limit)
    except Exception as e:  # noqa: BLE001
        yield CheckResult("open", "fail", f"{type(e).__name__}: {_snippet(str(e), 300)}")
        return
    with env:
        for name in checks:
            yield run_check(name, env, checks)
