"""``edgejudge label trca``: TRCA rewards and advantages for every step of a dataset."""

from __future__ import annotations

import contextlib
import json
from collections import Counter

import click

from labeler.cluster.options import ClusterError, cluster_config, cluster_options
from labeler.dataset import DatasetError, iter_trajectories, read_trajectories
from labeler.label_check import check_after_labeling
from labeler.trca.pipeline import EPISODE_GROUPS, RubricSet, TRCAConfig, default_cache, label_file
from labeler.trca.rubric import RubricError
from models.cli_options import cache_option, judge_option, progress_option


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
        cluster = cluster_config(ray, judge_actors, cpus_per_actor, gpus_per_actor, actor_restarts)
    except (RubricError, ValueError, ClusterError) as e:
        raise click.ClickException(str(e)) from None
    if cluster is not None and item_judge != "llm":
        click.echo("--ray: no judge call without --item-judge llm; labeling in this process", err=True)
        cluster = None

    if dry_run:
        try:
            types: Counter = Counter()
            steps = judge_q = 0
            for t in iter_trajectories(file):
                cr = rubrics.get(t.task_type)
                types[t.task_type] += 1
                steps += len(t.steps)
                if item_judge == "llm":
                    judge_q += len(t.steps) * sum(
                        1 for i in cr.active(t.instruction) if cr.items[i].item.judge
                    )
        except (DatasetError, RubricError) as e:
            raise click.ClickException(str(e)) from None
        click.echo(
            f"dry run: {sum(types.values())} trajectories, {steps} steps "
            f"({', '.join(f'{k}: {v}' for k, v in sorted(types.items()))}); "
            + "; ".join(f"rubric {r.path} v{r.version} ({len(r.items)} items)" for r in rubrics.used())
            + f"; {judge_q} judge queries (~{judge_q * 0.25:.0f} s at 0.25 s/query uncached)"
        )
        return

    from labeler.progress import progress as progress_bar

    judge = None
    stack = contextlib.ExitStack()
    runner = None
    try:
        if item_judge == "llm" and cluster is not None:
            from labeler.cluster.workers import DriverJudge, PoolRunner, judge_pool, trca_item_worker

            pool = stack.enter_context(
                judge_pool(
                    cluster,
                    {"model": judge_ref},
                    trca_item_worker(rubric_files, cfg),
                    cache or default_cache(),
                )
            )
            judge = DriverJudge(judge_ref, pool)
            runner = PoolRunner(pool)
        elif item_judge == "llm":
            from labeler.judge import open_judge

            judge = open_judge(judge_ref, cache=cache or default_cache())
        bars: dict = {}
        counted: dict[str, int] = {}

        def on_progress(phase: str, steps: int) -> None:
            if phase not in bars:  # pass 2 knows the total from pass 1
                for b in bars.values():
                    b.close()
                total = counted.get("rewards") if phase == "write" else None
                bars[phase] = progress_bar(total, enabled=progress, unit="step", desc=f"trca {phase}")
            bars[phase].update(steps)
            counted[phase] = counted.get(phase, 0) + steps

        try:
            summary = label_file(file, out, rubrics, cfg, judge=judge, on_progress=on_progress, runner=runner)
        finally:
            for b in bars.values():
                b.close()
    except (DatasetError, RubricError, ValueError, RuntimeError) as e:
        raise click.ClickException(str(e)) from None
    finally:
        if judge is not None:
            judge.close()
        stack.close()
    click.echo(
        f"wrote {out}: {summary.trajectories} trajectories, {summary.steps} steps, "
        f"{summary.steps_per_s:,.0f} steps/s ({summary.seconds:.2f} s), {summary.judge_queries} judge queries"
    )
    for name, counter in summary.item_hits.items():
        top = ", ".join(f"{k}: {v}" for k, v in counter.most_common())
        click.echo(f"  {name}: {json.dumps(top) if not top else top}")
    if check:
        click.echo(check_after_labeling(read_trajectories(out), "trca.total", out))
