"""``edgejudge label coren``: add COREN reward channels to a trajectory dataset."""

from __future__ import annotations

import os
from pathlib import Path

import click

from labeler.cluster.options import ClusterError, cluster_config, cluster_options
from labeler.coren.config import CorenConfig
from labeler.coren.dry_run import dry_run as print_dry_run
from labeler.coren.run import Files, run
from models import settings
from models.cli_options import (
    cache_option,
    gpu_layers_option,
    judge_option,
    n_ctx_option,
    progress_option,
    threads_option,
)


def _default_cache() -> str:
    return str(settings.cache_dir() / "labels.sqlite")


@click.command()
@click.argument("in_path", metavar="IN", type=click.Path(dir_okay=False))
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Output .jsonl or .jsonl.gz.")
@judge_option()
@click.option(
    "--prompts",
    "n_prompts",
    default=2,
    show_default=True,
    type=int,
    help="Prompt variants (first N in file order; shipped: four questions after one shared example "
    "preamble, then chain-of-thought). 2 is the default: with the mean vote its channels rank progress best "
    "on the benchmarks' held-out dev sets at half the judge time of 4 (BENCHMARKS.md).",
)
@click.option(
    "--prompt-dir",
    default=None,
    type=click.Path(file_okay=False, exists=True),
    help="Folder of prompt and template TOML files [default: labeler/prompts/coren; the first layout, one "
    "header per variant: labeler/prompts/coren/v1].",
)
@threads_option()
@n_ctx_option()
@click.option(
    "--examples",
    "examples_source",
    default="file",
    show_default=True,
    type=click.Choice(["file", "data"]),
    help="In-context examples: 'file' as written in the templates file; 'data' built from IN per task type "
    "(steps that lasted in successful episodes: Yes; steps that changed nothing: No), no info read.",
)
@click.option(
    "--vote",
    default=CorenConfig.vote,
    show_default=True,
    type=click.Choice(["mean", "majority"]),
    help="How the prompts' ratings make a channel: 'mean' of their calibrated scores on the -2..2 scale, or "
    "'majority' of their quintile votes (the paper's vote; coarser).",
)
@click.option("--limit", default=None, type=click.IntRange(1), help="Label only the first K trajectories.")
@click.option(
    "--orchestrator",
    "ckpt",
    default=None,
    type=click.Path(dir_okay=False),
    help="Apply this trained orchestrator checkpoint instead of training one on IN.",
)
@click.option(
    "--save-orchestrator",
    default=None,
    type=click.Path(dir_okay=False),
    help="Where the trained orchestrator goes (default: OUT with .orchestrator.safetensors).",
)
@click.option(
    "--qa",
    "qa_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Structural QA set (JSON Lines: instruction, observation, answer) instead of building one.",
)
@click.option(
    "--qa-size",
    default=CorenConfig.qa_size,
    show_default=True,
    type=click.IntRange(1, 10000),
    help="Most entries of the QA set built from IN.",
)
@click.option(
    "--obs-tokens",
    default=CorenConfig.obs_tokens,
    show_default=True,
    type=click.IntRange(8, 100000),
    help="Most tokens of the observation (its head) in rating and candidate queries.",
)
@click.option(
    "--result-tokens",
    default=CorenConfig.result_tokens,
    show_default=True,
    type=click.IntRange(0, 1024),
    help="Most tokens of the action's result (transition) shown to the judge.",
)
@click.option(
    "--epochs",
    default=300,
    show_default=True,
    type=click.IntRange(1, 100000),
    help="Orchestrator training steps.",
)
@click.option("--no-dists", is_flag=True, help="Do not keep each prompt's distribution (dist_p*) per step.")
@cache_option()
@click.option(
    "--dry-run", is_flag=True, help="Print the number of queries and a token/time estimate; label nothing."
)
@click.option(
    "--report",
    "report_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Write the run's numbers (queries, cache hits, steps/s, fallbacks) as JSON.",
)
@gpu_layers_option("gpu_layers")
@progress_option()
@cluster_options
def coren(
    in_path: str,
    out: str,
    judge_ref: str,
    n_prompts: int,
    prompt_dir: str | None,
    examples_source: str,
    vote: str,
    threads: int | None,
    n_ctx: int,
    limit: int | None,
    ckpt: str | None,
    save_orchestrator: str | None,
    qa_path: str | None,
    qa_size: int,
    obs_tokens: int,
    result_tokens: int,
    epochs: int,
    no_dists: bool,
    cache: str | None,
    dry_run: bool,
    report_path: str | None,
    gpu_layers: int,
    progress: bool | None,
    ray: str | None,
    judge_actors: int,
    cpus_per_actor: float,
    gpus_per_actor: float,
    actor_restarts: int,
) -> None:
    """Add COREN reward channels to every step of IN: contextual (vote of N judge prompts),
    structural (vote of the prompts that answer the retrieved object question), temporal (vote of the prompts
    whose high-value actions pass a backward check) and their orchestrated ensemble.

    The taken action is rated with its result (the transition); every candidate is rated to find each prompt's
    high-value actions. All judge queries go through the cache: a rerun or a resumed run costs nothing for
    finished work. Ground truth under info is never read.

    With --ray the per-trajectory judge work runs on --judge-actors Ray actors (each holding one judge), with
    the same labels as without; calibration, the QA set and the orchestrator stay on this machine.
    """
    from labeler.coren.prompts import PROMPT_DIR, PromptError, load_prompts, load_templates
    from labeler.coren.structural import QAError, load_qa
    from models.trajectory import DatasetError, read_trajectories

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        folder = Path(prompt_dir) if prompt_dir else PROMPT_DIR
        prompts = load_prompts(n_prompts, folder)
        templates = load_templates(folder)
        trajs = read_trajectories(in_path)
        qa = load_qa(qa_path) if qa_path else None
    except (PromptError, DatasetError, QAError) as e:
        raise click.ClickException(str(e)) from None
    if limit:
        trajs = trajs[:limit]
    if examples_source == "data":
        templates = _data_examples(templates, trajs)
    from labeler.coren.pipeline import CorenInputError, check_candidates

    try:
        check_candidates(trajs, in_path)
    except CorenInputError as e:
        raise click.ClickException(str(e)) from None
    if ckpt and not Path(ckpt).is_file():
        raise click.ClickException(f"--orchestrator {ckpt}: no such file")
    cfg = CorenConfig(
        obs_tokens=obs_tokens,
        result_tokens=result_tokens,
        qa_size=qa_size,
        keep_dists=not no_dists,
        vote=vote,
    )
    try:
        cluster = cluster_config(ray, judge_actors, cpus_per_actor, gpus_per_actor, actor_restarts)
    except ClusterError as e:
        raise click.ClickException(str(e)) from None
    if dry_run:
        print_dry_run(trajs, prompts, templates, cfg, judge_ref, n_ctx, threads)
        return
    files = Files(in_path, out, ckpt, save_orchestrator, report_path)
    judge_args = (judge_ref, n_ctx, threads, cache or _default_cache(), gpu_layers, cluster)
    run(trajs, prompts, templates, cfg, qa, files, judge_args, epochs, progress)


def _data_examples(templates, trajs):
    """The templates with a preamble of examples built from the trajectories (labeler.coren.examples)."""
    import dataclasses
    import hashlib

    from labeler.coren.examples import data_examples, data_preamble, provenance

    ex = data_examples(trajs)
    if not ex:
        raise click.ClickException(
            "--examples data: no step that lasted or changed nothing to show as an example"
        )
    pre = data_preamble(templates.preamble, ex, templates.rating)
    sha = hashlib.sha256((templates.sha256 + pre).encode("utf-8")).hexdigest()
    prov = provenance(ex, pre)
    click.echo(f"examples: {len(ex)} built from the data (sha256 {prov['sha256'][:12]})", err=True)
    return dataclasses.replace(
        templates, preamble=pre, sha256=sha, examples_source="data", examples=tuple(prov["examples"])
    )
