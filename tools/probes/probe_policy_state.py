"""Probe: why trained TWC policies loop, and which state text, data filter or serve rule changes that.

Experiment only; no product file is changed. The state text is varied by monkeypatching
``policy.envs.twx.compose_state`` (the TWX adapter looks it up as a module global) during evaluation. The
training data is collected ONCE with a patched ``compose_state`` that stores the raw parts (feedback, look,
inventory, full action history) as JSON, so every variant trains on the same episodes and actions
(collection behaviour does not depend on the state text). Every variant, filter and annotation uses only
what the agent observes and its own actions (no ground truth).

    export HF_HUB_OFFLINE=1 EDGEJUDGE_THREADS=1
    python -m tools.probes.probe_policy_state run --variant placed_noroom --algo bc-success --loop-erase
    python -m tools.probes.probe_policy_state sampled runs/probe/runs/NAME.json     # softmax(scores) on test
    python -m tools.probes.probe_policy_state summarize runs/probe/runs \\
        --out tools/results/probe_policy_state.json

Results and conclusions: tools/results/probe_policy_state.json.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("EDGEJUDGE_THREADS", "1")

import click

import policy.envs.twx as twx_env
from policy.envs import parse_env
from tools.bench.benchlib import write_results

ORIGINAL_COMPOSE = twx_env.compose_state
_clean = twx_env._clean
_inventory = twx_env._inventory
H = twx_env.HISTORY_LEN

# ---------------------------------------------------------------------------------------- state variants

_PUT = re.compile(r"^put (.+?) (?:in|on) (.+)$")
_TAKE = re.compile(r"^take (.+?)(?: from .+)?$")


def placed_summary(history) -> str:
    """Where the agent itself has put objects, from its own action history (not ground truth)."""
    placed: dict[str, str] = {}
    for a in history:
        m = _PUT.match(a)
        if m:
            placed[m.group(1)] = m.group(2)
            continue
        m = _TAKE.match(a)
        if m:
            placed.pop(m.group(1), None)
    return "; ".join(f"{o} in {c}" for o, c in placed.items()) or "nothing"


def room_short(look: str) -> str:
    """The room text without the boilerplate: containers with their contents, loose objects."""
    t = _clean(look)
    t = re.sub(r"^You are in the [^.]*\.\s*", "", t)
    t = re.sub(
        r"\b(In one part of the room you see|In another part of the room you see|There is also|"
        r"You also see|You see)\b\s*",
        "",
        t,
    )
    t = t.replace(", that has nothing on it", " (empty)").replace(" that has nothing on it", " (empty)")
    t = re.sub(r",? that has (.+?) on it", r" holding \1", t)
    return t


def v_default(feedback, look, inventory, history):
    return ORIGINAL_COMPOSE(feedback, look, inventory, history)


def v_hist_first(feedback, look, inventory, history):
    recent = list(history)[-H:]
    fb, lk = _clean(feedback), _clean(look)
    parts = [f"Recent actions: {', '.join(recent) if recent else 'none'}"]
    if fb and fb != lk:
        parts.append(f"Feedback: {fb}")
    parts += [f"Inventory: {_inventory(inventory)}", f"Room: {lk}"]
    return "\n".join(parts)


def v_noroom(feedback, look, inventory, history):
    recent = list(history)[-H:]
    fb, lk = _clean(feedback), _clean(look)
    parts = []
    if fb and fb != lk:
        parts.append(f"Feedback: {fb}")
    parts += [
        f"Inventory: {_inventory(inventory)}",
        f"Recent actions: {', '.join(recent) if recent else 'none'}",
    ]
    return "\n".join(parts)


def v_placed_noroom(feedback, look, inventory, history):
    recent = list(history)[-H:]
    return "\n".join(
        [
            f"Placed by me: {placed_summary(history)}",
            f"Inventory: {_inventory(inventory)}",
            f"Recent actions: {', '.join(recent) if recent else 'none'}",
        ]
    )


def v_placed_shortroom(feedback, look, inventory, history):
    recent = list(history)[-H:]
    return "\n".join(
        [
            f"Placed by me: {placed_summary(history)}",
            f"Inventory: {_inventory(inventory)}",
            f"Recent actions: {', '.join(recent) if recent else 'none'}",
            f"Room: {room_short(look)}",
        ]
    )


def v_placed_default(feedback, look, inventory, history):
    return f"Placed by me: {placed_summary(history)}\n" + ORIGINAL_COMPOSE(feedback, look, inventory, history)


def _default_short(feedback, look, inventory, history):
    recent = list(history)[-H:]
    fb, lk = _clean(feedback), _clean(look)
    parts = []
    if fb and fb != lk:
        parts.append(f"Feedback: {fb}")
    parts += [
        f"Inventory: {_inventory(inventory)}",
        f"Recent actions: {', '.join(recent) if recent else 'none'}",
        f"Room: {room_short(look)}",
    ]
    return "\n".join(parts)


VARIANTS = {
    "default": v_default,
    "hist_first": v_hist_first,
    "shortroom": _default_short,
    "noroom": v_noroom,
    "placed_default": v_placed_default,
    "placed_shortroom": v_placed_shortroom,
    "placed_noroom": v_placed_noroom,
}


def annotate(cand: str, placed: dict[str, str], opened: set[str] | None = None) -> str:
    """Candidate text with what the agent knows from its own actions: 'take X' of an object it placed itself,
    'close X' of a container it opened itself (both undo an earlier action of the agent)."""
    m = _TAKE.match(cand)
    if m and m.group(1) in placed:
        return f"{cand} (undo: I already put {m.group(1)} in {placed[m.group(1)]})"
    if opened and cand.startswith("close ") and cand[6:] in opened:
        return f"{cand} (undo: I opened {cand[6:]})"
    return cand


def opened_set(history) -> set[str]:
    opened: set[str] = set()
    for a in history:
        if a.startswith("open "):
            opened.add(a[5:])
        elif a.startswith("close "):
            opened.discard(a[6:])
    return opened


def v_placed_opened_shortroom(feedback, look, inventory, history):
    recent = list(history)[-H:]
    return "\n".join(
        [
            f"Placed by me: {placed_summary(history)}",
            f"Opened by me: {', '.join(sorted(opened_set(history))) or 'nothing'}",
            f"Inventory: {_inventory(inventory)}",
            f"Recent actions: {', '.join(recent) if recent else 'none'}",
            f"Room: {room_short(look)}",
        ]
    )


VARIANTS["placed_opened_shortroom"] = v_placed_opened_shortroom


def opened_from_text(observation: str) -> set[str]:
    for line in observation.splitlines():
        if line.startswith("Opened by me: "):
            body = line[len("Opened by me: ") :]
            return set() if body == "nothing" else set(body.split(", "))
    return set()


def placed_dict(history) -> dict[str, str]:
    placed: dict[str, str] = {}
    for a in history:
        m = _PUT.match(a)
        if m:
            placed[m.group(1)] = m.group(2)
            continue
        m = _TAKE.match(a)
        if m:
            placed.pop(m.group(1), None)
    return placed


def placed_from_text(observation: str) -> dict[str, str]:
    """Parse the 'Placed by me:' line of a placed_* state text (what the agent sees at run time)."""
    for line in observation.splitlines():
        if line.startswith("Placed by me: "):
            body = line[len("Placed by me: ") :]
            if body == "nothing":
                return {}
            return dict(p.split(" in ", 1) for p in body.split("; "))
    return {}


def raw_compose(feedback, look, inventory, history):
    return json.dumps([feedback, look, inventory, list(history)])


# ------------------------------------------------------------------------------------------------ data


def collect_raw(path: Path, episodes: int, behaviour: str, noise: float, seed: int) -> None:
    from labeler.dataset import write_trajectories
    from policy.collect import CollectConfig, collect

    spec = parse_env("twx:twc")
    twx_env.compose_state = raw_compose
    try:
        cfg = CollectConfig(
            env=spec, split="train", episodes=episodes, behaviour=behaviour, noise=noise, seed=seed
        )
        trajs = list(collect(cfg))
    finally:
        twx_env.compose_state = ORIGINAL_COMPOSE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_trajectories(path, trajs)


def world_key(obs_json: str) -> str:
    """What the agent observes of the world (room text + inventory), without feedback or history."""
    _fb, look, inv, _hist = json.loads(obs_json)
    return _clean(look) + " || " + _inventory(inv)


def loop_erase(trajs):
    """Hindsight detour filter for BC on successful episodes (observations and own actions only):
    drop steps that did not change the observed world (room + inventory: 'look around', 'inventory', ...),
    every 'put X ...' that the agent undid later by taking X again, and every 'take X' after the first one
    (re-takes). What is left is the episode's effective path: first take of each object, its final placement,
    plus opens. Transitions no longer chain, so this is for BC only."""
    for t in trajs:
        acts = [s.action for s in t.steps]
        keep = []
        for i, s in enumerate(t.steps):
            if world_key(s.observation) == world_key(s.next_observation):
                continue
            m = _PUT.match(s.action)
            if m and any((mt := _TAKE.match(b)) and mt.group(1) == m.group(1) for b in acts[i + 1 :]):
                continue
            m = _TAKE.match(s.action)
            if m and any((mt := _TAKE.match(b)) and mt.group(1) == m.group(1) for b in acts[:i]):
                continue
            m = re.match(r"^(open|close) (.+)$", s.action)
            if m:
                obj = m.group(2)
                if m.group(1) == "close" and f"open {obj}" in acts[i + 1 :]:
                    continue  # closed, then reopened later
                nxt = next((b for b in acts[i + 1 :] if obj in b), None)
                if m.group(1) == "open" and nxt == f"close {obj}":
                    continue  # opened, then closed without using it
            keep.append(s)
        t.steps = keep
    return trajs


loop_erase_fn = loop_erase


def with_variant(trajs, variant: str, annotate_cands: bool = False):
    f = VARIANTS[variant]
    for t in trajs:
        for s in t.steps:
            if annotate_cands:
                hist = json.loads(s.observation)[3]
                placed = placed_dict(hist)
                opened = opened_set(hist) if variant == "placed_opened_shortroom" else None
                s.candidates = [annotate(c, placed, opened) for c in s.candidates]
                s.action = annotate(s.action, placed, opened)
            s.observation = f(*json.loads(s.observation))
            s.next_observation = f(*json.loads(s.next_observation))
    return trajs


# ---------------------------------------------------------------------------------------------- policies


class ModelPolicy:
    """A scorer + the embedder; records each episode's actions for the failure-mode note."""

    def __init__(self, model, embedder, name, annotate_cands=False):
        self.model, self.embedder, self.name, self.annotate = model, embedder, name, annotate_cands
        self.traces: list[list[str]] = []

    def scores(self, instruction, observation, candidates):
        import torch

        if self.annotate:
            placed = placed_from_text(observation)
            candidates = [annotate(c, placed, opened_from_text(observation)) for c in candidates]
        emb = torch.from_numpy(self.embedder.embed([instruction, observation, *candidates]))
        with torch.no_grad():
            s = self.model(
                emb[0:1], emb[1:2], emb[2:][None], torch.ones(1, len(candidates), dtype=torch.bool)
            )
        return s[0].numpy()

    def act(self, instruction, observation, candidates):
        import numpy as np

        i = int(np.argmax(self.scores(instruction, observation, candidates)))
        self.traces[-1].append(candidates[i])
        return i

    def reset(self):
        self.traces.append([])

    def close(self):
        pass


class TabuPolicy:
    """Serve-time anti-loop rule: at an observation text already seen in this episode, take the best-scoring
    candidate not yet chosen at that observation (all tried: plain argmax). Needs per-episode memory on the
    client/daemon side; no model or bundle change."""

    def __init__(self, agent):
        self.agent, self.name = agent, agent.name + "+tabu"
        self.traces = agent.traces
        self._seen: dict[str, set[str]] = {}

    def act(self, instruction, observation, candidates):
        import numpy as np

        s = self.agent.scores(instruction, observation, candidates)
        tried = self._seen.setdefault(observation, set())
        order = [int(i) for i in np.argsort(-s)]
        i = next((j for j in order if candidates[j] not in tried), order[0])
        tried.add(candidates[i])
        self.agent.traces[-1].append(candidates[i])
        return i

    def reset(self):
        self._seen = {}
        self.agent.reset()

    def close(self):
        pass


class RandomRec:
    name = "random"

    def __init__(self, seed=0):
        import random

        self.rng = random.Random(seed)
        self.traces: list[list[str]] = []

    def act(self, instruction, observation, candidates):
        i = self.rng.randrange(len(candidates))
        self.traces[-1].append(candidates[i])
        return i

    def reset(self):
        self.traces.append([])

    def close(self):
        pass


def failure_mode(trace: list[str], success: bool) -> str:
    if success:
        return "success"
    placed: dict[str, str] = {}
    retakes = 0
    for a in trace:
        m = _PUT.match(a)
        if m:
            placed[m.group(1)] = m.group(2)
            continue
        m = _TAKE.match(a)
        if m and m.group(1) in placed:
            retakes += 1
            placed.pop(m.group(1))
    tail = trace[-10:]
    if retakes >= 3:
        return "re-take/put-back loop"
    if len(set(tail)) <= 2:
        return f"stuck on {sorted(set(tail))}"
    if not any(_PUT.match(a) for a in trace):
        return "never puts anything"
    return "wanders (puts in wrong places / other)"


def run_eval(agent, variant: str, split: str, episodes: int, tabu: bool = False):
    from collections import Counter

    from policy.evaluate import evaluate

    twx_env.compose_state = VARIANTS[variant]
    try:
        agent.traces = []
        if tabu:
            agent = TabuPolicy(agent)
        r = evaluate(agent, parse_env("twx:twc"), split=split, episodes=episodes, max_steps=40)
    finally:
        twx_env.compose_state = ORIGINAL_COMPOSE
    modes = Counter(failure_mode(tr, e["success"]) for tr, e in zip(agent.traces, r.per_episode, strict=True))
    d = r.to_dict()
    return {
        "success_rate": d["success_rate"],
        "successes": d["successes"],
        "episodes": d["episodes"],
        "ci95": d["ci95"],
        "mean_steps": d["mean_steps"],
        "modes": dict(modes),
        "example_trace": agent.traces[0][:16],
    }


# ------------------------------------------------------------------------------------------------ commands


@click.group()
def cli():
    pass


@cli.command()
@click.option("--variant", type=click.Choice(sorted(VARIANTS)), default="default")
@click.option("--algo", default="bc-success", help="bc-success | bc-all | iql | awr-success (see code)")
@click.option("--episodes", default=300, type=int, help="Training episodes collected (seed 0).")
@click.option("--behaviour", default="gold-noise=0.3,random=0.7")
@click.option("--noise", default=0.3, type=float)
@click.option("--max-success-rate", default=0.3, type=float, help="as bench_policy (1 = keep all)")
@click.option("--steps", default=2000, type=int)
@click.option("--lr", default=1e-3, type=float)
@click.option("--reward-scale", default=10.0, type=float)
@click.option("--eval-episodes", default=20, type=int)
@click.option("--seed", default=0, type=int)
@click.option(
    "--loop-erase", is_flag=True, help="BC data: loop-erase successful episodes (observations only)"
)
@click.option(
    "--annotate",
    "annotate_cands",
    is_flag=True,
    help="annotate 'take X' candidates of objects the agent placed itself (needs a placed_* variant)",
)
@click.option("--name", default=None)
@click.option("--out", "out_dir", default="runs/probe/runs")
@click.option("--data-dir", default="runs/probe/data")
def run(
    variant,
    algo,
    episodes,
    behaviour,
    noise,
    max_success_rate,
    steps,
    lr,
    reward_scale,
    eval_episodes,
    seed,
    loop_erase,
    annotate_cands,
    name,
    out_dir,
    data_dir,
):
    """Collect (cached), build the variant, train one policy, evaluate on test and train seeds."""
    import torch

    torch.set_num_threads(1)
    from labeler.dataset import read_trajectories
    from labeler.subset import most_episodes, scarce_subset
    from policy import bc, iql
    from policy.buffer import build_table
    from policy.features import TextEmbedder
    from policy.rewards import parse_reward

    t0 = time.perf_counter()
    tag = f"e{episodes}-{behaviour.replace('=', '').replace(',', '_')}-n{noise}-s{seed}"
    raw = Path(data_dir) / f"raw-{tag}.jsonl.gz"
    if not raw.exists():
        collect_raw(raw, episodes, behaviour, noise, seed)
    trajs = read_trajectories(raw)
    trajs = scarce_subset(trajs, most_episodes(trajs, max_success_rate), max_success_rate)
    if loop_erase:
        trajs = loop_erase_fn(trajs)
    if annotate_cands and not variant.startswith("placed"):
        raise click.UsageError(
            "--annotate needs a placed_* variant (the agent parses the 'Placed by me:' line)"
        )
    trajs = with_variant(trajs, variant, annotate_cands)
    n_succ = sum(t.success for t in trajs)
    embedder = TextEmbedder(progress=False)
    name = (
        name
        or f"{variant}-{algo}{'-le' if loop_erase else ''}{'-ann' if annotate_cands else ''}-{tag}-u{steps}"
    )
    if algo == "random":
        agent = RandomRec(0)
    else:
        if algo in ("bc-success", "awr-success"):
            use = [t for t in trajs if t.success]
        else:
            use = trajs
        # the probe predates argument features: it measures the single-sentence candidate features
        table = build_table(use, embedder, parse_reward("sparse"), candidate_features="action")
        dim = embedder.dim
        if algo in ("bc-success", "bc-all"):
            res = bc.train(
                table,
                bc.BCConfig(steps=steps, lr=lr, seed=seed, filter="all", candidate_features="action"),
                dim=dim,
            )
        elif algo == "iql":
            res = iql.train(
                table.to_torch(),
                iql.IQLConfig(
                    steps=steps, lr=lr, seed=seed, reward_scale=reward_scale, candidate_features="action"
                ),
                dim=dim,
            )
        else:
            raise click.UsageError(f"unknown algo {algo}")
        agent = ModelPolicy(res.model, embedder, name, annotate_cands)
    t_train = time.perf_counter() - t0
    out = {
        "name": name,
        "variant": variant,
        "algo": algo,
        "data": {
            "episodes_collected": episodes,
            "behaviour": behaviour,
            "noise": noise,
            "seed": seed,
            "episodes_used": len(trajs),
            "successful": n_succ,
            "steps": sum(len(t.steps) for t in trajs),
        },
        "loop_erase": loop_erase,
        "annotate": annotate_cands,
        "steps": steps,
        "lr": lr,
        "reward_scale": reward_scale if algo == "iql" else None,
        "example_state": trajs[0].steps[min(3, len(trajs[0].steps) - 1)].observation,
        "test": run_eval(agent, variant, "test", eval_episodes),
        "train_split": run_eval(agent, variant, "train", eval_episodes),
        "test_tabu": run_eval(agent, variant, "test", eval_episodes, tabu=True) if algo != "random" else None,
        "seconds_train": round(t_train, 1),
        "seconds": round(time.perf_counter() - t0, 1),
        "command": "python -m tools.probes.probe_policy_state " + " ".join(sys.argv[1:]),
    }
    write_results(Path(out_dir) / f"{name}.json", out)
    if algo != "random":
        import torch

        Path(out_dir, "ckpt").mkdir(parents=True, exist_ok=True)
        torch.save(agent.model.state_dict(), Path(out_dir, "ckpt", f"{name}.pt"))
    t, tr = out["test"], out["train_split"]
    click.echo(
        f"{name}: test {t['success_rate']:.0%} {t['ci95']} {t['modes']} | train {tr['success_rate']:.0%} "
        f"{tr['modes']} | tabu {out['test_tabu'] and out['test_tabu']['success_rate']} | {out['seconds']} s"
    )


@cli.command()
@click.argument("run_json")
@click.option("--temperature", default=1.0, type=float)
@click.option("--episodes", default=20, type=int)
def sampled(run_json, temperature, episodes):
    """Re-evaluate a saved run's scorer on test, sampling from softmax(scores/T) (adds 'test_sampled_T')."""
    import torch

    torch.set_num_threads(1)
    from edge.policies import Sampled
    from policy.features import TextEmbedder
    from policy.model import CandidateScorer, ScorerConfig

    p = Path(run_json)
    r = json.loads(p.read_text())
    model = CandidateScorer(ScorerConfig())
    model.load_state_dict(torch.load(p.parent / "ckpt" / f"{r['name']}.pt", weights_only=True))
    inner = ModelPolicy(model.eval(), TextEmbedder(progress=False), r["name"], r.get("annotate", False))

    class Rec(Sampled):
        @property
        def traces(self):
            return inner.traces

        @traces.setter
        def traces(self, value):
            inner.traces = value

        def act(self, instruction, observation, candidates):
            i = super().act(instruction, observation, candidates)
            inner.traces[-1].append(candidates[i])
            return i

    agent = Rec(inner, temperature, seed=0)
    r[f"test_sampled_T{temperature:g}"] = run_eval(agent, r["variant"], "test", episodes)
    write_results(p, r)
    click.echo(f"{r['name']} sampled T={temperature}: {r[f'test_sampled_T{temperature:g}']}")


@cli.command()
@click.argument("runs_dir")
@click.option("--out", "out_path", default="tools/results/probe_policy_state.json")
def summarize(runs_dir, out_path):
    rows = [json.loads(p.read_text()) for p in sorted(Path(runs_dir).glob("*.json"))]
    rows.sort(key=lambda r: -r["test"]["success_rate"])
    write_results(out_path, {"runs": rows})

    def ci(x):
        return f"{x['success_rate']:.0%} [{x['ci95'][0]:.0%}, {x['ci95'][1]:.0%}]" if x else "-"

    click.echo("| run | test argmax | test argmax+tabu | train split | test failure modes |")
    click.echo("|---|---|---|---|---|")
    for r in rows:
        t = r["test"]
        click.echo(
            f"| {r['name']} | {ci(t)} | {ci(r.get('test_tabu'))} | {ci(r['train_split'])} | {t['modes']} |"
        )


@cli.command()
@click.option("--variant", type=click.Choice(sorted(VARIANTS)), default="placed_shortroom")
def show(variant):
    """Print a few states of one variant (checks the parsing)."""
    from labeler.dataset import read_trajectories

    raw = sorted(Path("runs/probe/data").glob("raw-*.jsonl.gz"))[0]
    t = [t for t in read_trajectories(raw) if t.success][0]
    for s in with_variant([t], variant)[0].steps[:6]:
        click.echo("---\n" + s.observation + f"\n>> {s.action}")


if __name__ == "__main__":
    cli()
