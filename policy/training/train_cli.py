"""``edgejudge train``: offline RL on a trajectory file, written as a checkpoint folder.

torch and the sentence encoder are imported inside the command, so ``--help`` is instant.
"""

from __future__ import annotations

import json

import click

from models.channel_choice import AUTO
from models.cli_options import fail, progress_option
from policy.training.learners.registry import LEARNERS, names


@click.command()
@click.argument("data", nargs=-1, required=True, type=click.Path())
@click.option(
    "--algo",
    required=True,
    type=click.Choice(names()),
    help=" | ".join(f"{e.name} ({e.help})" for e in LEARNERS) + ".",
)
@click.option(
    "--reward",
    default="sparse",
    show_default=True,
    help="sparse (success flag only) | coren (coren.ensemble) | trca (trca.total) | potential "
    "(potential.delta) | METHOD.CHANNEL | auto (the channel an audit supports, recorded by 'edgejudge label "
    "quality DATA --audit MARKS').",
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
    "policy.training.loop_erasure), instead of its label: -PENALTY. 0 keeps the labels as they are.",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Checkpoint directory to write.")
@click.option("--steps", type=int, default=None, help="Gradient updates (default: the algorithm's).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed (initialisation and batches).")
@click.option(
    "--init",
    default="",
    type=click.Path(file_okay=False),
    help="Start from this checkpoint's policy (a warm start, e.g. the last round's when the log has grown); "
    "its scorer must be the one this training builds (same encoder and settings).",
)
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
    "--augment",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    metavar="N",
    help="Also train on N copies of each episode with the names of interchangeable things (read from the "
    "log: an ingredient that is cooked, never a place or a fixture) swapped consistently in every text "
    "(policy/training/augment.py). The log decides what may be renamed; a log where names decide places "
    "renames nothing.",
)
@click.option(
    "--skip-invalid", is_flag=True, help="Skip (and count) invalid dataset lines instead of failing."
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary.")
@progress_option()
def train(
    data,
    algo,
    reward,
    terminal_bonus,
    detour_penalty,
    out,
    steps,
    seed,
    init,
    overrides,
    encoder,
    augment,
    skip_invalid,
    as_json,
    progress,
) -> None:
    """Train a candidate-action policy on DATA with offline RL and write a checkpoint.

    DATA is one or more logs (.jsonl / .jsonl.gz) or folders of them (their subfolders too), read as one
    set of episodes: a robot fleet's logs, round after round. An episode id in two files is an error.

    Texts are embedded once (on-disk cache keyed by text hash). The checkpoint folder holds policy.pt
    (state_dict), checkpoint.json (config, reward, provenance), curves.csv and curves.png.
    """
    from models.encoder import EncoderError
    from models.trajectory import DatasetError
    from policy.training.learners.registry import ConfigError
    from policy.training.rewards import RewardError, parse_reward
    from policy.training.train import make_config, parse_overrides, train_from_file

    if reward == AUTO:
        reward = _chosen_channel(data)
    try:
        spec = parse_reward(reward, terminal_bonus=terminal_bonus, detour_penalty=detour_penalty)
        ov = parse_overrides(overrides)
        if steps is not None:
            ov["steps"] = str(steps)
        ov["seed"] = str(seed)
        if init:
            ov["init"] = str(init)
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
            augment=augment,
        )
    except (DatasetError, EncoderError, FileExistsError, RewardError, ValueError) as e:
        fail(str(e))
    first, last = run.result.curves[0], run.result.curves[-1]
    key = run.result.loss_key
    summary = {
        "checkpoint": str(run.checkpoint),
        "algo": algo,
        "reward": spec.name,
        "transitions": run.transitions,
        "episodes": run.episodes,
        "selection": run.selection,
        "dataset_episodes": run.dataset_episodes,
        "dataset_steps": run.dataset_steps,
        "seconds": round(run.seconds, 2),
        "embed_seconds": round(run.embed_seconds, 2),
        "update_seconds": round(run.update_seconds, 2),
        "updates_per_second": round(run.result.config["steps"] / max(run.update_seconds, 1e-9), 2),
        "texts_embedded": run.texts_embedded,
        "loss_key": key,
        "loss_first": first.get(key),
        "loss_last": last.get(key),
    }
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(
            f"wrote {out}: {algo} on {run.trained_on()}, reward "
            f"{spec.name}; {key} {first.get(key):.4g} -> {last.get(key):.4g}; {run.seconds:.1f} s "
            f"({run.texts_embedded} texts embedded)"
        )


def _chosen_channel(data: tuple[str, ...]) -> str:
    """``--reward auto``: the channel recorded for the one log ``data`` by its audited check
    (:func:`models.channel_choice.chosen_channel`, as the matrix resolves it), said in one line."""
    from models.channel_choice import ChoiceError, chosen_channel

    if len(data) != 1:
        raise click.UsageError(
            "--reward auto reads the choice recorded for one labeled log: give one DATA file"
        )
    try:
        channel, evidence = chosen_channel(data[0])
    except ChoiceError as e:
        raise click.UsageError(f"--reward auto: {e}; or name --reward") from None
    click.echo(f"reward auto: {channel} ({evidence})", err=True)
    return channel
