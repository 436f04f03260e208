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

from models.provenance import load_average, provenance
from policy.matrix.cli_args import (
    PRESET_HELP,
    RecordedGroup,
    check_adapters,
    full_rows,
    ints,
    recorded_args,
    words,
)
from policy.matrix.labels_cli import labels
from policy.matrix.recipes import RECIPES, SOURCES, trainable_sources

CLIENTS = ("argmax", "guard")
ON = {"any": "every source", "sparse": "the success flag", "trca": "TRCA sources"}


def _check_plan(s) -> None:
    """Every source, recipe and client of the plan is known; sizes and seeds are given; a round setting has
    a source it applies to."""
    sources_known = trainable_sources()
    bad = (
        [x for x in s.sources if x not in sources_known]
        + [x for x in s.algos if x not in RECIPES]
        + [x for x in s.clients if x not in CLIENTS]
    )
    if bad:
        raise click.UsageError(
            f"unknown source, algorithm or client: {', '.join(bad)} (sources: {', '.join(sources_known)}; "
            f"algorithms: {', '.join(RECIPES)}; clients: {', '.join(CLIENTS)})"
        )
    if not s.sizes or not s.seeds or any(n < 1 for n in s.sizes):
        raise click.UsageError("--sizes and --seeds need at least one value each; sizes are at least 1")
    from policy.matrix.plan import extends_rubric

    if s.round_rubric == "extend" and not any(extends_rubric(s, x) for x in s.sources):
        raise click.UsageError(
            "--round-rubric extend: no source of the plan labels with a judge-built rubric (e.g. trca-built)"
        )


def _round_set(values: tuple[str, ...]) -> tuple[str, ...] | None:
    """``--round-set`` values, each ``RECIPE:KEY=VALUE`` with a known recipe (None when none is given)."""
    for v in values:
        recipe, colon, kv = v.partition(":")
        key, eq, _value = kv.partition("=")
        if not (colon and eq and key) or recipe not in RECIPES:
            raise click.BadParameter(
                f"{v!r}: expected RECIPE:KEY=VALUE with a recipe among {', '.join(RECIPES)} "
                "(e.g. credit:detours=false)",
                param_hint="--round-set",
            )
    return tuple(values) or None


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
    cls=RecordedGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]}
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
    help="Reward sources (comma-separated): "
    + ", ".join(f"{s.name} ({s.about})" for s in SOURCES.values() if s.trainable)
    + ".",
)
@click.option(
    "--algos",
    help="Recipes (comma-separated): "
    + ", ".join(f"{r.name} ({r.title}; {ON[r.runs_on]})" for r in RECIPES.values())
    + ".",
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
    "ceiling_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="A results file with imitation-ceiling rows (BC on expert episodes of the same worlds) to show "
    "beside this one's rows: a line in the tables and plots, and per-verb decisions against them; "
    "repeatable (one file per family of worlds).",
)
@click.option(
    "--rounds",
    type=click.IntRange(0),
    help="Rounds of the loop after the training files (default 0: none): each trained policy of the largest "
    "size deployed through edge-serve on the train split (the client, loop guard and log writer a robot "
    "uses), its episodes labeled with everything before, the policy trained on all of it, exported and "
    "evaluated; beside a policy on labels, BC on as many expert episodes as its file has successes.",
)
@click.option(
    "--round-episodes", type=click.IntRange(1), help="Episodes the deployed policy plays per round (100)."
)
@click.option(
    "--round-temperature",
    type=click.FloatRange(0, min_open=True),
    help="Exploration of the deployed policy: a draw from softmax(scores / T) at every step (0.5).",
)
@click.option(
    "--round-init",
    is_flag=True,
    default=None,
    help="Start each round's training from the last round's policy.",
)
@click.option(
    "--round-set",
    "round_set",
    multiple=True,
    metavar="RECIPE:KEY=VALUE",
    help="A training setting of one recipe from round 1 on (edgejudge train --set KEY=VALUE), e.g. "
    "credit:detours=false; round 0 keeps the recipe's own. Repeatable.",
)
@click.option(
    "--round-rubric",
    type=click.Choice(["first", "extend"]),
    help="The judge-built rubric (trca-built) each round labels with: the training file's (first, the "
    "default), or the last round's extended by the judge with places for the new log's objects it does not "
    "place yet (extend: edgejudge rubrics build --base).",
)
@click.option(
    "--augment",
    type=click.IntRange(0),
    help="Every trained policy also learns from up to N renamed copies of each episode (edgejudge train "
    "--augment; the log decides what may be renamed). Default 0.",
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
    ceiling_files,
    rounds,
    round_episodes,
    round_temperature,
    round_init,
    round_set,
    round_rubric,
    augment,
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
        SIZES,
        baseline_rows,
        describe,
        parse_world,
        round_units,
        units,
        with_overrides,
    )
    from policy.matrix.report import write_report
    from policy.matrix.rounds import matched_expert_rows
    from policy.matrix.run import Matrix
    from policy.matrix.store import RowStore, merge, planned_rows, row_key

    preset = "quick" if quick else "full"
    s = with_overrides(
        SIZES[preset],
        worlds=tuple(worlds) or None,
        sizes=ints(sizes, "--sizes"),
        seeds=ints(seeds, "--seeds"),
        sources=words(sources),
        algos=words(algos),
        clients=words(clients),
        test_episodes=test_episodes,
        llm_episodes=llm_episodes,
        steps=steps,
        coren_max_episodes=coren_max_episodes,
        # given but empty ("" or "0"): no ceiling rows; not given: the preset's
        expert_sizes=None
        if expert_sizes is None
        else tuple(n for n in ints(expert_sizes, "--expert-sizes") or () if n > 0),
        max_success_rate=max_success_rate,
        encoder=encoder,
        rounds=rounds,
        round_episodes=round_episodes,
        round_temperature=round_temperature,
        round_init=round_init,
        round_set=_round_set(round_set),
        round_rubric=round_rubric,
        augment=augment,
    )
    try:
        ws = [parse_world(w) for w in s.worlds]
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--world") from None
    _check_plan(s)
    if not (report_only or dry_run):
        check_adapters(ws)
        _check_serving()
    try:
        store = RowStore(f"{out}.json", full_rows(work_dir, out))
        for other in merge_files:
            merge(store, RowStore(other))
        ceiling = [r for f in ceiling_files for r in planned_rows(RowStore(f))]
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    m = Matrix(s, ws, Path(work_dir).resolve(), store, keep_bundles)
    m.baselines_only = baselines_only
    plan = [r for w in ws for u in units(w, s) for r in u.rows] + [r for w in ws for r in baseline_rows(w, s)]
    plan += [r for w in ws for ru in round_units(w, s) for r in ru.rows]
    plan += [r for r in matched_expert_rows(s, list(store.rows.values()), ws) if r not in plan]
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
        _print_plan(m, plan)
        return
    _run_and_report(m, store, meta, plan, out, ceiling, " ".join(ctx.meta.get("argv", [])))


def _print_plan(m, plan: list[dict[str, Any]]) -> None:
    """``--dry-run``: every row of the plan, done or to do."""
    for r in plan:
        mark = "done" if m.done(r) else "todo"
        loop = f" round {r['round']}" if "round" in r else ""
        click.echo(
            f"{mark}  {r['world']} {r['algo']}/{r['source']} n={r['train_episodes']}{loop} "
            f"seed={r['seed']} {r['client']} ({r['runner']}) x{r['test_episodes']}"
        )
    click.echo(f"{sum(m.done(r) for r in plan)} of {len(plan)} rows done")


def _run_and_report(m, store, meta: dict[str, Any], plan, out: str, ceiling, command: str) -> None:
    """Compute the rows not done, record the run (time, CPU, load) in the store and write the report."""
    from policy.matrix.report import write_report
    from policy.matrix.rounds import Rounds, matched_expert_rows
    from policy.matrix.run import children_cpu_seconds

    w0, c0, load0 = time.perf_counter(), children_cpu_seconds(), load_average()[0]
    plan = m.run(after_units=Rounds(m).run)
    plan += [r for r in matched_expert_rows(m.s, list(store.rows.values()), m.worlds) if r not in plan]
    reused = sum(1 for r in plan if m.done(r)) - m.computed
    wall, cpu = time.perf_counter() - w0, children_cpu_seconds() - c0
    runs = store.meta.get("runs", []) + [
        {
            "rows_computed": m.computed,
            "seconds": round(wall, 1),
            "load_average": [load0, load_average()[0]],
            "cpu_seconds": round(cpu, 1),
            "command": command,
        }
    ]
    store.meta = {**meta, "runs": runs[-20:]}
    store.save()
    write_report(store, plan, Path(out), ceiling=ceiling)
    click.echo(
        f"{m.computed} rows computed, {reused} reused, {len(plan) - m.computed - reused} unfinished; "
        f"{wall:.0f} s ({cpu:.0f} CPU-s); wrote {out}.json, {out}.md, {out}.png"
    )


matrix.add_command(labels)
