"""Why a TWC policy fails: per-object placement accuracy and take-backs, from real rollouts.

Rolls a checkpoint or bundle out on TextWorld Commonsense (with or without the loop guard) and reads the
game's score after every step (ground truth used only here, for the diagnosis, never by the policy). TWC's
score rises when an object is put in a place the game accepts (some objects have several: a kettle goes on
the counter or in the kitchen cupboard, so the gold path's one place is not the test) and falls when it is
taken out again:

- **first put correct**: the first place the policy put each object is one the game accepts,
- **ever correct**: the object was put in an accepted place at some step,
- **take-backs**: the policy took an object out of an accepted place (undoing progress),
- with ``--oracle-no-takeback``, an upper bound: take-backs from correct places are forbidden, so what is left
  is placement knowledge and search.

``--split train --exclude-data DATA`` uses train-split games that are not in DATA (objects seen in training,
games not): the same numbers there tell generalisation to unseen objects apart from decision-making.

    python -m tools.probes.probe_policy_failures CKPT --episodes 40 --loop-guard --out probe.json
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import click

from edge.policies import PolicyWrapper
from models.cli_options import split_option
from tools.bench.benchlib import write_results


def placements(gold: list[str]) -> dict[str, str]:
    """object -> place from a gold path's ``put OBJECT in PLACE`` steps (the objects to put away)."""
    out = {}
    for a in gold:
        if a.startswith("put ") and " in " in a:
            obj, place = a[4:].split(" in ", 1)
            out[obj] = place
    return out


def episode_stats(actions: list[str], scores: list[float], objects: list[str]) -> dict[str, Any]:
    """``scores[i]``: the game's score after ``actions[i]``; the score before the first action is 0."""
    first: dict[str, bool] = {}
    ever: set[str] = set()
    takebacks = 0
    before = 0.0
    for a, after in zip(actions, scores, strict=True):
        if a.startswith("put ") and " in " in a:
            obj = a[4:].split(" in ", 1)[0]
            first.setdefault(obj, after > before)
            if after > before:
                ever.add(obj)
        elif a.startswith("take ") and after < before:
            takebacks += 1
        before = after
    return {
        "objects": len(objects),
        "first_put_correct": sum(1 for o in objects if first.get(o, False)),
        "ever_correct": sum(1 for o in objects if o in ever),
        "takebacks_from_correct_place": takebacks,
    }


def data_seeds(path: str) -> set[int]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return {int(json.loads(line)["meta"]["env_seed"]) for line in f if line.strip()}


class NoTakeback(PolicyWrapper):
    """Oracle wrapper: ``take X`` scores -inf while X sits in a place the game accepts (an upper bound)."""

    suffix = "oracle-no-takeback"

    def __init__(self, inner: Any):
        super().__init__(inner)
        self.placed: set[str] = set()

    def scores(self, instruction: str, state: str, candidates: list[str], memory: Any = ()) -> Any:
        s = self.inner.scores(instruction, state, candidates, memory).copy()
        for i, c in enumerate(candidates):
            if c.startswith("take ") and c[5:] in self.placed:
                s[i] = -1e9
        return s

    def on_reset(self) -> None:
        self.placed.clear()


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("policy_path", type=click.Path(exists=True, file_okay=False))
@split_option()
@click.option("--episodes", type=click.IntRange(1), default=40, show_default=True)
@click.option("--max-steps", type=click.IntRange(1), default=40, show_default=True)
@click.option("--exclude-data", type=click.Path(exists=True, dir_okay=False), help="Skip games in this file.")
@click.option("--loop-guard", is_flag=True, help="Run the policy inside edge.loop_guard (as eval does).")
@click.option("--oracle-no-takeback", is_flag=True, help="Upper bound: no take-back from a correct place.")
@click.option(
    "--placement-search",
    is_flag=True,
    help="Run the policy inside the placement-search strategy (as eval --strategy placement-search does); "
    "records where the "
    "gold path's place ranks in each object's place list.",
)
@click.option("--out", type=click.Path(dir_okay=False), help="JSON with the summary and every episode.")
def main(
    policy_path: str,
    split: str,
    episodes: int,
    max_steps: int,
    exclude_data: str | None,
    loop_guard: bool,
    oracle_no_takeback: bool,
    placement_search: bool,
    out: str | None,
) -> None:
    """Roll POLICY_PATH (checkpoint or bundle) out on TWC and say where its failures come from."""
    from edge.policies import EpisodeMemory, Guarded
    from policy.common import set_threads
    from policy.envs import open_env, parse_env
    from policy.envs.twx import world_key
    from policy.evaluate import open_policy, wilson_interval
    from policy.twx_placement import PlacementSearchPolicy

    set_threads()
    base = open_policy(policy_path)
    oracle = NoTakeback(base) if oracle_no_takeback else None
    agent = oracle or base
    if placement_search:
        agent = PlacementSearchPolicy(agent, world_key)
    elif loop_guard:
        agent = Guarded(agent, world_key)
    skip = data_seeds(exclude_data) if exclude_data else set()
    records = []
    with open_env(parse_env("twx:twc"), step_limit=max_steps) as env:
        seeds = [s for s in env.episodes(split) if s not in skip][:episodes]
        for seed in seeds:
            agent.reset()
            memory = EpisodeMemory()
            state = env.reset(seed, split, gold=True)
            gold = placements(env.gold_path())
            actions: list[str] = []
            scores: list[float] = []
            while not state.done:
                pick = agent.act(state.instruction, state.observation, state.candidates, memory)
                action = state.candidates[pick]
                before = state.score
                actions.append(action)
                state = env.step(action)
                memory.record(action, state.observation)
                scores.append(state.score)
                if oracle is not None and action.startswith("put ") and state.score > before:
                    oracle.placed.add(action[4:].split(" in ", 1)[0])
            rec = {"seed": seed, "success": state.success, "gold": gold, "actions": actions, "scores": scores}
            rec.update(episode_stats(actions, scores, list(gold)))
            if placement_search:
                ranked = agent.search.ranked
                rec["gold_rank"] = {
                    o: next((k for k, (p, _) in enumerate(ranked.get(o, [])) if p == g), None)
                    for o, g in gold.items()
                }
            records.append(rec)
    agent.close()
    n = len(records)
    succ = sum(r["success"] for r in records)
    objects = sum(r["objects"] for r in records)
    summary = {
        "policy": policy_path,
        "split": split,
        "excluded_data": exclude_data,
        "loop_guard": loop_guard,
        "oracle_no_takeback": oracle_no_takeback,
        "placement_search": placement_search,
        "episodes": n,
        "success_rate": succ / n,
        "ci95": list(wilson_interval(succ, n)),
        "first_put_correct": sum(r["first_put_correct"] for r in records) / objects,
        "ever_correct": sum(r["ever_correct"] for r in records) / objects,
        "takebacks_per_episode": sum(r["takebacks_from_correct_place"] for r in records) / n,
        "mean_steps": sum(len(r["actions"]) for r in records) / n,
    }
    if placement_search:
        ranks = [k for r in records for k in r["gold_rank"].values()]
        summary["gold_place_rank"] = {
            str(k): sum(1 for x in ranks if x == k) / len(ranks) for k in sorted(set(ranks), key=str)
        }
    click.echo(json.dumps(summary, indent=1))
    if out:
        write_results(out, {"summary": summary, "episodes": records}, indent=1)


if __name__ == "__main__":
    main()
