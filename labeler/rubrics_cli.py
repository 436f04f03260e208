"""``edgejudge rubrics ...``: build TRCA rubric files with the judge, validate them, see what they match."""

from __future__ import annotations

import contextlib
import re
import sys
import textwrap
from collections import Counter
from pathlib import Path

import click

from labeler.cluster.options import ClusterError, cluster_config, cluster_options
from labeler.trca.rubric import CATEGORIES, RubricError, load_rubric, write_rubric
from models.cli_options import cache_option, judge_option, progress_option, threads_option
from models.trajectory import DatasetError, iter_trajectories


@click.group()
def rubrics() -> None:
    """TRCA rubric libraries: versioned TOML files of Evidence / Execution / Invalidity items with
    deterministic transition checks.

    \b
      edgejudge rubrics build --dataset data/train.jsonl.gz --task-type twc --out twc.toml
      edgejudge rubrics build --dataset data/train.jsonl.gz --out r.toml   # r.<task type>.toml each
      edgejudge rubrics validate twc.toml
      edgejudge rubrics stats twc.toml --dataset data/dev.jsonl.gz
    """


@rubrics.command()
@click.option(
    "--dataset",
    "dataset",
    required=True,
    type=click.Path(dir_okay=False),
    help="Trajectories to mine transitions from (JSONL or JSONL.gz). Ground truth in 'info' is not read.",
)
@click.option(
    "--task-type",
    default=None,
    help="The dataset task_type the rubric is for (e.g. twc). Default: one rubric per task type of the "
    "dataset (with --base: the base rubric's).",
)
@judge_option()
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False),
    help="Rubric file to write (.toml). Without --task-type: one file per task type, the task type before "
    "the suffix (--out r.toml writes r.twc.toml, r.cookingworld.toml, ...).",
)
@cache_option()
@click.option(
    "--max-trajectories",
    default=200,
    show_default=True,
    type=click.IntRange(min=1),
    help="Mine at most this many trajectories of each task type.",
)
@click.option(
    "--min-count",
    default=2,
    show_default=True,
    type=click.IntRange(min=1),
    help="A transition template must be seen this often to become an item.",
)
@click.option(
    "--max-templates",
    default=40,
    show_default=True,
    type=click.IntRange(min=1),
    help="Judge at most this many (most frequent) templates.",
)
@click.option(
    "--placement",
    default="auto",
    show_default=True,
    help="Object -> place tables: auto (when the instruction is about where things go), none, or "
    "a comma-separated list of verbs such as 'put'.",
)
@click.option(
    "--prompt-orders",
    default=4,
    show_default=True,
    type=click.IntRange(1, 4),
    help="Tag under this many orders of the prompt's examples, majority wins (fewer: faster, noisier).",
)
@click.option(
    "--grounding/--no-grounding",
    default=True,
    show_default=True,
    help="Check the judge's tags against the success flags (how much more often a check holds in successful "
    "trajectories, whether it lasts, whether it changes anything) and place objects where successful "
    "trajectories left them. --no-grounding: the judge alone.",
)
@click.option(
    "--check-folds",
    default=2,
    show_default=True,
    type=click.IntRange(min=0),
    help="Held-out check: build the rubric without each of K folds of the trajectories, label the fold, and "
    "report how well its mean reward separates held-out successes from failures (0: no check).",
)
@click.option(
    "--base",
    default=None,
    type=click.Path(dir_okay=False),
    help="A reviewed rubric to extend: keep all of it, add only placement pairs for objects it lacks.",
)
@threads_option()
@progress_option()
@cluster_options
def build(
    dataset,
    task_type,
    judge_ref,
    out,
    cache,
    max_trajectories,
    min_count,
    max_templates,
    placement,
    prompt_orders,
    grounding,
    check_folds,
    base,
    threads,
    progress,
    ray,
    judge_actors,
    cpus_per_actor,
    gpus_per_actor,
    actor_restarts,
) -> None:
    """Instantiate a rubric per task type of DATASET with the judge, each written as a reviewable TOML file.

    With --task-type, one rubric for that task type, written to --out; without it, one per task type found
    in DATASET (OUT with the task type before its suffix), with one judge for all of them.

    With --base, the reviewed file is kept as it is and only objects it does not know get a place (the
    judge's choice), e.g. to cover a new split's unseen objects without redoing the review.

    The judge's queries run in chunks of 16, each from the same primed judge state; with --ray the chunks run
    on Ray judge actors and give the same rubric.
    """
    from labeler.trca.build import BuildConfig, leading_comments

    try:
        cluster = cluster_config(ray, judge_actors, cpus_per_actor, gpus_per_actor, actor_restarts)
    except ClusterError as e:
        raise click.ClickException(str(e)) from None

    base_rubric = None
    if base is not None:
        try:
            base_rubric = load_rubric(base)
        except RubricError as e:
            raise click.ClickException(str(e)) from None
        if task_type is not None and base_rubric.task_type != task_type:
            raise click.UsageError(
                f"--base {base} is for task type {base_rubric.task_type!r}, not {task_type!r}"
            )
        task_type = base_rubric.task_type

    try:
        groups = trajectories_by_task_type(dataset, task_type, max_trajectories)
    except DatasetError as e:
        raise click.ClickException(str(e)) from None
    if not groups:
        what = f"of task type {task_type!r}" if task_type is not None else "at all"
        raise click.ClickException(f"{dataset}: no trajectory {what}")
    outs = {t: out if task_type is not None else per_task_type_path(out, t) for t in groups}
    from labeler.judge import JudgeError
    from labeler.trca.pipeline import default_cache
    from models.registry import ModelError

    if base_rubric is not None:  # only new objects need the judge: is there any?
        from labeler.trca.build import placement_verbs
        from labeler.trca.mine import mine

        mined = mine(groups[task_type], min_count=min_count)
        seen = {
            o
            for v in placement_verbs(BuildConfig(task_type, placement=placement), mined)
            for o in mined.places_for.get(v, {})
        }
        known = {o for it in base_rubric.items if it.pairs for o in it.pairs}
        if not seen - known:
            write_rubric(out, base_rubric, leading_comments(Path(base).read_text(encoding="utf-8")))
            click.echo(
                f"wrote {out}: {base} unchanged (version {base_rubric.version}): it already places all "
                f"{len(seen)} objects of {Path(dataset).name}; no judge query"
            )
            return

    def config(task: str) -> BuildConfig:
        return BuildConfig(
            task_type=task,
            min_count=min_count,
            max_templates=max_templates,
            placement=placement,
            prompt_orders=prompt_orders,
            grounded=grounding,
            tag_templates=base_rubric is None,  # --base keeps the reviewed items: only places are needed
            progress=progress,
        )

    try:
        with _scorer(cluster, judge_ref, threads, cache or default_cache()) as scorer:
            for task, trajs in groups.items():
                if len(groups) > 1:
                    click.echo(f"task type {task!r}: {len(trajs)} trajectories", err=True)
                _build_one(trajs, scorer, config(task), dataset, outs[task], base, base_rubric, check_folds)
    except (ModelError, JudgeError, ValueError, ClusterError) as e:
        raise click.ClickException(str(e)) from None
    if len(groups) > 1:
        click.echo("label with: " + " ".join(f"--rubrics {p}" for p in outs.values()))


def trajectories_by_task_type(dataset: str, task_type: str | None, limit: int) -> dict[str, list]:
    """The first ``limit`` trajectories of each task type of ``dataset`` (only ``task_type``'s when given),
    by task type in sorted order."""
    groups: dict[str, list] = {}
    for t in iter_trajectories(dataset):
        if task_type is not None and t.task_type != task_type:
            continue
        kept = groups.setdefault(t.task_type, [])
        if len(kept) < limit:
            kept.append(t)
        if task_type is not None and len(kept) >= limit:
            break
    return dict(sorted(groups.items()))


def per_task_type_path(out: str, task_type: str) -> str:
    """Where the rubric of ``task_type`` goes for ``--out out`` without ``--task-type``: ``r.toml`` ->
    ``r.<task_type>.toml`` (characters other than letters, digits, ``.``, ``-``, ``_`` made ``_``)."""
    path = Path(out)
    stem = path.name.removesuffix(".toml")
    safe = re.sub(r"[^\w.-]", "_", task_type)
    return str(path.with_name(f"{stem}.{safe}.toml"))


def _build_one(trajs, scorer, cfg, dataset, out, base, base_rubric, check_folds) -> None:
    """Build (or, with ``base_rubric``, extend) the rubric of ``cfg.task_type`` from ``trajs`` and write it
    to ``out``."""
    from labeler.trca.build import build_header, build_rubric, extend_rubric, leading_comments

    report = build_rubric(
        trajs, scorer, cfg, dataset_name=Path(dataset).name, log=lambda m: click.echo(m, err=True)
    )
    if base_rubric is not None:
        rubric, added = extend_rubric(base_rubric, report.rubric)
        header = leading_comments(Path(base).read_text(encoding="utf-8"))
        note = (
            f"EXTENDED by 'rubrics build --base' from {Path(dataset).name}: {len(added)} objects got the "
            f"judge's place (not reviewed): {', '.join(added) or 'none'}"
        )
        header += "\n\n" + "\n".join(textwrap.wrap(note, width=105, subsequent_indent="  "))
        write_rubric(out, rubric, header)
        click.echo(
            f"wrote {out}: {base} (version {base_rubric.version}) + {len(added)} objects placed by the "
            f"judge -> version {rubric.version}, {report.queries} judge queries"
        )
        return
    if check_folds:
        from labeler.trca.crossfit import crossfit_check

        check = crossfit_check(trajs, scorer, cfg, folds=check_folds)
        if check is None:
            click.echo(f"held-out check: too few successes or failures for {check_folds} folds", err=True)
        else:
            whole = check.mean_reward
            report.rubric.build["heldout_auroc"] = round(whole.value or 0.0, 4)
            report.rubric.build["heldout_folds"] = check_folds
            click.echo(
                f"held-out check ({check_folds} folds): mean reward per step vs success AUROC "
                f"{whole.value:.3f} [{whole.low:.2f}, {whole.high:.2f}]: {check.verdict}",
                err=True,
            )
            if check.verdict in ("weak", "inverted", "too few"):
                click.echo(f"warning: {check.message}", err=True)
    write_rubric(out, report.rubric, build_header(report))
    sizes = report.rubric.category_sizes()
    click.echo(
        f"wrote {out}: {len(report.rubric.items)} items ("
        + ", ".join(f"{sizes[c]} {c}" for c in CATEGORIES)
        + f"), {report.queries} judge queries; review it, then: edgejudge rubrics validate {out}"
    )


@contextlib.contextmanager
def _scorer(cluster, judge_ref: str, threads: int | None, cache: str):
    """The judge's ``score_many`` in units of work: on a local judge, or (``--ray``) on judge actors."""
    from labeler.cluster.units import UnitScorer
    from labeler.judge import open_judge

    if cluster is None:
        with open_judge(judge_ref, n_threads=threads, cache=cache) as judge:
            yield UnitScorer.local(judge)
        return
    from labeler.cluster.workers import PoolRunner, judge_pool, score_worker

    with judge_pool(cluster, {"model": judge_ref, "n_threads": threads}, score_worker(), cache) as pool:
        yield UnitScorer(pool.infos[0]["model_sha256"], PoolRunner(pool))


@rubrics.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def validate(files) -> None:
    """Check rubric FILES; print each problem as file:line: where: problem. Exits 1 on any problem."""
    bad = 0
    for f in files:
        try:
            r = load_rubric(f)
        except RubricError as e:
            click.echo(str(e), err=True)
            bad += 1
            continue
        sizes = r.category_sizes()
        click.echo(
            f"{f}: OK (task type {r.task_type!r}, version {r.version}, {len(r.items)} items: "
            + ", ".join(f"{sizes[c]} {c}" for c in CATEGORIES)
            + ")"
        )
    if bad:
        raise SystemExit(1)


@rubrics.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--dataset",
    required=True,
    type=click.Path(dir_okay=False),
    help="Trajectories to apply the rubric's checks to.",
)
@click.option(
    "--examples",
    default=1,
    show_default=True,
    type=click.IntRange(min=0),
    help="Show this many example transitions per item.",
)
def stats(file, dataset, examples) -> None:
    """How often each item of FILE holds on DATASET's transitions (no judge call): a review aid."""
    from labeler.trca.checks import CompiledRubric, transitions_of

    try:
        cr = CompiledRubric(load_rubric(file))
        hits: Counter = Counter()
        shown: dict[str, list[str]] = {}
        steps = 0
        for t in iter_trajectories(dataset):
            if t.task_type != cr.rubric.task_type and cr.rubric.task_type != "*":
                continue
            for s, tr in zip(t.steps, transitions_of(t), strict=True):
                steps += 1
                for i, b in cr.hits(tr):
                    iid = cr.items[i].item.id
                    hits[iid] += 1
                    if len(shown.setdefault(iid, [])) < examples:
                        shown[iid].append(f"{s.action!r} [{', '.join(sorted(b))}]")
    except (RubricError, DatasetError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{file} on {dataset}: {steps} transitions of task type {cr.rubric.task_type!r}")
    for c in cr.items:
        it = c.item
        ex = f"  e.g. {'; '.join(shown.get(it.id, []))}" if shown.get(it.id) else ""
        click.echo(
            f"  {it.category:10s} {it.id:40s} {hits[it.id]:6d} ({hits[it.id] / max(steps, 1):6.1%}){ex}"
        )
    sys.stdout.flush()
