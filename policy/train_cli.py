"""``edgejudge train`` / ``eval`` / ``export``: offline RL on a trajectory file, real rollouts, ONNX bundles.

Heavy imports (torch, onnxruntime, textworld-express) happen inside the commands, so ``--help`` is instant and
``eval`` on a bundle never imports torch.
"""

from __future__ import annotations

import json
import sys

import click


def _fail(msg: str) -> None:
    click.echo(f"error: {msg}", err=True)
    sys.exit(1)


# ------------------------------------------------------------------------------------------------ export


@click.command()
@click.argument("checkpoint", required=False, type=click.Path())
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Bundle directory to write.")
@click.option(
    "--random-init",
    is_flag=True,
    help="Export a randomly initialised scorer instead of a checkpoint (to test a runtime).",
)
@click.option("--seed", default=0, show_default=True, type=int, help="--random-init: initialisation seed.")
@click.option(
    "--encoder",
    default=None,
    help="Encoder to ship (default: the one the checkpoint was trained on; all-MiniLM-L6-v2 for "
    "--random-init): a known name, a sentence-transformers folder, or 'static' / 'static:BASE' for the "
    "static kind distilled from it (docs/encoders.md). It must be the checkpoint's.",
)
@click.option(
    "--skills",
    "skills_file",
    type=click.Path(exists=True, dir_okay=False),
    help="Text file with one skill (fixed action) per line; their embeddings go into skills.npy.",
)
@click.option(
    "--overwrite/--no-overwrite",
    default=True,
    show_default=True,
    help="Replace an existing bundle directory.",
)
@click.option(
    "--encoder-precision",
    type=click.Choice(["fp32", "int8"]),
    default="fp32",
    show_default=True,
    help="Transformer kind only. fp32: parity cosine >= 0.999 with sentence-transformers. int8 (opt-in): "
    "~2.4x faster on a CPU, cosine >= 0.995 (measured 0.9976 min on real TWX texts); in the manifest.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the export report as JSON.")
def export(
    checkpoint, out, random_init, seed, encoder, skills_file, overwrite, encoder_precision, as_json
) -> None:
    """Export CHECKPOINT (a folder written by 'edgejudge train') as an ONNX bundle in OUT.

    Writes policy.onnx, encoder.onnx (mean pooling + normalisation inside), tokenizer.json, optional
    skills.npy and manifest.json (sha256 of every file, shapes, encoder kind, provenance). Parity is checked
    before the bundle is written: policy ONNX vs torch max abs diff <= 1e-4, encoder ONNX vs
    sentence-transformers cosine >= 0.999 (>= 0.995 for the opt-in --encoder-precision int8; the static
    kind against its numpy definition).
    """
    if bool(checkpoint) == bool(random_init):
        raise click.UsageError("give either CHECKPOINT or --random-init (exactly one)")
    skills = None
    if skills_file:
        with open(skills_file, encoding="utf-8") as f:
            skills = [line.strip() for line in f if line.strip()]
        if not skills:
            raise click.UsageError(f"{skills_file}: no skills (one per line)")

    from models.bundle import BundleError
    from models.encoder import EncoderError
    from policy.common import CheckpointError
    from policy.export import ExportError, export_bundle, export_random_bundle

    try:
        if random_init:
            report = export_random_bundle(
                out,
                seed=seed,
                encoder=encoder,
                skills=skills,
                overwrite=overwrite,
                encoder_precision=encoder_precision,
            )
        else:
            report = export_bundle(
                checkpoint,
                out,
                encoder=encoder,
                skills=skills,
                overwrite=overwrite,
                encoder_precision=encoder_precision,
            )
    except (CheckpointError, EncoderError, ExportError, BundleError, FileExistsError) as e:
        _fail(str(e))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(
            f"wrote {out}: policy parity max|diff| {report.policy_max_abs_diff_random:.1e} (random), "
            f"{report.policy_max_abs_diff_real:.1e} (real); encoder min cosine "
            f"{report.encoder_min_cosine:.6f}{' (cached encoder)' if report.encoder_cached else ''}"
        )


# ------------------------------------------------------------------------------------------------ train


@click.command()
@click.argument("data", type=click.Path(dir_okay=False))
@click.option(
    "--algo",
    required=True,
    type=click.Choice(["iql", "cql", "bc", "awr"]),
    help="iql | cql (discrete) | bc (--set filter=success: successful episodes only) | awr "
    "(weights from TRCA's stored advantages, labels trca.advantage).",
)
@click.option(
    "--reward",
    default="sparse",
    show_default=True,
    help="sparse (success flag only) | coren (coren.ensemble) | trca (trca.total) | METHOD.CHANNEL.",
)
@click.option(
    "--terminal-bonus",
    default=1.0,
    show_default=True,
    type=float,
    help="Dense rewards: reward added on the last step of a successful episode.",
)
@click.option(
    "--detour-penalty",
    default=0.0,
    show_default=True,
    type=click.FloatRange(min=0.0),
    help="Reward of a step whose effect the episode undid later (it lies on a loop of world states, "
    "policy.paths), instead of its label: -PENALTY. 0 keeps the labels as they are.",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Checkpoint directory to write.")
@click.option("--steps", type=int, default=None, help="Gradient updates (default: the algorithm's).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed (initialisation and batches).")
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override an algorithm config field, e.g. --set beta=3.0 --set expectile=0.7 (repeatable).",
)
@click.option(
    "--encoder",
    default="all-MiniLM-L6-v2",
    show_default=True,
    help="Text encoder whose features the policy learns on: a known name, a sentence-transformers folder, "
    "or 'static' / 'static:BASE' (token vectors distilled from BASE, built at first use; ~1000x faster "
    "to serve: docs/encoders.md).",
)
@click.option(
    "--skip-invalid", is_flag=True, help="Skip (and count) invalid dataset lines instead of failing."
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bars on stderr (default: when stderr is a terminal).",
)
def train(
    data,
    algo,
    reward,
    terminal_bonus,
    detour_penalty,
    out,
    steps,
    seed,
    overrides,
    encoder,
    skip_invalid,
    as_json,
    progress,
) -> None:
    """Train a candidate-action policy on DATA (.jsonl / .jsonl.gz) with offline RL and write a checkpoint.

    Texts are embedded once (on-disk cache keyed by text hash). The checkpoint folder holds policy.pt
    (state_dict), checkpoint.json (config, reward, provenance), curves.csv and curves.png.
    """
    from labeler.dataset import DatasetError
    from models.encoder import EncoderError
    from policy.rewards import RewardError, parse_reward
    from policy.train import ConfigError, make_config, parse_overrides, train_from_file

    try:
        spec = parse_reward(reward, terminal_bonus=terminal_bonus, detour_penalty=detour_penalty)
        ov = parse_overrides(overrides)
        if steps is not None:
            ov["steps"] = str(steps)
        ov["seed"] = str(seed)
        make_config(algo, ov)
    except (ConfigError, RewardError) as e:
        raise click.UsageError(str(e)) from None
    try:
        run = train_from_file(
            data,
            algo=algo,
            reward=spec,
            out=out,
            overrides=ov,
            encoder=encoder,
            skip_invalid=skip_invalid,
            progress=progress,
        )
    except (DatasetError, EncoderError, FileExistsError, RewardError, ValueError) as e:
        _fail(str(e))
    first, last = run.result.curves[0], run.result.curves[-1]
    key = run.result.loss_key
    summary = {
        "checkpoint": str(run.checkpoint),
        "algo": algo,
        "reward": spec.name,
        "transitions": run.transitions,
        "episodes": run.episodes,
        "seconds": round(run.seconds, 2),
        "embed_seconds": round(run.embed_seconds, 2),
        "texts_embedded": run.texts_embedded,
        "loss_key": key,
        "loss_first": first.get(key),
        "loss_last": last.get(key),
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(
            f"wrote {out}: {algo} on {run.transitions} transitions ({run.episodes} episodes), reward "
            f"{spec.name}; {key} {first.get(key):.4g} -> {last.get(key):.4g}; {run.seconds:.1f} s "
            f"({run.texts_embedded} texts embedded)"
        )


# ------------------------------------------------------------------------------------------------ eval


@click.command("eval")
@click.argument("policy_path", required=False, type=click.Path())
@click.option(
    "--agent",
    "agent_kind",
    default=None,
    type=click.Choice(["policy", "llm", "random"]),
    help="policy: POLICY_PATH (a checkpoint folder or a bundle folder); llm: the judge LLM picks the "
    "most likely candidate (baseline); random: uniform over admissible actions.",
)
@click.option(
    "--judge", default="gemma3-270m", show_default=True, help="--agent llm: the judge model reference."
)
@click.option(
    "--env",
    "env_name",
    default=None,
    help="Environment ADAPTER:TASK (docs/environments.md); default: the one the policy was trained in "
    "(twx:twc when it does not say).",
)
@click.option(
    "--params", default=None, help="The task's parameters, e.g. 'level=medium' (default: the smallest)."
)
@click.option(
    "--split",
    default="test",
    show_default=True,
    help="Split (train, dev, test); TWC's test fold has objects unseen in training.",
)
@click.option(
    "--episodes", default=20, show_default=True, type=int, help="Episodes (first N seeds of the split)."
)
@click.option("--max-steps", default=40, show_default=True, type=int, help="Step limit per episode.")
@click.option(
    "--seed", default=0, show_default=True, type=int, help="Seed of --agent random and of --sample."
)
@click.option(
    "--sample",
    "temperature",
    type=float,
    default=None,
    help="Sample from softmax(scores / T) instead of the argmax (an evaluation option; the bundle and "
    "the daemon return the argmax).",
)
@click.option(
    "--loop-guard",
    is_flag=True,
    help="Per-episode memory (edge.loop_guard): an action that led back to a world state already visited is "
    "not taken again from where it was taken, nor any action twice in the same observation; the best-scored "
    "allowed one instead. What a client with per-episode memory runs (tools/drive_edge.py does).",
)
@click.option(
    "--strategy",
    default=None,
    help="An opt-in task strategy of the environment's adapter, composed over the policy instead of the "
    "plain loop guard (it keeps the guard); e.g. placement-search on twx:twc (put-away tasks: the policy "
    "ranks each object's places by hypothetical puts). Not a headline client: see docs/environments.md.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (with per-episode records).")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar on stderr (default: when stderr is a terminal).",
)
def eval_cmd(
    policy_path,
    temperature,
    loop_guard,
    strategy,
    agent_kind,
    judge,
    env_name,
    params,
    split,
    episodes,
    max_steps,
    seed,
    as_json,
    progress,
) -> None:
    """Evaluate a policy by real rollouts: success rate with a 95 % Wilson interval, mean steps,
    invalid-action rate and per-action latency.

    POLICY_PATH is a checkpoint (from 'edgejudge train') or a bundle (from 'edgejudge export'). A bundle runs
    through onnxruntime alone, without torch, exactly as the robot runs it. The environment defaults to the
    one the policy was trained in; a policy trained on another state format is refused.
    """
    from policy.envs import EnvError, adapter_class, episode_policy, parse_env, strategy_class
    from policy.envs.recorded import check_world, default_env, recorded_world

    kind = agent_kind or "policy"
    if kind == "policy" and not policy_path:
        raise click.UsageError("give a checkpoint or bundle folder, or --agent llm / --agent random")
    if kind != "policy" and policy_path:
        raise click.UsageError(f"--agent {kind} takes no POLICY_PATH")
    if episodes < 1:
        raise click.UsageError("--episodes must be >= 1")
    if temperature is not None and (kind == "random" or not temperature > 0):
        raise click.UsageError("--sample takes a temperature > 0 and a policy or --agent llm")
    if loop_guard and (kind == "random" or temperature is not None):
        raise click.UsageError("--loop-guard needs a policy or --agent llm, without --sample")
    if strategy and temperature is not None:
        raise click.UsageError("--strategy ranks by the scores: it does not go with --sample")
    world: dict = {}
    if policy_path:
        try:
            world = recorded_world(policy_path)
        except Exception as e:  # noqa: BLE001 - a bundle or checkpoint that cannot be read: one clear line
            _fail(f"{policy_path}: {e}")
    if env_name is None:
        env_name, recorded_params = default_env(world)
        params = recorded_params if params is None else params
    try:
        spec = parse_env(env_name, params)
        if strategy:
            strategy_class(spec, strategy)
    except EnvError as e:
        raise click.UsageError(str(e)) from None
    if not adapter_class(spec.adapter).needs_simulator:
        _fail(f"{spec.name} replays logged episodes: evaluating a policy needs a simulator of the world")
    if policy_path:
        try:
            check_world(world, spec, what=str(policy_path))
        except EnvError as e:
            _fail(str(e))

    agent = None
    try:
        if kind == "random":
            from policy.evaluate import RandomAgent

            agent = RandomAgent(seed)
        elif kind == "llm":
            from policy.llm_agent import open_llm_agent

            agent = open_llm_agent(judge)
        else:
            from policy.evaluate import open_policy

            agent = open_policy(policy_path)
    except Exception as e:  # noqa: BLE001 - one clear line for any load failure (bundle, checkpoint, judge)
        if isinstance(e, SystemExit):
            raise
        _fail(str(e))

    from policy.evaluate import SampledAgent, evaluate

    if temperature is not None:
        agent = SampledAgent(agent, temperature, seed)
    agent = episode_policy(agent, spec, loop_guard=loop_guard, strategy=strategy)
    try:
        result = evaluate(agent, spec, split=split, episodes=episodes, max_steps=max_steps, progress=progress)
    finally:
        agent.close()
    if as_json:
        click.echo(json.dumps(result.to_dict(episodes=True), indent=2))
    else:
        click.echo(result.summary())
