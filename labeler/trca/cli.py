"""``edgejudge label trca``: TRCA rewards and advantages for every step of a dataset."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Iterator

import click

from labeler.cluster.options import ClusterError, cluster_config, cluster_options
from labeler.label_writer import closing_check
from labeler.trca.pipeline import (
    EPISODE_GROUPS,
    LabelSummary,
    RubricSet,
    TRCAConfig,
    default_cache,
    label_file,
)
from labeler.trca.rubric import RubricError
from models.cli_options import cache_option, judge_option, progress_option
from models.trajectory import DatasetError, iter_trajectories


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--out",
    default=None,
    type=click.Path(dir_okay=False),
    help="Labeled output (.jsonl or .jsonl.gz), written atomically. Required unless --dry-run.",
)
@click.option(
    "--rubrics",
    "rubric_files",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Rubric file (repeat for several task types). Default: the embedded labeler/rubrics/TASK.toml.",
)
@click.option(
    "--lambda",
    "lam",
    default=0.8,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    help="Breakthrough weight: r = (1 - lambda) r^F + lambda r^B.",
)
@click.option(
    "--gamma",
    default=0.95,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    help="Discount of the completion-aware return.",
)
@click.option(
    "--success-reward",
    default=1.0,
    show_default=True,
    type=float,
    help="Terminal reward added at the last step of a successful episode.",
)
@click.option(
    "--episode-group",
    default="instruction",
    show_default=True,
    type=click.Choice(EPISODE_GROUPS),
    help="Episodes compared for the episode-relative advantage.",
)
@click.option(
    "--item-judge",
    default="none",
    show_default=True,
    type=click.Choice(["none", "llm"]),
    help="llm: ask the judge per transition for judge-only rubric items (items without a check).",
)
@judge_option()
@cache_option()
@click.option("--dry-run", is_flag=True, help="Check the input and rubrics, count the work, write nothing.")
@click.option(
    "--check/--no-check",
    default=True,
    show_default=True,
    help="Print the label check of trca.total (success flags only; `edgejudge label quality`).",
)
@progress_option()
@cluster_options
def trca(
    file,
    out,
    rubric_files,
    lam,
    gamma,
    success_reward,
    episode_group,
    item_judge,
    judge_ref,
    cache,
    dry_run,
    check,
    progress,
    ray,
    judge_actors,
    cpus_per_actor,
    gpus_per_actor,
    actor_restarts,
) -> None:
    """Label FILE with TRCA (Transition-wise Rubric Credit Assignment) and write OUT.

    Per step, labels["trca"] gets foundational (r^F), breakthrough (r^B), total (r), the completion-aware
    return, adv_episode, adv_step and advantage (= adv_episode + adv_step); the trajectory's
    provenance["trca"]
    records the rubric's sha256 and version, lambda and gamma. Labels of other methods are kept. Rubric checks
    need no model call, so this runs at thousands of steps per second. With --item-judge llm and --ray the
    judge-only items of each trajectory are asked on Ray judge actors (same labels as without --ray).
    """
    if not dry_run and not out:
        raise click.UsageError("--out is required (or use --dry-run)")
    rubrics, cfg, cluster = _configure(
        rubric_files, lam, gamma, success_reward, episode_group, item_judge, ray,
        (judge_actors, cpus_per_actor, gpus_per_actor, actor_restarts),
    )  # fmt: skip
    if dry_run:
        click.echo(_dry_run(file, rubrics, item_judge))
        return
    summary = _label(file, out, rubrics, cfg, cluster, judge_ref, cache, progress, rubric_files)
    click.echo(
        f"wrote {out}: {summary.trajectories} trajectories, {summary.steps} steps, "
        f"{summary.steps_per_s:,.0f} steps/s ({summary.seconds:.2f} s), {summary.judge_queries} judge queries"
    )
    for name, counter in summary.item_hits.items():
        top = ", ".join(f"{k}: {v}" for k, v in counter.most_common())
        click.echo(f"  {name}: {json.dumps(top) if not top else top}")
    if check:
        click.echo(closing_check(out, "trca.total"))


def _configure(rubric_files, lam, gamma, success_reward, episode_group, item_judge, ray, actors):
    """The rubrics, the labeling config and the Ray cluster (None: label in this process) the options ask
    for; a bad one is a usage error."""
    try:
        rubrics = RubricSet(rubric_files)
        cfg = TRCAConfig(
            lam=lam,
            gamma=gamma,
            success_reward=success_reward,
            episode_group=episode_group,
            item_judge=item_judge,
        )
        cfg.validate()
        cluster = cluster_config(ray, *actors)
    except (RubricError, ValueError, ClusterError) as e:
        raise click.ClickException(str(e)) from None
    if cluster is not None and item_judge != "llm":
        click.echo("--ray: no judge call without --item-judge llm; labeling in this process", err=True)
        cluster = None
    return rubrics, cfg, cluster


def _dry_run(file, rubrics: RubricSet, item_judge: str) -> str:
    """The line --dry-run prints: the trajectories and steps per task type, the rubrics, the judge work."""
    try:
        types: Counter = Counter()
        steps = judge_q = 0
        for t in iter_trajectories(file):
            cr = rubrics.get(t.task_type)
            types[t.task_type] += 1
            steps += len(t.steps)
            if item_judge == "llm":
                judge_q += len(t.steps) * sum(1 for i in cr.active(t.instruction) if cr.items[i].item.judge)
    except (DatasetError, RubricError) as e:
        raise click.ClickException(str(e)) from None
    return (
        f"dry run: {sum(types.values())} trajectories, {steps} steps "
        f"({', '.join(f'{k}: {v}' for k, v in sorted(types.items()))}); "
        + "; ".join(f"rubric {r.path} v{r.version} ({len(r.items)} items)" for r in rubrics.used())
        + f"; {judge_q} judge queries (~{judge_q * 0.25:.0f} s at 0.25 s/query uncached)"
    )


def _label(file, out, rubrics, cfg, cluster, judge_ref, cache, progress, rubric_files) -> LabelSummary:
    """Label FILE into OUT, with the judge (here or on the cluster's actors) where judge-only items are
    asked; a failure is a usage error and leaves no OUT."""
    stack = contextlib.ExitStack()
    judge = None
    try:
        judge, runner = _judge(stack, cfg, cluster, judge_ref, cache, rubric_files)
        with _progress_bars(progress) as on_progress:
            return label_file(file, out, rubrics, cfg, judge=judge, on_progress=on_progress, runner=runner)
    except (DatasetError, RubricError, ValueError, RuntimeError) as e:
        raise click.ClickException(str(e)) from None
    finally:
        if judge is not None:
            judge.close()
        stack.close()


def _judge(stack: contextlib.ExitStack, cfg: TRCAConfig, cluster, judge_ref, cache, rubric_files):
    """``(judge, runner)``: none without judge-only items; a judge pool on the cluster (entered on
    ``stack``) and its runner; or a local judge."""
    if cfg.item_judge != "llm":
        return None, None
    if cluster is not None:
        from labeler.cluster.workers import DriverJudge, PoolRunner, judge_pool, trca_item_worker

        worker = trca_item_worker(rubric_files, cfg)
        pool = stack.enter_context(
            judge_pool(cluster, {"model": judge_ref}, worker, cache or default_cache())
        )
        return DriverJudge(judge_ref, pool), PoolRunner(pool)
    from labeler.judge import open_judge

    return open_judge(judge_ref, cache=cache or default_cache()), None


@contextlib.contextmanager
def _progress_bars(enabled: bool | None) -> Iterator[Callable[[str, int], None]]:
    """``on_progress(phase, steps)`` for :func:`label_file`: one bar per phase (pass 2's total is pass 1's
    count), all closed on exit."""
    from models.progress import progress as progress_bar

    bars: dict = {}
    counted: dict[str, int] = {}

    def on_progress(phase: str, steps: int) -> None:
        if phase not in bars:  # pass 2 knows the total from pass 1
            for b in bars.values():
                b.close()
            total = counted.get("rewards") if phase == "write" else None
            bars[phase] = progress_bar(total, enabled=enabled, unit="step", desc=f"trca {phase}")
        bars[phase].update(steps)
        counted[phase] = counted.get(phase, 0) + steps

    try:
        yield on_progress
    finally:
        for b in bars.values():
            b.close()
