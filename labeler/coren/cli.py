"""``edgejudge label coren``: add COREN reward channels to a trajectory dataset."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import click

from labeler.cluster.options import ClusterError, cluster_config, cluster_options
from labeler.coren.dry_run import dry_run as print_dry_run
from labeler.coren.judge_session import coren_judge
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


def _default_ckpt(out: str) -> str:
    name = Path(out).name
    for suffix in (".jsonl.gz", ".jsonl", ".gz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return str(Path(out).with_name(name + ".orchestrator.safetensors"))


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
    default="mean",
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
    default=48,
    show_default=True,
    type=click.IntRange(1, 10000),
    help="Most entries of the QA set built from IN.",
)
@click.option(
    "--obs-tokens",
    default=48,
    show_default=True,
    type=click.IntRange(8, 100000),
    help="Most tokens of the observation (its head) in rating and candidate queries.",
)
@click.option(
    "--result-tokens",
    default=40,
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
    from labeler.dataset import DatasetError, read_trajectories

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
    from labeler.coren.pipeline import CorenConfig, CorenInputError, check_candidates

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
    _run(
        trajs,
        prompts,
        templates,
        cfg,
        qa,
        in_path,
        out,
        judge_ref,
        n_ctx,
        threads,
        ckpt,
        save_orchestrator,
        epochs,
        cache or _default_cache(),
        report_path,
        progress,
        gpu_layers,
        cluster,
    )


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


def _run(
    trajs,
    prompts,
    templates,
    cfg,
    qa,
    in_path,
    out,
    judge_ref,
    n_ctx,
    threads,
    ckpt,
    save_ckpt,
    epochs,
    cache,
    report_path,
    progress,
    gpu_layers=0,
    cluster=None,
) -> None:
    import numpy as np

    from labeler.coren import orchestrator as orch
    from labeler.coren.pipeline import (
        CorenInputError,
        CorenLabeler,
        split_by_trajectory,
        step_features,
        write_labels,
    )
    from labeler.coren.structural import qa_hash
    from labeler.dataset import TrajectoryWriter
    from labeler.progress import progress as progress_bar
    from models.encoder import EncoderError, load_sentence_encoder, resolve_encoder

    t0 = time.perf_counter()
    try:
        enc_ref = resolve_encoder()
        encoder = load_sentence_encoder(enc_ref)
    except EncoderError as e:
        raise click.ClickException(str(e)) from None
    model = None
    if ckpt:
        try:
            model, _, _ = orch.load(ckpt, input_dim=3 * enc_ref.embedding_dim)
        except orch.OrchestratorError as e:
            raise click.ClickException(str(e)) from None

    with coren_judge(judge_ref, n_ctx, threads, cache, gpu_layers, cluster, prompts, templates, cfg) as judge:
        pool = getattr(judge, "pool", None)
        steps_total = sum(len(t.steps) for t in trajs)
        per_step = sum(2 + p.cot for p in prompts)  # candidate query + rating (+ reasoning) per prompt
        total = steps_total * per_step + len(prompts) * len(trajs)  # + backward checks (QA answers extra)
        with progress_bar(total, enabled=progress, unit="q", desc="coren") as bar:
            t_start = time.perf_counter()
            done = [0]

            def tick(n: int, info: dict[str, Any]) -> None:
                done[0] += n
                bar.update(n)
                el = time.perf_counter() - t_start
                extra = {"actors": f"{pool.alive}/{len(pool.actors)}"} if pool is not None else {}
                bar.set_postfix(
                    steps_s=f"{done[0] / per_step / max(el, 1e-9):.2f}",
                    hits=info["cache_hits"],
                    refresh=False,
                    **extra,
                )

            runner = None
            if pool is not None:
                from labeler.cluster.workers import PoolRunner

                runner = PoolRunner(pool, lambda c: labeler.merge_counts(**c))
            labeler = CorenLabeler(judge, encoder, prompts, templates, cfg, progress=tick, runner=runner)
            try:
                result = labeler.label(trajs, qa=qa)
            except CorenInputError as e:
                raise click.ClickException(str(e)) from None
        judge_stats = dict(judge.stats)
        cluster_report = pool.report() if pool is not None else None
        judge_sha = judge.model_sha256
        judge_prov = judge.provenance() if hasattr(judge, "provenance") else {}

    feats = step_features(labeler, result)
    trained = None
    if model is None:
        batch = orch.make_batch(
            split_by_trajectory(feats, trajs),
            split_by_trajectory(result.channels, trajs),
            [t.success for t in trajs],
        )
        ocfg = orch.OrchestratorConfig(input_dim=feats.shape[1], epochs=epochs)
        trained = orch.fit(batch, ocfg)
        model = trained.model
        labeler.report.orchestrator_losses = (trained.losses[0], trained.losses[-1])
        labeler.report.orchestrator_check = trained.check.to_dict()
    weights = orch.weights_for(model, feats)
    labeler.report.mean_weights = [float(x) for x in weights.mean(axis=0)]

    provenance: dict[str, Any] = {
        "judge_sha256": judge_sha,
        "judge": judge_prov,
        "prompts": [{"name": p.name, "version": p.version, "sha256": p.sha256} for p in prompts],
        "templates": {"version": templates.version, "sha256": templates.sha256},
        "examples": {"source": templates.examples_source, "examples": list(templates.examples)},
        "encoder_sha256": enc_ref.sha256,
        "qa_sha256": qa_hash(result.qa),
        "qa_source": "file" if qa is not None else "built",
        "qa_entries": len(result.qa),
        "n_ctx": n_ctx,
        "obs_tokens": cfg.obs_tokens,
        "result_tokens": cfg.result_tokens,
        "vote": cfg.vote,
        "scale": list(templates.values),
    }
    if trained is not None:
        path = save_ckpt or _default_ckpt(out)
        sha = orch.save(
            model, path, {**provenance, "dataset": os.path.abspath(in_path), "trajectories": len(trajs)}
        )
        provenance["orchestrator_sha256"] = sha
        provenance["orchestrator"] = "trained on this dataset's success flags"
        provenance["orchestrator_check"] = trained.check.to_dict()
        click.echo(
            f"orchestrator: trained ({epochs} steps, loss {trained.losses[0]:.4f} -> "
            f"{trained.losses[-1]:.4f}), saved {path}; {trained.check.reason}",
            err=True,
        )
        if trained.check.gate == 0.0:
            click.echo(f"warning: {trained.check.reason}", err=True)
    else:
        provenance["orchestrator_sha256"] = orch.file_sha256(ckpt)
        provenance["orchestrator"] = f"applied {os.path.basename(ckpt)}"
    write_labels(result, weights, provenance, cfg.keep_dists)
    with TrajectoryWriter(out) as w:
        for t in trajs:
            w.write(t)

    rep = labeler.report
    rep.seconds = time.perf_counter() - t0
    rep.cache_hits = int(judge_stats.get("cache_hits", 0))
    rep.judge_seconds = float(judge_stats.get("seconds", 0.0))
    rep.truncations = dict(labeler.trunc.counts)
    d = rep.to_dict()
    d["judge_stats"] = judge_stats
    if cluster_report is not None:
        d["cluster"] = cluster_report
    if report_path:
        settings.atomic_write(report_path, json.dumps(d, indent=2, default=float))  # never a half report
    ens = np.array([s.labels["coren"]["ensemble"] for t in trajs for s in t.steps])
    cut = sum(v for k, v in labeler.trunc.counts.items() if k != "observation_head")
    click.echo(
        f"wrote {out}: {len(trajs)} trajectories, {rep.steps} steps, {rep.total_queries} queries "
        f"({d['queries_per_step']:.1f}/step, {rep.cache_hits} cache hits), "
        f"{d['steps_per_second']:.2f} steps/s "
        f"({rep.seconds:.1f} s); ensemble mean {ens.mean():.2f}; weights C/S/T "
        + "/".join(f"{x:.2f}" for x in rep.mean_weights)
        + (f"; truncated {cut} texts to fit the context" if cut else "")
    )
