"""The policy benchmark matrix: worlds x reward source x algorithm x training episodes x seeds, plus random
and LLM-as-agent rows, each trained policy exported as a bundle and driven through edge-serve.

    python -m tools.bench.bench_matrix --quick             # TWC easy, 2 data sizes, 1 seed (~15 min)
    python -m tools.bench.bench_matrix                     # the full matrix (hours)
    python -m tools.bench.bench_matrix --world twc-easy --world 'cw=twx:cookingworld[level=small]@30' \\
        --sizes 30,60,120,250 --seeds 0,1,2 --sources sparse,trca,coren
    python -m tools.bench.bench_matrix --dry-run           # the rows, and which are done

Per world it collects one success-scarce pool with ``edgejudge collect``'s behaviour mixture, cuts nested
training files of each size (at most ``--max-success-rate`` of their episodes successful), labels the largest
with TRCA (and the COREN sizes with COREN), trains every (source, algorithm, size, seed) with ``edgejudge
train``, exports it with ``edgejudge export`` and drives the test split through ``edge-serve`` (``edgejudge
eval --serve``): ``argmax`` (the daemon's answer every step) and ``guard`` (the client's generic loop guard,
keyed by the adapter's world key; no task-specific search, no reading of the score). Beside the headline
edge-serve row one in-process row (``edgejudge eval BUNDLE``) must agree with it episode by episode.

Rows are keyed by their full configuration and stored in OUT.json (atomic rewrite after every row): a
finished row is never recomputed, and artifacts (pool, labels, checkpoints) in --work-dir are reused.
Writes OUT.json, OUT.md and OUT.png (success per world and source with 95 % intervals; data-size curves).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click

from tools.bench.benchlib import edgejudge, load_average, provenance
from tools.bench.matrix_data import BUILT_TRCA, WorldData, short_hash
from tools.bench.matrix_plan import (
    EXPERT,
    LEARNERS,
    SIZES,
    Sizes,
    Unit,
    World,
    baseline_rows,
    describe,
    parse_world,
    units,
    with_overrides,
)
from tools.bench.matrix_store import RowStore, row_key

FINAL = ("ok", "skipped")
"""Row statuses that count as finished; an ``error`` row is retried by the next run."""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    """The row fields of an evaluation result (``edgejudge eval --json``, with ``--serve`` or in process)."""
    eps = result.get("per_episode") or []
    scores = [float(e["score"]) for e in eps if e.get("score") is not None]
    out = {
        "status": "ok",
        "episodes": result["episodes"],
        "successes": result["successes"],
        "success_rate": result["success_rate"],
        "ci95": list(result["ci95"]),
        "mean_score": statistics.fmean(scores) if scores else None,
        "mean_steps": result["mean_steps"],
        "invalid_action_rate": result["invalid_action_rate"],
        "per_episode": [[e["seed"], int(bool(e["success"])), e.get("score"), e["steps"]] for e in eps],
    }
    lat = result.get("latency")
    if lat:
        out["ms_per_action_p50"] = lat.get("round_trip_ms_p50")
        out["guard_overrides"] = result.get("guard_overrides")
    else:
        out["ms_per_action_p50"] = result.get("latency_ms_p50")
    return out


class Matrix:
    def __init__(self, sizes: Sizes, worlds: list[World], work: Path, store: RowStore, keep_bundles: bool):
        self.s = sizes
        self.worlds = worlds
        self.work = work
        self.store = store
        self.keep_bundles = keep_bundles
        self.baselines_only = False
        self.computed = 0
        self._data: dict[str, WorldData] = {}
        self.t0 = time.perf_counter()

    # ------------------------------------------------------------------ bookkeeping

    def log(self, msg: str) -> None:
        click.echo(f"[{time.perf_counter() - self.t0:7.0f} s] {msg}", err=True)

    def done(self, cfg: dict[str, Any]) -> bool:
        row = self.store.get(cfg)
        return row is not None and row.get("status") in FINAL

    def put(self, cfg: dict[str, Any], result: dict[str, Any]) -> None:
        self.store.put(cfg, result)
        if result.get("status") == "ok":
            self.computed += 1
            self.log(
                f"{cfg['world']} {cfg['algo']}/{cfg['source']} n={cfg['train_episodes']} s={cfg['seed']} "
                f"{cfg['client']} ({cfg['runner']}): {result['success_rate']:.0%} of {result['episodes']}"
            )
        else:
            self.log(
                f"{cfg['world']} {cfg['algo']}/{cfg['source']}: {result['status']}: {result.get('reason')}"
            )

    def data(self, w: World) -> WorldData:
        if w.label not in self._data:
            self._data[w.label] = WorldData(self.work, w, self.s, self.log)
        return self._data[w.label]

    def timed(self, fn, *args: str, **kw: Any) -> tuple[str, float, float]:
        w0, c0 = time.perf_counter(), _cpu()
        out = fn(*args, **kw)
        return out, time.perf_counter() - w0, _cpu() - c0

    # ------------------------------------------------------------------ rows

    def decisions(self, wd: WorldData, policy: Path, test_episodes: int) -> dict[str, Any]:
        """Where a policy's decisions fail, per verb, on the test split's gold paths (``edgejudge
        decisions``): read beside its success to tell what it learned from what it could not."""
        gold = wd.test_gold(test_episodes)
        report = json.loads(edgejudge("decisions", str(policy), str(gold), "--json"))
        return {k: report[k] for k in ("decisions", "accuracy", "verbs")}

    def backfill(self, u: Unit, wd: WorldData, ckpt: Path) -> None:
        """Finished rows of ``u`` without their gold-path decisions or label quality (rows made before
        either was recorded) get them from the checkpoint and labels still in the work folder."""
        rows = [self.store.get(r) for r in u.rows]
        lacking = [
            r
            for r in rows
            if r and r.get("status") == "ok" and ("gold_decisions" not in r or "label_quality" not in r)
        ]
        if not lacking or not (ckpt / "checkpoint.json").is_file():
            return
        self.log(f"{u.world.label}: decisions and label quality of {u.name}")
        extra = {
            "gold_decisions": self.decisions(wd, ckpt, lacking[0]["test_episodes"]),
            "label_quality": wd.label_quality(u.source, u.episodes),
        }
        for r in lacking:
            self.store.put(r["config"], {**{k: v for k, v in r.items() if k != "config"}, **extra})

    def run_unit(self, u: Unit) -> None:
        base = {k: v for k, v in u.rows[0].items() if k not in ("client", "runner")}
        wd = self.data(u.world)
        ckpt = wd.dir / "ckpt" / f"{u.name}-{short_hash(base)}"
        bundle = wd.dir / "bundle" / f"{u.name}-{short_hash(base)}"
        todo = [r for r in u.rows if not self.done(r)]
        if not todo:
            self.backfill(u, wd, ckpt)
            return
        try:
            data, info = wd.training_file(u.source, u.episodes)
        except click.ClickException as e:
            for r in todo:
                self.put(r, {"status": "error", "reason": f"data: {e.message.strip().splitlines()[-1]}"})
            return
        algo, _filter = LEARNERS[u.algo]
        if info["train_successes"] == 0 and algo == "bc":
            for r in todo:
                self.put(r, {"status": "skipped", "reason": "no successful episode to clone", **info})
            return
        train_info: dict[str, Any] = {}
        if not (ckpt / "checkpoint.json").is_file():
            self.log(f"{u.world.label}: train {u.name} ({info['train_steps']} steps of data)")
            args = [
                "train",
                str(data),
                "--algo",
                algo,
                "--reward",
                {BUILT_TRCA: "trca", EXPERT: "sparse"}.get(u.source, u.source),
                "--steps",
                str(self.s.steps),
                "--seed",
                str(u.seed),
                "--out",
                str(ckpt),
                "--json",
            ]
            if base["detour_penalty"]:
                args += ["--detour-penalty", str(base["detour_penalty"])]
            if algo == "bc":
                args += ["--set", f"filter={base.get('bc_filter', 'success')}"]
            out, wall, cpu = self.timed(edgejudge, *args)
            train_info = {"train_seconds": round(wall, 1), "train_cpu_seconds": round(cpu, 1)}
            (ckpt.parent / f"{ckpt.name}.timing.json").write_text(json.dumps(train_info))
        else:
            timing = ckpt.parent / f"{ckpt.name}.timing.json"
            train_info = json.loads(timing.read_text()) if timing.exists() else {}
        if not (bundle / "manifest.json").is_file():
            self.log(f"{u.world.label}: export {u.name}")
            edgejudge("export", str(ckpt), "--out", str(bundle), "--json")
        decisions = self.decisions(wd, bundle, base["test_episodes"])
        labels = wd.label_quality(u.source, u.episodes)
        common = [
            "--split",
            "test",
            "--episodes",
            str(base["test_episodes"]),
            "--max-steps",
            str(base["max_steps"]),
            "--json",
            *u.world.spec_args(),
        ]
        for r in sorted(todo, key=lambda r: r["runner"] != "edge-serve"):
            guard = "--loop-guard" if r["client"] == "guard" else "--no-loop-guard"
            serve = ["--serve"] if r["runner"] == "edge-serve" else []
            out, wall, cpu = self.timed(edgejudge, "eval", str(bundle), *serve, guard, *common)
            res = {
                **_summary(json.loads(out)),
                **info,
                **train_info,
                "gold_decisions": decisions,
                "label_quality": labels,
            }
            res.update(eval_seconds=round(wall, 1), eval_cpu_seconds=round(cpu, 1))
            if r["runner"] != "edge-serve":
                res["agrees_with_edge_serve"] = self.agreement(r, res)
            self.put(r, res)
        if not self.keep_bundles and all(self.done(r) for r in u.rows):
            shutil.rmtree(bundle, ignore_errors=True)

    def agreement(self, row: dict[str, Any], res: dict[str, Any]) -> dict[str, Any] | None:
        """Episodes on which the in-process runner and edge-serve (same bundle, same client) had the same
        outcome and length."""
        twin = self.store.get({**row, "runner": "edge-serve"})
        if not twin or twin.get("status") != "ok":
            return None
        same = sum(a == b for a, b in zip(twin["per_episode"], res["per_episode"], strict=False))
        return {"episodes_equal": same, "of": len(res["per_episode"])}

    def run_baseline(self, cfg: dict[str, Any], world: World) -> None:
        if self.done(cfg):
            return
        args = [
            "eval",
            "--baseline",
            "random" if cfg["algo"] == "random" else "llm",
            *world.spec_args(),
            "--split",
            "test",
            "--episodes",
            str(cfg["test_episodes"]),
            "--max-steps",
            str(cfg["max_steps"]),
            "--json",
        ]
        if cfg["algo"] == "random":
            args += ["--seed", str(cfg["seed"])]
        else:
            guard = "--loop-guard" if cfg["client"] == "guard" else "--no-loop-guard"
            args += ["--judge", cfg["judge"], guard]
            self.log(f"{world.label}: LLM-as-agent, {cfg['client']}, {cfg['test_episodes']} episodes")
        out, wall, cpu = self.timed(edgejudge, *args)
        self.put(
            cfg,
            {**_summary(json.loads(out)), "eval_seconds": round(wall, 1), "eval_cpu_seconds": round(cpu, 1)},
        )

    def run(self) -> list[dict[str, Any]]:
        """Compute every unfinished row; the plan's rows (configurations) in order."""
        plan: list[dict[str, Any]] = []
        for w in self.worlds:
            us, bs = units(w, self.s), baseline_rows(w, self.s)
            mine = [r for u in us for r in u.rows] + bs
            plan += mine
            if all(self.done(r) for r in mine):
                for u in us if not self.baselines_only else []:
                    self.run_unit(u)  # only fills in what finished rows lack
                continue
            try:
                for cfg in bs:
                    if cfg["algo"] == "random":
                        self.run_baseline(cfg, w)
                for u in us if not self.baselines_only else []:
                    self.run_unit(u)
                for cfg in bs:
                    if cfg["algo"] != "random":
                        self.run_baseline(cfg, w)
            except (click.ClickException, subprocess.TimeoutExpired) as e:
                reason = e.message if isinstance(e, click.ClickException) else str(e)
                reason = " ".join(reason.strip().splitlines()[-1:])[:300]
                self.log(f"{w.label}: unavailable ({reason})")
                for r in plan:
                    if r["world"] == w.label and not self.done(r):
                        self.store.put(r, {"status": "error", "reason": reason})
        return plan


def _recorded_args(argv: list[str]) -> list[str]:
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


def _ints(text: str | None) -> tuple[int, ...] | None:
    return tuple(int(x) for x in text.split(",") if x.strip()) if text else None


def _words(text: str | None) -> tuple[str, ...] | None:
    return tuple(x.strip() for x in text.split(",") if x.strip()) if text else None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--quick",
    is_flag=True,
    help="The quick size: TWC easy, 30 and 120 episodes, one seed, 20 test "
    "episodes, sparse and TRCA (about 15 minutes on 2 cores). Default: the full size.",
)
@click.option(
    "--world",
    "worlds",
    multiple=True,
    help="A preset (twc-easy, twc-medium, twc-hard, cookingworld-small, cookingworld-large, "
    "scienceworld-find-animal, scienceworld-lifespan-longest-lived) or LABEL=ADAPTER:TASK[PARAMS]@MAX_STEPS; "
    "repeatable.",
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
@click.option("--clients", help="argmax and/or guard (the generic loop guard).")
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
    "--max-success-rate", type=click.FloatRange(0, 1), help="Most share of successful training episodes."
)
@click.option("--work-dir", default="runs/matrix", show_default=True, type=click.Path(file_okay=False))
@click.option(
    "--out",
    default="tools/results/bench_matrix",
    show_default=True,
    help="Results prefix: writes OUT.json, OUT.md, OUT.png.",
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
def main(
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
    work_dir,
    out,
    keep_bundles,
    merge_files,
    ceiling_file,
    baselines_only,
    report_only,
    dry_run,
) -> None:
    """Run (or resume) the benchmark matrix and write its JSON, Markdown table and PNG."""
    os.environ.setdefault("EDGEJUDGE_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from tools.bench.matrix_report import write_report

    s = with_overrides(
        SIZES["quick" if quick else "full"],
        worlds=tuple(worlds) or None,
        sizes=_ints(sizes),
        seeds=_ints(seeds),
        sources=_words(sources),
        algos=_words(algos),
        clients=_words(clients),
        test_episodes=test_episodes,
        llm_episodes=llm_episodes,
        steps=steps,
        coren_max_episodes=coren_max_episodes,
        # given but empty ("" or "0"): no ceiling rows; not given: the preset's
        expert_sizes=None if expert_sizes is None else tuple(n for n in _ints(expert_sizes) or () if n > 0),
        max_success_rate=max_success_rate,
    )
    try:
        ws = [parse_world(w) for w in s.worlds]
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--world") from None
    bad = (
        [x for x in s.sources if x not in ("sparse", "trca", BUILT_TRCA, "coren", "potential")]
        + [x for x in s.algos if x not in LEARNERS]
        + [x for x in s.clients if x not in ("argmax", "guard")]
    )
    if bad:
        raise click.UsageError(f"unknown source, algorithm or client: {', '.join(bad)}")
    try:
        store = RowStore(f"{out}.json")
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    for other in merge_files:
        for key, row in RowStore(other).rows.items():
            mine = store.rows.get(key, {})
            newer = mine.get("status") not in FINAL or (
                mine.get("status") == row.get("status") and set(row) > set(mine)  # backfilled elsewhere
            )
            if row.get("status") in FINAL and newer:
                store.rows[key] = row
    try:
        ceiling = list(RowStore(ceiling_file).rows.values()) if ceiling_file else []
    except ValueError as e:
        raise click.ClickException(str(e)) from None
    m = Matrix(s, ws, Path(work_dir).resolve(), store, keep_bundles)
    m.baselines_only = baselines_only
    plan = [r for w in ws for u in units(w, s) for r in u.rows] + [r for w in ws for r in baseline_rows(w, s)]
    meta = {
        **provenance(),
        "size": ("quick" if quick else "full")
        + ("" if s == SIZES["quick" if quick else "full"] else ", adjusted"),
        "sizes": describe(s),
        "command": "python -m tools.bench.bench_matrix " + " ".join(_recorded_args(sys.argv[1:])),
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
    w0, c0, load0 = time.perf_counter(), _cpu(), load_average()[0]
    plan = m.run()
    reused = sum(1 for r in plan if m.done(r)) - m.computed
    wall, cpu = time.perf_counter() - w0, _cpu() - c0
    runs = store.meta.get("runs", []) + [
        {
            "rows_computed": m.computed,
            "seconds": round(wall, 1),
            "load_average": [load0, load_average()[0]],
            "cpu_seconds": round(cpu, 1),
            "command": " ".join(sys.argv[1:]),
        }
    ]
    store.meta = {**meta, "runs": runs[-20:]}
    store.save()
    write_report(store, plan, Path(out), ceiling=ceiling)
    click.echo(
        f"{m.computed} rows computed, {reused} reused, {len(plan) - m.computed - reused} unfinished; "
        f"{wall:.0f} s ({cpu:.0f} CPU-s); wrote {out}.json, {out}.md, {out}.png"
    )


if __name__ == "__main__":
    main()
