"""What ``edgejudge label coren`` does once its options are read (:mod:`labeler.coren.cli`): judge every
step (:class:`labeler.coren.pipeline.CorenLabeler`), train or apply the orchestrator, write the labels through
:mod:`labeler.label_writer`, and write the run report. A bad encoder, checkpoint or input is a usage error.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from labeler.coren.judge_session import coren_judge
from models import settings


@dataclass(frozen=True)
class Files:
    """The files a run reads and writes."""

    data: str
    """IN, the log to label."""
    out: str
    orchestrator: str | None = None
    """A trained orchestrator to apply (None: train one on IN)."""
    save_orchestrator: str | None = None
    """Where a trained one goes (None: beside OUT)."""
    report: str | None = None


def run(trajs, prompts, templates, cfg, qa, files: Files, judge_args: tuple, epochs: int, progress) -> None:
    """Judge every step, fit (or apply) the orchestrator, write OUT and the run report, print the summary.
    ``judge_args``: :func:`labeler.coren.judge_session.coren_judge`'s first arguments (the judge, its context
    size, threads, cache, GPU layers and the Ray cluster or None)."""
    from labeler.coren import orchestrator as orch
    from labeler.coren.pipeline import METHOD, labeled, step_features
    from labeler.label_writer import closing_check, write_labeled

    t0 = time.perf_counter()
    enc_ref, encoder = _encoder()
    model = _load_orchestrator(files.orchestrator, enc_ref) if files.orchestrator else None
    labeler, result, judged = _judge_steps(trajs, prompts, templates, cfg, qa, encoder, judge_args, progress)

    feats = step_features(labeler, result)
    trained = None if model is not None else _train_orchestrator(labeler, result, feats, trajs, epochs)
    if trained is not None:
        model = trained.model
    weights = orch.weights_for(model, feats)
    labeler.report.mean_weights = [float(x) for x in weights.mean(axis=0)]

    n_ctx = judge_args[1]  # the judge context size the provenance records
    provenance = _provenance(judged, prompts, templates, cfg, enc_ref.sha256, result.qa, qa, n_ctx)
    if trained is not None:
        path = files.save_orchestrator or _default_ckpt(files.out)
        _save_orchestrator(trained, provenance, path, files.data, len(trajs), epochs)
    else:
        provenance["orchestrator_sha256"] = orch.file_sha256(files.orchestrator)
        provenance["orchestrator"] = f"applied {os.path.basename(files.orchestrator)}"
    write_labeled(files.out, METHOD, labeled(result, weights, provenance, cfg.keep_dists))

    report = _report(labeler, judged, time.perf_counter() - t0, files.report)
    click.echo(_summary(files.out, trajs, labeler, report))
    check = closing_check(files.out, f"{METHOD}.ensemble")
    if check:
        click.echo(check)


@dataclass
class _Judged:
    """What the run keeps of the judge after it is closed."""

    stats: dict[str, Any]
    cluster_report: dict[str, Any] | None
    sha256: str
    provenance: dict[str, Any]


def _encoder():
    """The sentence encoder's reference and the loaded encoder."""
    from models.encoder import EncoderError, load_sentence_encoder, resolve_encoder

    try:
        enc_ref = resolve_encoder()
        return enc_ref, load_sentence_encoder(enc_ref)
    except EncoderError as e:
        raise click.ClickException(str(e)) from None


def _load_orchestrator(ckpt: str, enc_ref):
    from labeler.coren import orchestrator as orch

    try:
        model, _, _ = orch.load(ckpt, input_dim=3 * enc_ref.embedding_dim)
    except orch.OrchestratorError as e:
        raise click.ClickException(str(e)) from None
    return model


def _judge_steps(trajs, prompts, templates, cfg, qa, encoder, judge_args, progress):
    """``(labeler, its result, the judge's numbers)``: every step judged, with a progress bar of queries
    and steps per second (and the live actors with --ray)."""
    from labeler.coren.pipeline import CorenInputError, CorenLabeler
    from models.progress import progress as progress_bar

    with coren_judge(*judge_args, prompts, templates, cfg) as judge:
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
        judged = _Judged(
            stats=dict(judge.stats),
            cluster_report=pool.report() if pool is not None else None,
            sha256=judge.model_sha256,
            provenance=judge.provenance() if hasattr(judge, "provenance") else {},
        )
    return labeler, result, judged


def _train_orchestrator(labeler, result, feats, trajs, epochs):
    """The orchestrator trained on this log's success flags, with its held-out check in the run report."""
    from labeler.coren import orchestrator as orch
    from labeler.coren.pipeline import split_by_trajectory

    batch = orch.make_batch(
        split_by_trajectory(feats, trajs),
        split_by_trajectory(result.channels, trajs),
        [t.success for t in trajs],
    )
    trained = orch.fit(batch, orch.OrchestratorConfig(input_dim=feats.shape[1], epochs=epochs))
    labeler.report.orchestrator_losses = (trained.losses[0], trained.losses[-1])
    labeler.report.orchestrator_check = trained.check.to_dict()
    return trained


def _provenance(
    judged: _Judged, prompts, templates, cfg, encoder_sha256, built_qa, qa, n_ctx
) -> dict[str, Any]:
    """``provenance["coren"]`` before the orchestrator's part."""
    from labeler.coren.structural import qa_hash

    return {
        "judge_sha256": judged.sha256,
        "judge": judged.provenance,
        "prompts": [{"name": p.name, "version": p.version, "sha256": p.sha256} for p in prompts],
        "templates": {"version": templates.version, "sha256": templates.sha256},
        "examples": {"source": templates.examples_source, "examples": list(templates.examples)},
        "encoder_sha256": encoder_sha256,
        "qa_sha256": qa_hash(built_qa),
        "qa_source": "file" if qa is not None else "built",
        "qa_entries": len(built_qa),
        "n_ctx": n_ctx,
        "obs_tokens": cfg.obs_tokens,
        "result_tokens": cfg.result_tokens,
        "vote": cfg.vote,
        "scale": list(templates.values),
    }


def _save_orchestrator(
    trained, provenance: dict[str, Any], path: str, in_path, trajectories: int, epochs
) -> None:
    """Save the trained orchestrator (its metadata: the provenance so far) and add it to the provenance."""
    from labeler.coren import orchestrator as orch

    meta = {**provenance, "dataset": os.path.abspath(in_path), "trajectories": trajectories}
    provenance["orchestrator_sha256"] = orch.save(trained.model, path, meta)
    provenance["orchestrator"] = "trained on this dataset's success flags"
    provenance["orchestrator_check"] = trained.check.to_dict()
    click.echo(
        f"orchestrator: trained ({epochs} steps, loss {trained.losses[0]:.4f} -> "
        f"{trained.losses[-1]:.4f}), saved {path}; {trained.check.reason}",
        err=True,
    )
    if trained.check.gate == 0.0:
        click.echo(f"warning: {trained.check.reason}", err=True)


def _report(labeler, judged: _Judged, seconds: float, report_path: str | None) -> dict[str, Any]:
    """The run's numbers (written to ``report_path`` atomically, when given)."""
    rep = labeler.report
    rep.seconds = seconds
    rep.cache_hits = int(judged.stats.get("cache_hits", 0))
    rep.judge_seconds = float(judged.stats.get("seconds", 0.0))
    rep.truncations = dict(labeler.trunc.counts)
    d = rep.to_dict()
    d["judge_stats"] = judged.stats
    if judged.cluster_report is not None:
        d["cluster"] = judged.cluster_report
    if report_path:
        settings.atomic_write(report_path, json.dumps(d, indent=2, default=float))  # never a half report
    return d


def _summary(out: str, trajs, labeler, d: dict[str, Any]) -> str:
    """The line the command ends with."""
    import numpy as np

    rep = labeler.report
    ens = np.array([s.labels["coren"]["ensemble"] for t in trajs for s in t.steps])
    cut = sum(v for k, v in labeler.trunc.counts.items() if k != "observation_head")
    return (
        f"wrote {out}: {len(trajs)} trajectories, {rep.steps} steps, {rep.total_queries} queries "
        f"({d['queries_per_step']:.1f}/step, {rep.cache_hits} cache hits), "
        f"{d['steps_per_second']:.2f} steps/s "
        f"({rep.seconds:.1f} s); ensemble mean {ens.mean():.2f}; weights C/S/T "
        + "/".join(f"{x:.2f}" for x in rep.mean_weights)
        + (f"; truncated {cut} texts to fit the context" if cut else "")
    )


def _default_ckpt(out: str) -> str:
    name = Path(out).name
    for suffix in (".jsonl.gz", ".jsonl", ".gz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return str(Path(out).with_name(name + ".orchestrator.safetensors"))
