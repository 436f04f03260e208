"""The judge a COREN run asks: the local GGUF judge, or with ``--ray`` the driver's stand-in for a pool of
judge actors. Load errors become one-line click errors."""

from __future__ import annotations

import contextlib

import click

from labeler.cluster.options import ClusterError


def open_local(judge_ref: str, n_ctx: int, threads: int | None, cache: str | None, gpu_layers: int = 0):
    from labeler.judge import JudgeError, open_judge
    from models.registry import ModelError

    try:
        return open_judge(
            judge_ref,
            n_threads=threads,
            n_threads_batch=threads,
            n_ctx=n_ctx,
            n_gpu_layers=gpu_layers,
            cache=cache,
        )
    except (JudgeError, ModelError) as e:
        raise click.ClickException(str(e)) from None


@contextlib.contextmanager
def coren_judge(judge_ref, n_ctx, threads, cache, gpu_layers, cluster, prompts, templates, cfg):
    """The local judge, or (with --ray) the driver's stand-in for the judge actors."""
    if cluster is None:
        with open_local(judge_ref, n_ctx, threads, cache, gpu_layers) as judge:
            yield judge
        return
    from labeler.cluster.workers import DriverJudge, coren_worker, judge_pool
    from labeler.judge import JudgeError
    from models.registry import ModelError

    kwargs = {"model": judge_ref, "n_threads": threads, "n_ctx": n_ctx, "n_gpu_layers": gpu_layers}
    try:
        with judge_pool(cluster, kwargs, coren_worker(prompts, templates, cfg), cache) as pool:
            judge = DriverJudge(judge_ref, pool)
            try:
                yield judge
            finally:
                judge.close()
    except (ClusterError, JudgeError, ModelError) as e:
        raise click.ClickException(str(e)) from None
