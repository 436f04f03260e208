"""Policy benchmark: success per training row on real rollouts, and per-action latency.

For each row (algorithm x reward source) it trains on the same success-scarce training file (every failed
episode of --train and its first successful ones, at most --max-success-rate: the largest cut of
``edgejudge data subset``), evaluates by real
rollouts on the test split (same seeds for every row), and reports success with a Wilson 95 % interval, mean
steps and invalid-action rate. It then exports the best row as a bundle and measures the exported policy's
per-action latency (encoder + scorer, onnxruntime, 1 thread) beside the LLM-as-agent's, on the same states.

Rows whose labels are missing from the data are reported as "skipped: no labels" rather than silently dropped.

    python -m tools.bench.bench_policy --train data/train.jsonl.gz --labeled data/train.trca.jsonl.gz \\
        --episodes 20 --llm-episodes 3 --out-dir bench-policy

Writes ``OUT_DIR/results.json`` and ``OUT_DIR/results.md``; checkpoints and the bundle stay in OUT_DIR (rerun
with ``--reuse`` to evaluate existing checkpoints without retraining).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import click

from models.cli_options import env_option, judge_option, split_option
from tools.bench.benchlib import write_results

DEFAULT_ROWS = (
    "random,bc-all,bc-success,bc-paths,iql-sparse,cql-sparse,iql-trca,iql-trca-detour,iql-trcab,awr-trca,"
    "iql-coren,llm"
)
ROW_SPECS = {
    # name: (algo, reward, extra config, the label channel it needs or None)
    "bc-all": ("bc", "sparse", {"filter": "all"}, None),
    "bc-success": ("bc", "sparse", {"filter": "success"}, None),
    "iql-sparse": ("iql", "sparse", {}, None),
    "cql-sparse": ("cql", "sparse", {}, None),
    "iql-trca": ("iql", "trca", {}, ("trca", "total")),
    "iql-trcab": ("iql", "trca.breakthrough", {}, ("trca", "breakthrough")),
    "iql-trca-detour": ("iql", "trca", {}, ("trca", "total")),
    "bc-paths": ("bc", "sparse", {"filter": "paths"}, None),
    "awr-trca": ("awr", "sparse", {}, ("trca", "advantage")),
    "iql-coren": ("iql", "coren", {}, ("coren", "ensemble")),
    "cql-trca": ("cql", "trca", {}, ("trca", "total")),
}


DETOUR_PENALTY = {"iql-trca-detour": 0.05}
"""Rows trained with ``--detour-penalty`` (policy.rewards)."""


def has_channel(trajs, method: str, channel: str) -> bool:
    return all(method in s.labels and channel in s.labels[method] for t in trajs for s in t.steps)


def fmt_ci(r) -> str:
    lo, hi = r["ci95"]
    return f"{r['success_rate']:.0%} [{lo:.0%}, {hi:.0%}]"


@click.command()
@click.option(
    "--train",
    "train_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Training trajectories (collected with 'edgejudge collect').",
)
@click.option(
    "--labeled",
    "labeled_path",
    type=click.Path(exists=True, dir_okay=False),
    help="The same trajectories with labels (TRCA and/or COREN) for the dense rows.",
)
@env_option()
@click.option("--params", default=None, help="Game parameters (default: the game's small configuration).")
@split_option()
@click.option("--episodes", default=20, show_default=True, type=int, help="Evaluation episodes per row.")
@click.option(
    "--llm-episodes",
    default=3,
    show_default=True,
    type=int,
    help="Episodes for the LLM-as-agent row (about 1 s per candidate set on one core).",
)
@click.option("--max-steps", default=40, show_default=True, type=int)
@click.option("--steps", default=1500, show_default=True, type=int, help="Gradient updates per trained row.")
@click.option(
    "--max-success-rate",
    default=0.3,
    show_default=True,
    type=float,
    help="Drop successful episodes until at most this share of training episodes succeeds.",
)
@click.option("--rows", default=DEFAULT_ROWS, show_default=True, help="Comma-separated rows.")
@click.option(
    "--latency-samples",
    default=50,
    show_default=True,
    type=int,
    help="States for the per-action latency comparison.",
)
@judge_option("judge")
@click.option("--out-dir", required=True, type=click.Path(file_okay=False))
@click.option("--reuse", is_flag=True, help="Reuse checkpoints already in OUT_DIR instead of retraining.")
@click.option(
    "--loop-guard/--no-loop-guard",
    default=True,
    show_default=True,
    help="Also evaluate every trained row (and the LLM agent) with the client-side loop guard.",
)
@click.option(
    "--placement-search/--no-placement-search",
    default=False,
    show_default=True,
    help="Also evaluate every row (random and the LLM agent too) with TextWorld's opt-in placement-search "
    "strategy (policy.twx_placement; random ranks places at random). Labelled rows, never headline.",
)
@click.option(
    "--encoder",
    default="all-MiniLM-L6-v2",
    show_default=True,
    help="Text encoder every row trains on and its bundle ships ('static' for the static kind).",
)
@click.option("--seed", "train_seed", default=0, show_default=True, type=int, help="Training seed.")
@click.option(
    "--evaluate",
    "eval_what",
    type=click.Choice(["checkpoint", "bundle"]),
    default="checkpoint",
    show_default=True,
    help="bundle: export every trained row and evaluate the bundle (what ships) instead of the checkpoint.",
)
@click.option(
    "--argmax/--no-argmax",
    default=True,
    show_default=True,
    help="Also evaluate every row without a client wrapper (the policy's argmax).",
)
def main(
    train_path,
    labeled_path,
    env_name,
    params,
    split,
    episodes,
    llm_episodes,
    max_steps,
    steps,
    max_success_rate,
    rows,
    latency_samples,
    judge,
    out_dir,
    reuse,
    loop_guard,
    placement_search,
    encoder,
    train_seed,
    eval_what,
    argmax,
) -> None:
    """Train and evaluate every row; write the results table (JSON + Markdown)."""
    os.environ.setdefault("EDGEJUDGE_THREADS", "1")
    from edge.policies import Guarded
    from labeler.dataset import read_trajectories, write_trajectories
    from labeler.subset import most_episodes, scarce_subset
    from policy.envs import adapter_class, parse_env
    from policy.evaluate import RandomPolicy, evaluate
    from policy.features import TextEmbedder
    from policy.rewards import parse_reward
    from policy.torch_policy import TorchPolicy
    from policy.train import train_from_file
    from policy.twx_placement import PlacementSearchPolicy

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spec = parse_env(env_name, params)
    row_names = [r.strip() for r in rows.split(",") if r.strip()]
    unknown = [r for r in row_names if r not in ROW_SPECS and r not in ("random", "llm")]
    if unknown:
        raise click.UsageError(f"unknown rows: {', '.join(unknown)}")

    # One success-scarce subset, identical for the plain and the labeled file (matched by id).
    plain = read_trajectories(train_path)
    subset = scarce_subset(plain, most_episodes(plain, max_success_rate), max_success_rate)
    ids = {t.id for t in subset}
    plain_path = out / "train.scarce.jsonl.gz"
    write_trajectories(plain_path, subset)
    labeled = None
    if labeled_path:
        labeled = [t for t in read_trajectories(labeled_path) if t.id in ids]
        if len(labeled) != len(subset):
            raise click.UsageError(f"{labeled_path} does not hold the same trajectories as {train_path}")
        labeled_out = out / "train.scarce.labeled.jsonl.gz"
        write_trajectories(labeled_out, labeled)
    data_info = {
        "source": str(train_path),
        "labeled_source": labeled_path,
        "episodes": len(subset),
        "success_rate": sum(t.success for t in subset) / len(subset),
        "steps": sum(len(t.steps) for t in subset),
        "dropped_successes": len(plain) - len(subset),
    }
    click.echo(f"training data: {data_info}", err=True)

    key = adapter_class(spec.adapter).world_key
    clients = [("guard", lambda a: Guarded(a, key), "loop guard")] if loop_guard else []
    if placement_search:
        clients.append(("search", lambda a: PlacementSearchPolicy(a, key), "placement-search strategy"))

    def with_clients(agent, key: str, label: str, n: int, extra: dict, only=("guard", "search")) -> None:
        """Evaluate ``agent`` inside each client wrapper asked for; rows ``KEY+guard``, ``KEY+search``."""
        for suffix, wrap, text in clients:
            if suffix in only:
                r = evaluate(wrap(agent), spec, split=split, episodes=n, max_steps=max_steps, progress=True)
                results[f"{key}+{suffix}"] = {"row": f"{label} + {text}", **extra, **r.to_dict()}
                click.echo(r.summary(), err=True)

    embedder = TextEmbedder(encoder, progress=True)
    results: dict[str, dict] = {}
    trained: dict[str, Path] = {}
    t_start = time.perf_counter()
    for name in row_names:
        if name in ("random", "llm"):
            continue
        algo, reward, extra, label_need = ROW_SPECS[name]
        data = plain_path
        if label_need:
            if labeled is None or not has_channel(labeled, *label_need):
                results[name] = {"row": name, "skipped": f"no {'.'.join(label_need)} labels in the data"}
                click.echo(f"{name}: skipped (no {'.'.join(label_need)} labels)", err=True)
                continue
            data = out / "train.scarce.labeled.jsonl.gz"
        ckpt = out / f"ckpt-{name}"
        t0 = time.perf_counter()
        if not (reuse and (ckpt / "checkpoint.json").is_file()):
            train_from_file(
                data,
                algo=algo,
                reward=parse_reward(reward, detour_penalty=DETOUR_PENALTY.get(name, 0.0)),
                out=ckpt,
                overrides={"steps": steps, "seed": train_seed, **extra},
                embedder=embedder,
                progress=True,
            )
        train_s = time.perf_counter() - t0
        trained[name] = ckpt
        base = {"row": name, "algo": algo, "reward": reward, "train_seconds": round(train_s, 1)}
        if eval_what == "bundle":
            from edge.bundle_policy import BundlePolicy
            from policy.export import export_bundle

            export_bundle(ckpt, out / f"bundle-{name}")
            agent = BundlePolicy(out / f"bundle-{name}")
            base["evaluated"] = "bundle (onnxruntime, the daemon's runtime)"
        else:
            agent = TorchPolicy(ckpt, embedder=embedder)
        with agent:
            agent.name = name
            if argmax:
                r = evaluate(agent, spec, split=split, episodes=episodes, max_steps=max_steps, progress=True)
                results[name] = {**base, **r.to_dict()}
                click.echo(r.summary(), err=True)
            with_clients(agent, name, name, episodes, {k: base[k] for k in ("algo", "reward")})

    if "random" in row_names:
        r = evaluate(RandomPolicy(0), spec, split=split, episodes=episodes, max_steps=max_steps)
        results["random"] = {"row": "random", **r.to_dict()}
        click.echo(r.summary(), err=True)
        with_clients(RandomPolicy(0), "random", "random", episodes, {}, only=("search",))

    # Export the best trained row and measure latency on real test states.
    latency: dict = {}
    best = max(
        trained,
        key=lambda n: max(
            results.get(k, {}).get("success_rate", 0) for k in (n, f"{n}+guard", f"{n}+search")
        ),
        default=None,
    )
    states = _sample_states(spec, split, latency_samples, max_steps)
    if best is not None:
        from edge.bundle_policy import BundlePolicy
        from policy.export import export_bundle

        bundle = out / "bundle"
        report = export_bundle(trained[best], bundle)
        if eval_what == "checkpoint":
            with BundlePolicy(bundle) as bp:
                r = evaluate(bp, spec, split=split, episodes=episodes, max_steps=max_steps, progress=True)
                results[f"{best} (bundle)"] = {"row": f"{best} (bundle, onnxruntime)", **r.to_dict()}
                with_clients(bp, f"{best} (bundle)", f"{best} (bundle, onnxruntime)", episodes, {})
        latency["bundle"] = {
            "row": best,
            "parity": report.to_dict(),
            **_latency(lambda: BundlePolicy(bundle, cache_size=0), states),
            "cached": _latency(lambda: BundlePolicy(bundle), states),
            "scorer_only": _scorer_latency(bundle, states),
        }
    if "llm" in row_names:
        from policy.llm_policy import open_llm_policy

        agent = open_llm_policy(judge)
        try:
            r = evaluate(agent, spec, split=split, episodes=llm_episodes, max_steps=max_steps, progress=True)
            results["llm"] = {"row": f"llm-agent ({judge})", **r.to_dict()}
            click.echo(r.summary(), err=True)
            with_clients(agent, "llm", f"llm-agent ({judge})", llm_episodes, {})
            latency["llm"] = _latency(lambda: agent, states[: max(5, latency_samples // 5)], close=False)
        finally:
            agent.close()
    if "bundle" in latency and "llm" in latency:
        latency["llm_over_bundle"] = latency["llm"]["ms_mean"] / latency["bundle"]["ms_mean"]
        latency["llm_over_bundle_cached"] = latency["llm"]["ms_mean"] / latency["bundle"]["cached"]["ms_mean"]
        latency["llm_over_scorer"] = latency["llm"]["ms_mean"] / latency["bundle"]["scorer_only"]["ms_mean"]

    payload = {
        "env": spec.name,
        "params": spec.params,
        "split": split,
        "episodes": episodes,
        "llm_episodes": llm_episodes,
        "steps": steps,
        "encoder": embedder.encoder.name,
        "encoder_sha256": embedder.encoder.sha256,
        "train_seed": train_seed,
        "evaluated": eval_what,
        "data": data_info,
        "results": results,
        "latency": latency,
        "seconds": round(time.perf_counter() - t_start, 1),
        "command": " ".join(sys.argv),
    }
    payload = write_results(out / "results.json", payload)
    md = _markdown(payload)
    (out / "results.md").write_text(md)
    click.echo(md)


def _sample_states(spec, split, n, max_steps):
    """Real (instruction, observation, candidates) from random rollouts on the split's seeds."""
    import random as _random

    from policy.envs import open_env

    rng = _random.Random(0)
    out = []
    with open_env(spec, step_limit=max_steps) as env:
        for seed in env.episodes(split):
            st = env.reset(seed, split)
            for _ in range(4):
                if st.done or len(out) >= n:
                    break
                out.append((st.instruction, st.observation, list(st.candidates)))
                st = env.step(rng.choice(st.candidates))
            if len(out) >= n:
                break
    return out


def _latency(make, states, close=True):
    agent = make()
    try:
        agent.act(*states[0])  # warm-up (session init, first allocation)
        ms = []
        for s in states:
            t0 = time.perf_counter()
            agent.act(*s)
            ms.append((time.perf_counter() - t0) * 1000)
    finally:
        if close:
            agent.close()
    ms.sort()
    return {
        "ms_mean": statistics.fmean(ms),
        "ms_p50": ms[len(ms) // 2],
        "ms_p95": ms[int(0.95 * (len(ms) - 1))],
        "samples": len(ms),
        "mean_candidates": statistics.fmean(len(s[2]) for s in states),
    }


def _scorer_latency(bundle, states):
    """The scorer graph alone on pre-computed features (the daemon's embedding op)."""
    from edge.bundle_policy import BundlePolicy

    with BundlePolicy(bundle) as bp:
        embs = [(bp.embed([i])[0], bp.embed([o])[0], bp.candidate_features(c, o)) for i, o, c in states]
        bp.scores_from_embeddings(*embs[0])
        ms = []
        for e in embs:
            t0 = time.perf_counter()
            bp.scores_from_embeddings(*e)
            ms.append((time.perf_counter() - t0) * 1000)
    ms.sort()
    return {"ms_mean": statistics.fmean(ms), "ms_p50": ms[len(ms) // 2], "samples": len(ms)}


def _markdown(p) -> str:
    lines = [
        f"Env {p['env']} ({p['params']}), split {p['split']}; "
        f"training data: {p['data']['episodes']} episodes, "
        f"{p['data']['success_rate']:.0%} successful; {p['steps']} updates per row.",
        "",
        "| row | success [95% CI] | episodes | mean steps | invalid actions | ms/action (p50) |",
        "|---|---|---|---|---|---|",
    ]
    for r in p["results"].values():
        if "skipped" in r:
            lines.append(f"| {r['row']} | skipped: {r['skipped']} | | | | |")
            continue
        lines.append(
            f"| {r['row']} | {fmt_ci(r)} | {r['episodes']} | {r['mean_steps']:.1f} | "
            f"{r['invalid_action_rate']:.1%} | {r['latency_ms_p50']:.2f} |"
        )
    lat = p["latency"]
    if lat:
        lines += ["", "Per-action latency on the same real test states (1 thread):", ""]
        if "bundle" in lat:
            b = lat["bundle"]
            lines.append(
                f"- exported policy (encoder + scorer, onnxruntime), every text encoded: "
                f"{b['ms_mean']:.1f} ms "
                f"mean (p50 {b['ms_p50']:.1f}, p95 {b['ms_p95']:.1f}), {b['mean_candidates']:.1f} candidates"
            )
            c = b["cached"]
            lines.append(
                f"- exported policy with the text-embedding LRU (only the new state text encoded): "
                f"{c['ms_mean']:.1f} ms mean (p50 {c['ms_p50']:.1f})"
            )
            so = b["scorer_only"]
            lines.append(
                f"- scorer graph alone on pre-computed embeddings (the daemon's embedding op): "
                f"{so['ms_mean']:.3f} ms mean (p50 {so['ms_p50']:.3f})"
            )
        if "llm" in lat:
            lines.append(
                f"- LLM-as-agent: {lat['llm']['ms_mean']:.0f} ms mean (p50 {lat['llm']['ms_p50']:.0f})"
            )
        if "llm_over_bundle" in lat:
            lines.append(
                f"- ratio LLM / exported policy: {lat['llm_over_bundle']:.0f}x (no cache), "
                f"{lat['llm_over_bundle_cached']:.0f}x (with the LRU), {lat['llm_over_scorer']:.0f}x "
                "(scorer alone on embeddings)"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
