"""``edgejudge matrix labels``: the label grid on the matrix's cached steps (:mod:`policy.matrix.labels`):
world x log shape x label method, per-step AUROC of each method's labels against score progress and the gold
path, and the label check's verdict; no training."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from models.cli_options import split_option
from models.provenance import load_average, provenance
from policy.matrix.cli_args import (
    PRESET_HELP,
    RecordedCommand,
    check_adapters,
    full_rows,
    ints,
    recorded_args,
    words,
)


@click.command("labels", cls=RecordedCommand)
@click.option(
    "--world",
    "worlds",
    multiple=True,
    required=True,
    metavar="WORLD",
    help=f"A preset ({PRESET_HELP}) or [LABEL=]ADAPTER:TASK[PARAMS]@MAX_STEPS; repeatable (several worlds "
    "also get pooled rows).",
)
@click.option(
    "--pool",
    "pools",
    multiple=True,
    metavar="LABEL=FILE",
    help="Cut world LABEL's logs from FILE (a log of that world from any collector, e.g. a deployed "
    "bundle's episodes from edgejudge collect --policy, with ground truth under each step's info) instead of "
    "collecting with --behaviour; repeatable.",
)
@click.option(
    "--shapes",
    default="full,plain,response",
    show_default=True,
    help="Log shapes: full (the adapter's states and layout), plain (flattened into text, no layout), "
    "response (the last response and the inventory line).",
)
@click.option(
    "--methods",
    default="sparse,success,potential,trca-built",
    show_default=True,
    help="Label methods: sparse (the env reward), success (the episode's flag on every step), potential, "
    "trca (the shipped rubric of the task type), trca-built (one judge-built rubric per task type of the "
    "file, unreviewed), coren.",
)
@click.option("--episodes", default="30", show_default=True, help="Episodes per log, comma-separated sizes.")
@split_option()
@click.option("--behaviour", default="gold-noise", show_default=True, help="edgejudge collect --behaviour.")
@click.option("--noise", default=0.4, show_default=True, type=click.FloatRange(0, 1))
@click.option("--collect-seed", default=1, show_default=True, type=int)
@click.option(
    "--max-success-rate",
    default=0.3,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Most share of successful episodes in a log (edgejudge data subset's rule).",
)
@click.option(
    "--coren-max-episodes",
    default=10,
    show_default=True,
    type=click.IntRange(0),
    help="COREN labels only logs up to this many episodes (about one step per second).",
)
@click.option("--coren-prompts", default=2, show_default=True, type=click.IntRange(1, 5))
@click.option(
    "--audit",
    "audit_steps",
    default=0,
    show_default=True,
    type=click.IntRange(0),
    help="Steps of each world's labeled log the local judge audits (edgejudge label audit --auditor judge): "
    "each row then records the channel the check names and every channel's verdict after the audit; 0: none.",
)
@click.option(
    "--auditor",
    type=click.Choice(["judge", "truth"]),
    default="judge",
    show_default=True,
    help="Who marks the audited steps: the local judge, or the log's own score progress (truth: an auditor "
    "who is always right, the upper bound of a person's audit; its rows are kept apart from the judge's).",
)
@click.option(
    "--work-dir",
    default="runs/labels",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where each step's files are kept and reused (pools, cuts, shapes, rubrics, labels).",
)
@click.option("--out", default="labels", show_default=True, help="Results prefix: OUT.json (rows), OUT.md.")
@click.option(
    "--merge",
    "merge_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Take the finished rows of another results file (a run elsewhere) into OUT.json; repeatable.",
)
@click.option("--report-only", is_flag=True, help="Write OUT.json/.md from the rows already there.")
@click.option("--dry-run", is_flag=True, help="List the rows and whether each is done; compute nothing.")
@click.pass_context
def labels(
    ctx,
    worlds,
    pools,
    shapes,
    methods,
    episodes,
    split,
    behaviour,
    noise,
    collect_seed,
    max_success_rate,
    coren_max_episodes,
    coren_prompts,
    audit_steps,
    auditor,
    work_dir,
    out,
    merge_files,
    report_only,
    dry_run,
) -> None:
    """The label grid: per world, log shape and label method, how well the labels rank the steps (per-step
    AUROC against score progress and the gold path) and what the label check says, before any training.

    Per world one pool is collected on the held-out split (or given with --pool) and cut to success-scarce
    logs of each size; each log is made in each shape and labeled as a user labels theirs. Rows are kept in
    OUT.json (a second run computes only what is missing; --work-dir keeps every step's file); the tables go
    to OUT.md.

    \b
      edgejudge matrix labels --world twc-medium=twx:twc[level=medium]@50 --split dev --episodes 20
      edgejudge matrix labels --world scienceworld:find-plant@40 --world scienceworld:chemistry-mix@40 \\
          --split test --episodes 15 --methods sparse,success,trca-built,coren --coren-max-episodes 15
    """
    os.environ.setdefault("EDGEJUDGE_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from models.settings import atomic_write
    from policy.matrix import labels as grid
    from policy.matrix.data import SHAPES
    from policy.matrix.plan import FULL, parse_world, with_overrides
    from policy.matrix.store import RowStore, merge, row_key

    sizes = ints(episodes, "--episodes") or ()
    shape_list, method_list = words(shapes) or (), words(methods) or ()
    bad = [x for x in shape_list if x not in SHAPES] + [x for x in method_list if x not in grid.METHODS]
    if bad:
        raise click.UsageError(
            f"unknown log shape or label method: {', '.join(bad)} (shapes: {', '.join(SHAPES)}; methods: "
            f"{', '.join(grid.METHODS)})"
        )
    if not sizes or min(sizes) < 1 or not shape_list or not method_list:
        raise click.UsageError("--episodes, --shapes and --methods need at least one value; sizes >= 1")
    try:
        ws = [parse_world(w) for w in worlds]
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--world") from None
    ws = _with_pools(ws, pools)
    s = with_overrides(
        FULL,
        worlds=tuple(worlds),
        sizes=sizes,
        behaviour=behaviour,
        noise=noise,
        collect_seed=collect_seed,
        split=split,
        max_success_rate=max_success_rate,
        coren_max_episodes=coren_max_episodes,
        coren_prompts=coren_prompts,
        audit_steps=audit_steps,
        auditor=auditor,
    )
    plan = grid.plan(ws, s, shape_list, method_list)
    try:
        store = RowStore(f"{out}.json", full_rows(work_dir, out))
        for other in merge_files:
            merge(store, RowStore(other))
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    if dry_run:
        for r in plan:
            mark = "done" if grid.done(store, r) else "todo"
            click.echo(f"{mark}  {r['world']} {r['shape']} {r['method']} n={r['episodes']}")
        click.echo(f"{sum(grid.done(store, r) for r in plan)} of {len(plan)} rows done")
        return
    computed = 0
    w0, load0 = time.perf_counter(), load_average()[0]
    if not report_only:
        check_adapters(ws)

        def log(msg: str) -> None:
            click.echo(f"[{time.perf_counter() - w0:7.0f} s] {msg}", err=True)

        computed = grid.run(store, plan, ws, s, Path(work_dir).resolve(), log)
    store.meta = {
        **store.meta,
        **provenance(),
        "command": " ".join(["edgejudge matrix labels", *recorded_args(ctx.meta.get("argv", []))]),
        "plan": [row_key(r) for r in plan],
    }
    if not report_only:
        runs = store.meta.get("runs", []) + [
            {
                "rows_computed": computed,
                "seconds": round(time.perf_counter() - w0, 1),
                "load_average": [load0, load_average()[0]],
            }
        ]
        store.meta["runs"] = runs[-20:]
    store.save()
    atomic_write(Path(f"{out}.md"), grid.markdown(store, plan))
    ok = sum(1 for r in plan if (store.get(r) or {}).get("status") == "ok")
    click.echo(
        f"{computed} rows computed, {ok} of {len(plan)} rows with a result; wrote {out}.json, {out}.md"
    )


def _with_pools(worlds, pools):
    """``worlds`` with each ``--pool LABEL=FILE`` set on the world it names."""
    from dataclasses import replace

    given: dict[str, str] = {}
    for text in pools:
        label, sep, path = text.partition("=")
        if not sep or not label or not path:
            raise click.BadParameter(f"{text!r}: expected LABEL=FILE", param_hint="--pool")
        if label not in {w.label for w in worlds}:
            known = ", ".join(w.label for w in worlds)
            raise click.BadParameter(f"{label!r} is not a --world label ({known})", param_hint="--pool")
        if not Path(path).is_file():
            raise click.BadParameter(f"{path}: no such file", param_hint="--pool")
        given[label] = str(Path(path).resolve())
    return [replace(w, pool=given[w.label]) if w.label in given else w for w in worlds]
