"""``edgejudge matrix``: the policy matrix (worlds x reward source x learner x training episodes x seed,
beside random and LLM-as-agent rows), each trained policy exported as a bundle and driven through edge-serve.

    edgejudge matrix --quick                       # TWC easy, 2 data sizes, 1 seed (~15 min on 2 cores)
    edgejudge matrix --world twx:twc --sizes 30,120 --seeds 0 --sources sparse,trca-built --algos iql,bc
    edgejudge matrix --world 'cw=twx:cookingworld[level=small]@40' --sizes 30,60,120,250 --seeds 0,1,2
    edgejudge matrix --dry-run                     # the rows, and which are done
    edgejudge matrix labels --world twc-medium --episodes 20   # the label grid: label quality, no training

Per world it collects one success-scarce pool with ``edgejudge collect``'s behaviour mixture, cuts nested
training files of each size (at most ``--max-success-rate`` of their episodes successful, the rule of
``edgejudge data subset``), labels them, trains every (source, learner, size, seed) with ``edgejudge train``,
exports it with ``edgejudge export`` and drives the test split through ``edge-serve`` (``edgejudge eval
--serve``): ``argmax`` (the daemon's answer every step) and ``guard`` (the client's generic loop guard, keyed
by the adapter's world key; no task-specific search, no reading of the score). Beside the headline
edge-serve row one in-process row (``edgejudge eval BUNDLE``) must agree with it episode by episode.

Rows are keyed by their full configuration and stored in OUT.json (atomic rewrite after every row): a finished
row is never recomputed, and the steps' files (pool, labels, checkpoints) in --work-dir are reused. Writes
OUT.json, OUT.md (the tables) and OUT.png (success per world and source with 95 % intervals; data-size
curves).

``edgejudge matrix labels`` is the label grid on the same cached steps (:mod:`policy.matrix.labels`): world x
log shape x label method, per-step AUROC of each method's labels against score progress and the gold path,
and the label check's verdict.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import click

from models.cli_options import split_option
from models.provenance import load_average, provenance

PRESET_HELP = (
    "twc-easy, twc-medium, twc-hard, cookingworld-small, cookingworld-large, scienceworld-find-animal, "
    "scienceworld-lifespan-longest-lived"
)
SOURCES = ("sparse", "trca", "trca-built", "coren", "potential")
CLIENTS = ("argmax", "guard")


class _RecordedCommand(click.Command):
    """A command that keeps its own arguments (``ctx.meta["argv"]``): the results record the command line
    that made them, whichever way the command was started."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["argv"] = list(args)
        return super().parse_args(ctx, args)


class _RecordedGroup(click.Group):
    """:class:`_RecordedCommand` for the group: ``edgejudge matrix`` runs the policy matrix itself, and its
    subcommand ``labels`` the label grid (which records its own arguments in turn)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["argv"] = list(args)
        return super().parse_args(ctx, args)


def recorded_args(argv: list[str]) -> list[str]:
    """The command line without the options that only say where rows come from (--merge, --report-only,
    --work-dir): the command that makes the same rows."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--merge", "--work-dir"):
            skip = True
        elif a != "--report-only" and not a.startswith(("--merge=", "--work-dir=")):
            out.append(a)
    return out


def full_rows(work_dir: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Where a run keeps its full rows (with the per-episode arrays the rows file leaves out): beside its
    work, named after the rows file."""
    return Path(work_dir) / "rows" / f"{Path(out).name}.full.json"


def _ints(text: str | None, option: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        msg = f"{text!r}: expected integers separated by commas"
        raise click.BadParameter(msg, param_hint=option) from None


def _words(text: str | None) -> tuple[str, ...] | None:
    return tuple(x.strip() for x in text.split(",") if x.strip()) if text else None


def _check_adapters(worlds) -> None:
    """Every world's adapter is registered (a typo fails here, not after an hour of other worlds)."""
    from policy.envs.registry import HOW_TO_REGISTER, adapters

    try:
        known = adapters()
    except Exception as e:  # a bad EDGEJUDGE_ENVS entry
        raise click.ClickException(str(e)) from None
    for w in worlds:
        name = w.env.split(":")[0]
        if name not in known:
            raise click.BadParameter(
                f"{w.label}: unknown environment adapter {name!r}: expected one of "
                f"{', '.join(sorted(known))}; {HOW_TO_REGISTER}",
                param_hint="--world",
            )


def _check_serving() -> None:
    """The trained rows are driven through edge-serve: its runtime's packages are installed (a missing one
    fails here, before any training)."""
    import importlib.util

    missing = [m for m in ("zmq", "msgpack", "onnxruntime") if importlib.util.find_spec(m) is None]
    if missing:
        raise click.ClickException(
            f"edgejudge matrix drives its policies through edge-serve, which needs {', '.join(missing)}: "
            "pip install 'edgejudge[edge,train,env]'"
        )


@click.group(
    cls=_RecordedGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--quick",
    is_flag=True,
    help="The quick size: TWC easy, 30 and 120 episodes, one seed, 20 test episodes, sparse and TRCA (about "
    "15 minutes on 2 cores). Default: the full size (every preset world; hours).",
)
@click.option(
    "--world",
    "worlds",
    multiple=True,
    metavar="WORLD",
    help=f"A preset ({PRESET_HELP}) or [LABEL=]ADAPTER:TASK[PARAMS]@MAX_STEPS for any registered adapter, "
    "e.g. 'cw=twx:cookingworld[level=small]@40'; repeatable.",
)
@click.option("--sizes", help="Training episodes per data size, comma-separated (e.g. 30,60,120,250).")
@click.option("--seeds", help="Training seeds, comma-separated.")
@click.option(
    "--sources",
    help="Reward sources for IQL (comma-separated): sparse, trca (the shipped rubric of the task type), "
    "trca-built (a rubric the judge builds from each training file, unreviewed), coren, potential (the "
    "success-model potential fit on each training file, cross-fitted; no judge).",
)
@click.option(
    "--algos",
    help="Learners: iql, bc (BC on the successful episodes: source sparse), bc-labeled (BC on the successful "
    "episodes' steps the labels do not call harmful: TRCA sources), awr (TRCA's advantages).",
)
@click.option("--clients", help="argmax and/or guard (the generic loop guard), comma-separated.")
@click.option(
    "--test-episodes", type=click.IntRange(1), help="Test episodes per row (the split's first seeds)."
)
@click.option(
    "--llm-episodes", type=click.IntRange(0), help="Test episodes of the LLM-as-agent rows (0: none)."
)
@click.option("--steps", type=click.IntRange(1), help="Gradient updates per trained policy.")
@click.option("--coren-max-episodes", type=click.IntRange(0), help="Label COREN only up to this data size.")
@click.option(
    "--expert-sizes",
    help="Expert episodes of the imitation-ceiling rows (BC on gold paths), comma-separated; 0: none.",
)
@click.option(
    "--max-success-rate",
    type=click.FloatRange(0, 1),
    help="Most share of successful training episodes (default 0.3).",
)
@click.option(
    "--encoder",
    help="The text encoder the policies learn on (edgejudge train --encoder, e.g. static); default: "
    "edgejudge train's.",
)
@click.option(
    "--work-dir",
    default="runs/matrix",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where each step's files are kept and reused (pools, labels, rubrics, checkpoints), and the full "
    "rows (rows/OUT.full.json: with each row's per-episode outcomes).",
)
@click.option(
    "--out",
    default="matrix",
    show_default=True,
    help="Results prefix: writes OUT.json (the rows, compact and resumable: what a repository commits), "
    "OUT.md and OUT.png.",
)
@click.option("--keep-bundles", is_flag=True, help="Keep each exported bundle (about 90 MB) after its rows.")
@click.option(
    "--merge",
    "merge_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Take the finished rows of another results file (a run elsewhere) into OUT.json; repeatable.",
)
@click.option(
    "--ceiling",
    "ceiling_file",
    type=click.Path(exists=True, dir_okay=False),
    help="A results file with imitation-ceiling rows (BC on expert episodes of the same worlds) to show "
    "beside this one's rows: a line in the tables and plots, and per-verb decisions against them.",
)
@click.option("--baselines-only", is_flag=True, help="Compute only the random and LLM-as-agent rows.")
@click.option("--report-only", is_flag=True, help="Write OUT.json/.md/.png from the rows already there.")
@click.option("--dry-run", is_flag=True, help="List the rows and whether each is done; compute nothing.")
@click.pass_context
def matrix(
    ctx,
    quick,
    worlds,
    sizes,
    seeds,
    sources,
    algos,
    clients,
    test_episodes,
    llm_episodes,
    steps,
    coren_max_episodes,
    expert_sizes,
    max_success_rate,
    encoder,
    work_dir,
    out,
    keep_bundles,
    merge_files,
    ceiling_file,
    baselines_only,
    report_only,
    dry_run,
) -> None:
    """Run (or resume) the policy matrix on any adapter: success of each reward source and learner per
    world and training-data size, through edge-serve.

    Each step (collect a pool, cut success-scarce files, build rubrics, label, train, export, evaluate) is
    an edgejudge command whose output is kept in --work-dir; each finished row is kept in OUT.json, so a
    second run computes only what is missing. Progress lines go to stderr; the tables to OUT.md.

    \b
      edgejudge matrix --quick
      edgejudge matrix --world twx:twc --sizes 30,120 --seeds 0 --sources sparse,trca-built --algos iql,bc
      edgejudge matrix --world twx:twc --sizes 30,120 --seeds 0 --dry-run

    'edgejudge matrix labels' measures the labels alone (no training): see its --help.
    """
    if ctx.invoked_subcommand is not None:
        return
    os.environ.setdefault("EDGEJUDGE_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from policy.matrix.plan import (
        LEARNERS,
        SIZES,
        baseline_rows,
        describe,
        parse_world,
        units,
        with_overrides,
    )
    from policy.matrix.report import write_report
    from policy.matrix.run import Matrix, children_cpu_seconds
    from policy.matrix.store import RowStore, merge, row_key

    preset = "quick" if quick else "full"
    s = with_overrides(
        SIZES[preset],
        worlds=tuple(worlds) or None,
        sizes=_ints(sizes, "--sizes"),
        seeds=_ints(seeds, "--seeds"),
        sources=_words(sources),
        algos=_words(algos),
        clients=_words(clients),
        test_episodes=test_episodes,
        llm_episodes=llm_episodes,
        steps=steps,
        coren_max_episodes=coren_max_episodes,
        # given but empty ("" or "0"): no ceiling rows; not given: the preset's
        expert_sizes=None
        if expert_sizes is None
        else tuple(n for n in _ints(expert_sizes, "--expert-sizes") or () if n > 0),
        max_success_rate=max_success_rate,
        encoder=encoder,
    )
    try:
        ws = [parse_world(w) for w in s.worlds]
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--world") from None
    bad = (
        [x for x in s.sources if x not in SOURCES]
        + [x for x in s.algos if x not in LEARNERS]
        + [x for x in s.clients if x not in CLIENTS]
    )
    if bad:
        raise click.UsageError(
            f"unknown source, algorithm or client: {', '.join(bad)} (sources: {', '.join(SOURCES)}; "
            f"algorithms: {', '.join(LEARNERS)}; clients: {', '.join(CLIENTS)})"
        )
    if not s.sizes or not s.seeds or any(n < 1 for n in s.sizes):
        raise click.UsageError("--sizes and --seeds need at least one value each; sizes are at least 1")
    if not (report_only or dry_run):
        _check_adapters(ws)
        _check_serving()
    try:
        store = RowStore(f"{out}.json", full_rows(work_dir, out))
        for other in merge_files:
            merge(store, RowStore(other))
        ceiling = list(RowStore(ceiling_file).rows.values()) if ceiling_file else []
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    m = Matrix(s, ws, Path(work_dir).resolve(), store, keep_bundles)
    m.baselines_only = baselines_only
    plan = [r for w in ws for u in units(w, s) for r in u.rows] + [r for w in ws for r in baseline_rows(w, s)]
    meta: dict[str, Any] = {
        **provenance(),
        "size": preset + ("" if s == SIZES[preset] else ", adjusted"),
        "sizes": describe(s),
        "command": " ".join(["edgejudge matrix", *recorded_args(ctx.meta.get("argv", []))]),
        "plan": [row_key(r) for r in plan],
    }
    if report_only:
        store.meta = {**store.meta, **meta}
        store.save()
        write_report(store, plan, Path(out), ceiling=ceiling)
        click.echo(f"{sum(m.done(r) for r in plan)} of {len(plan)} rows done; wrote {out}.json, .md, .png")
        return
    if dry_run:
        for r in plan:
            mark = "done" if m.done(r) else "todo"
            click.echo(
                f"{mark}  {r['world']} {r['algo']}/{r['source']} n={r['train_episodes']} "
                f"seed={r['seed']} {r['client']} ({r['runner']}) x{r['test_episodes']}"
            )
        click.echo(f"{sum(m.done(r) for r in plan)} of {len(plan)} rows done")
        return
    w0, c0, load0 = time.perf_counter(), children_cpu_seconds(), load_average()[0]
    plan = m.run()
    reused = sum(1 for r in plan if m.done(r)) - m.computed
    wall, cpu = time.perf_counter() - w0, children_cpu_seconds() - c0
    runs = store.meta.get("runs", []) + [
        {
            "rows_computed": m.computed,
            "seconds": round(wall, 1),
            "load_average": [load0, load_average()[0]],
            "cpu_seconds": round(cpu, 1),
            "command": " ".join(ctx.meta.get("argv", [])),
        }
    ]
    store.meta = {**meta, "runs": runs[-20:]}
    store.save()
    write_report(store, plan, Path(out), ceiling=ceiling)
    click.echo(
        f"{m.computed} rows computed, {reused} reused, {len(plan) - m.computed - reused} unfinished; "
        f"{wall:.0f} s ({cpu:.0f} CPU-s); wrote {out}.json, {out}.md, {out}.png"
    )


@matrix.command("labels", cls=_RecordedCommand)
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
    work_dir,
    out,
    merge_files,
    report_only,
    dry_run,
) -> None:
    """The label grid: per world, log shape and label method, how well the labels rank the steps (per-step
    AUROC against score progress and the gold path) and what the label check says, before any training.

    Per world one pool is collected on the held-out split and cut to success-scarce logs of each size; each
    log is made in each shape and labeled as a user labels theirs. Rows are kept in OUT.json (a second run
    computes only what is missing; --work-dir keeps every step's file); the tables go to OUT.md.

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

    sizes = _ints(episodes, "--episodes") or ()
    shape_list, method_list = _words(shapes) or (), _words(methods) or ()
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
        _check_adapters(ws)

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
