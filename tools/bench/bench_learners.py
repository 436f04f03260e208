"""Which offline learner turns a success-scarce file and its labels into the best policy: learners side by
side on the same files, with where each one's weight goes.

    python -m tools.bench.bench_learners --world twc-easy --learner bc-success --learner iql-trca \\
        --out tools/results/bench_learners.json

Per world it takes the benchmark matrix's success-scarce training file (``policy.matrix.data``: the
same pool, cut and judge-built TRCA rubric as ``edgejudge matrix``'s ``trca-built`` rows, in the same work
folder), trains every learner on it and reports:

- **success**: rollouts of the checkpoint on the test split's first episodes with the client's generic loop
  guard, in process (this is a diagnostic: the matrix's rows are the exported bundle through edge-serve);
- **decisions**: per-decision accuracy against the test split's gold paths (``policy.decisions``), per verb;
- **where the weight goes**: the share of the learner's training weight on steps whose logged action was the
  world's gold action, against that share of the data's steps (a weighted imitation learner that puts no more
  weight on gold steps than the data does imitates the data's mixture); and the per-step AUROC of the weights
  for gold steps.

Learners are named presets (``LEARNERS``) or ``NAME=ALGO:REWARD[:KEY=VALUE,...]``. Rows are keyed by their
configuration and written after each one (resumable).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import click
import numpy as np

from tools.bench.benchlib import load_average, provenance

LEARNERS: dict[str, tuple[str, str, dict[str, str]]] = {
    "bc-success": ("bc", "sparse", {"filter": "success"}),
    "iql-sparse": ("iql", "sparse", {}),
    "iql-trca": ("iql", "trca", {}),
    "awr-trca": ("awr", "trca", {}),
    "cql-trca": ("cql", "trca", {}),
    "bc-labeled": ("bc", "trca", {"filter": "labeled"}),
    "bc-success-labeled": ("bc", "trca", {"filter": "success-labeled"}),
    "bc-success-progress": ("bc", "trca", {"filter": "success+progress"}),
    "credit-trca": ("credit", "trca", {}),
    "bc-expert": ("bc", "expert", {}),
}
EXPERT_LEARNER = "expert"
"""The reward name of a learner trained on as many expert episodes (gold paths of the train split) as the
file has successes, with BC: the baseline a label-reading learner must beat."""


def parse_learner(text: str) -> tuple[str, str, str, dict[str, str]]:
    if text in LEARNERS:
        algo, reward, sets = LEARNERS[text]
        return text, algo, reward, dict(sets)
    name, eq, rest = text.partition("=")
    parts = rest.split(":")
    if not eq or len(parts) not in (2, 3):
        raise click.BadParameter(f"{text!r}: a preset ({', '.join(LEARNERS)}) or NAME=ALGO:REWARD[:K=V,...]")
    sets = dict(kv.split("=", 1) for kv in parts[2].split(",")) if len(parts) == 3 and parts[2] else {}
    return name, parts[0], parts[1], sets


def gold_flags(trajectories: list[Any]) -> np.ndarray:
    """Per transition (steps with candidates, in the table's order): the logged action was the gold one."""
    return np.array(
        [bool(s.info.get("gold")) for t in trajectories for s in t.steps if s.candidates], dtype=bool
    )


def bc_weights(trajectories: list[Any], filter: str, spec: Any) -> np.ndarray:
    """BC's weight of every transition: 1 where its filter keeps the step, else 0."""
    from policy.bc import kept
    from policy.rewards import step_rewards

    return np.array(
        [
            float(kept(filter, t.success, r))
            for t in trajectories
            for s, r in zip(t.steps, step_rewards(t, spec), strict=True)
            if s.candidates
        ]
    )


def label_quality(trajectories: list[Any]) -> dict[str, Any]:
    """The training file's labels beside the policies they produce: per-step AUROC of ``trca.total`` against
    score progress and the gold path, and ``label quality --check``'s success separation."""
    from labeler.label_check import check_channels
    from labeler.quality import measure

    report = {c.channel: c.to_dict() for c in measure(trajectories).channels}
    (check,) = check_channels(trajectories, ["trca.total"])
    return {
        "episodes": len(trajectories),
        "successes": sum(t.success for t in trajectories),
        "trca.total": report.get("trca.total"),
        "env.reward": report.get("env.reward"),
        "check": check.to_dict(),
    }


def weight_report(weights: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    from labeler.auroc import auroc

    w = np.clip(np.asarray(weights, dtype=np.float64), 0.0, None)  # negative credit is no imitation weight
    share = float(w[gold].sum() / max(w.sum(), 1e-12))
    return {
        "gold_step_share_of_data": float(gold.mean()),
        "gold_step_share_of_weight": share,
        "weight_auroc_gold": float(auroc(w.tolist(), gold.tolist())) if 0 < gold.sum() < len(gold) else None,
        "weight_mean": float(w.mean()),
        "weight_max": float(w.max()),
        "steps_with_weight": float((w > 1e-6).mean()),
    }


@click.command()
@click.option("--world", "worlds", multiple=True, default=("twc-easy",), show_default=True)
@click.option("--learner", "learners", multiple=True, required=True, help="Preset or NAME=ALGO:REWARD[:K=V].")
@click.option("--episodes", "train_episodes", default=120, show_default=True, help="Training file size.")
@click.option("--steps", default=1000, show_default=True, help="Updates per learner.")
@click.option("--seed", "seeds", multiple=True, type=int, default=(0,), show_default=True)
@click.option("--test-episodes", default=50, show_default=True)
@click.option("--gold-episodes", default=50, show_default=True, help="Test gold paths for the decisions.")
@click.option("--work-dir", default="runs/matrix", show_default=True, type=click.Path(path_type=Path))
@click.option("--out", default="tools/results/bench_learners.json", show_default=True, type=click.Path())
@click.option("--report-only", is_flag=True, help="Write OUT.md from the stored rows; train nothing.")
def main(
    worlds, learners, train_episodes, steps, seeds, test_episodes, gold_episodes, work_dir, out, report_only
) -> None:
    from labeler.dataset import read_trajectories
    from policy.common import set_threads
    from policy.decisions import decision_accuracy
    from policy.episode_policy import episode_policy
    from policy.evaluate import evaluate
    from policy.features import TextEmbedder
    from policy.matrix.data import BUILT_TRCA, WorldData
    from policy.matrix.plan import QUICK, parse_world, with_overrides
    from policy.matrix.store import RowStore
    from policy.rewards import parse_reward
    from policy.torch_policy import TorchPolicy
    from policy.train import train_from_file

    store = RowStore(out)
    if report_only:
        write_report(store, out)
        return
    set_threads()
    embedder = TextEmbedder("all-MiniLM-L6-v2", progress=False)
    plan = [parse_learner(x) for x in learners]
    for label in worlds:
        world = parse_world(label)
        sizes = with_overrides(QUICK, sizes=(train_episodes,))
        data = WorldData(work_dir, world, sizes, lambda m: click.echo(m, err=True))
        dense, _stats = data.training_file(BUILT_TRCA, train_episodes)
        trajs = read_trajectories(dense)
        gold = gold_flags(trajs)
        successes = sum(t.success for t in trajs)
        store.meta.setdefault("labels", {})[f"{world.label}-n{train_episodes}"] = label_quality(trajs)
        test_gold = read_trajectories(data.test_gold(gold_episodes))
        for name, algo, reward, sets in plan:
            for seed in seeds:
                cfg = {
                    "world": world.label,
                    "train_episodes": train_episodes,
                    "learner": name,
                    "algo": algo,
                    "reward": reward,
                    "set": sets,
                    "steps": steps,
                    "seed": seed,
                    "test_episodes": test_episodes,
                }
                if store.get(cfg) is not None:
                    continue
                click.echo(f"{world.label}: {name} seed {seed}", err=True)
                expert = reward == EXPERT_LEARNER
                penalty = 0.0 if reward == "sparse" or expert else sizes.detour_penalty  # as in the matrix
                spec = parse_reward("sparse" if expert else reward, detour_penalty=penalty)
                ckpt = Path(work_dir) / "learners" / f"{world.label}-n{train_episodes}-{name}-s{seed}"
                swaps = int(sets.get("augment", 0))
                run = train_from_file(
                    data.expert(successes) if expert else dense,
                    algo=algo,
                    reward=spec,
                    out=ckpt,
                    overrides={
                        **{k: v for k, v in sets.items() if k != "augment"},
                        "steps": str(steps),
                        "seed": str(seed),
                    },
                    progress=False,
                    embedder=embedder,
                    augment=swaps,
                )
                weights = run.result.extra.get("weights")
                if weights is None and algo == "bc" and not expert and not swaps:
                    weights = bc_weights(trajs, sets.get("filter", "all"), spec)
                policy = TorchPolicy(ckpt, embedder=embedder)
                decisions = decision_accuracy(policy, test_gold)
                env_spec = world_spec(world)
                t0 = time.perf_counter()
                result = evaluate(
                    episode_policy(policy, env_spec, loop_guard=True),
                    env_spec,
                    split="test",
                    episodes=test_episodes,
                    max_steps=world.max_steps,
                    progress=False,
                )
                row = {
                    "success_rate": result.success_rate,
                    "ci95": list(result.ci95),
                    "mean_steps": result.mean_steps,
                    "decisions": decisions.to_dict(),
                    "decision_accuracy": decisions.accuracy,
                    "weights": weight_report(np.asarray(weights), gold) if weights is not None else None,
                    "train_seconds": run.update_seconds,
                    "updates_per_second": steps / max(run.update_seconds, 1e-9),
                    "eval_seconds": time.perf_counter() - t0,
                    "transitions": run.transitions,
                    "load_average": load_average(),
                }
                store.put(cfg, row)
                click.echo(
                    f"  success {result.success_rate:.0%}, decisions {decisions.accuracy:.3f}, "
                    f"{row['updates_per_second']:.2f} upd/s, weights {row['weights']}",
                    err=True,
                )
    store.meta.setdefault("provenance", provenance())
    store.save()
    write_report(store, out)


KEY_VERBS = 4
"""Verbs per world in the report's per-verb column (the most frequent on the gold paths)."""


def report(rows: list[dict[str, Any]], labels: dict[str, Any]) -> str:
    """One table per world, training size and test games: each learner's success (mean over seeds, each
    seed's rate), its decisions overall and on the world's most frequent verbs, and where its training weight
    goes."""
    from policy.evaluate import wilson_interval

    out = []
    for key in sorted({(r["world"], r["train_episodes"], r["test_episodes"]) for r in rows}):
        mine = [r for r in rows if (r["world"], r["train_episodes"], r["test_episodes"]) == key]
        lab = labels.get(f"{key[0]}-n{key[1]}") or {}
        total = lab.get("trca.total") or {}
        out.append(
            f"### {key[0]}, {key[1]} training episodes ({lab.get('successes', '?')} successful), "
            f"{key[2]} test games"
        )
        out.append("")
        if total:
            out.append(
                f"TRCA (built rubric) per-step AUROC: progress {total['auroc_progress']:.3f}, gold path "
                f"{total['auroc_gold']:.3f}; label check: {lab['check']['verdict']} "
                f"({lab['check']['auroc']:.3f})."
            )
            out.append("")
        counts: dict[str, int] = {}
        for r in mine:
            for verb, v in r["decisions"]["verbs"].items():
                counts[verb] = max(counts.get(verb, 0), v["decisions"])
        verbs = sorted(counts, key=lambda v: -counts[v])[:KEY_VERBS]
        head = ["learner", "success (seeds)", "95 % interval", "decisions", *verbs, "gold share of weight"]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        by_learner: dict[str, list[dict[str, Any]]] = {}
        for r in mine:
            by_learner.setdefault(r["learner"], []).append(r)
        ranked = sorted(
            by_learner.items(), key=lambda kv: -statistics.fmean(r["success_rate"] for r in kv[1])
        )
        for name, rs in ranked:
            rs = sorted(rs, key=lambda r: r["seed"])
            n = sum(r["test_episodes"] for r in rs)
            wins = round(sum(r["success_rate"] * r["test_episodes"] for r in rs))
            lo, hi = wilson_interval(wins, n)
            seeds = " / ".join(f"{100 * r['success_rate']:.0f}" for r in rs)
            right = sum(r["decisions"]["decisions"] * r["decision_accuracy"] for r in rs)
            cells = [
                name,
                f"{100 * statistics.fmean(r['success_rate'] for r in rs):.0f} % ({seeds})",
                f"[{100 * lo:.0f}, {100 * hi:.0f}]",
                f"{right / sum(r['decisions']['decisions'] for r in rs):.3f}",
            ]
            for verb in verbs:
                tallies = [r["decisions"]["verbs"].get(verb) for r in rs]
                got = sum(t["right"] for t in tallies if t)
                of = sum(t["decisions"] for t in tallies if t)
                cells.append(f"{got / of:.2f}" if of else "")
            shares = [r["weights"]["gold_step_share_of_weight"] for r in rs if r.get("weights")]
            data = [r["weights"]["gold_step_share_of_data"] for r in rs if r.get("weights")]
            cells.append(f"{statistics.fmean(shares):.2f} (data {data[0]:.2f})" if shares else "")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def write_report(store: Any, out: str) -> None:
    from models.settings import atomic_write

    rows = [r for r in store.rows.values() if "success_rate" in r]
    md = Path(out).with_suffix(".md")
    atomic_write(md, report(rows, store.meta.get("labels", {})) + "\n")


def world_spec(world):
    from policy.envs import parse_env

    return parse_env(world.env, world.params)


if __name__ == "__main__":
    main()
