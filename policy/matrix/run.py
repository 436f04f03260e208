"""The matrix's rows computed: per trained policy one cached step per command, per row one evaluation.

Each step is an ``edgejudge`` command in a subprocess, its output kept in the work folder: the world's data
(:mod:`policy.matrix.data`: a collected pool, its success-scarce cuts, their rubrics and labels), then per
trained policy ``train``, ``export``, ``decisions`` on the test split's gold paths, and per row ``eval``
through ``edge-serve`` (``--serve``) or in process. A row is stored as soon as it is finished
(:class:`policy.matrix.store.RowStore`), so an interrupted run resumes where it stopped and a finished row is
never recomputed; a row that failed is stored as ``error`` and retried by the next run.
"""

from __future__ import annotations

import json
import resource
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from models.channel_choice import AUTO
from models.cli_run import edgejudge
from policy.matrix.data import WorldData, short_hash, train_reward
from policy.matrix.plan import Sizes, Unit, World, baseline_rows, round_units, units
from policy.matrix.recipes import RECIPES, SOURCES
from policy.matrix.store import FINAL, RowStore, episodes_digest


def children_cpu_seconds() -> float:
    """CPU seconds (user and system) of the finished subprocesses so far."""
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
    """The rows of ``worlds`` at ``sizes``: computed into ``store``, their files kept under ``work``."""

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
        """A progress line on stderr, with the seconds since the start."""
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
        w0, c0 = time.perf_counter(), children_cpu_seconds()
        out = fn(*args, **kw)
        return out, time.perf_counter() - w0, children_cpu_seconds() - c0

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

    def unit_files(self, u: Unit) -> tuple[Path, Path]:
        """Where unit ``u``'s checkpoint and bundle are kept."""
        base = {k: v for k, v in u.rows[0].items() if k not in ("client", "runner")}
        wd, name = self.data(u.world), f"{u.name}-{short_hash(base)}"
        return wd.dir / "ckpt" / name, wd.dir / "bundle" / name

    def fit(
        self,
        u: Unit,
        data: Path | list[Path],
        ckpt: Path,
        bundle: Path,
        init: Path | None = None,
        settings: Sequence[str] = (),
    ) -> dict[str, Any]:
        """Train (unless ``ckpt`` is there) and export (unless ``bundle`` is) the policy of ``u``'s
        configuration on ``data``, from ``init``'s weights when given, with the extra ``KEY=VALUE`` training
        ``settings``; the training's timing."""
        base = u.rows[0]
        algo = RECIPES[u.algo].algo
        timing = ckpt.parent / f"{ckpt.name}.timing.json"
        train_info: dict[str, Any] = {}
        files = data if isinstance(data, list) else [data]
        reward = train_reward(u.source, files)
        self._drop_if_choice_changed(u, reward, ckpt, bundle)
        if not (ckpt / "checkpoint.json").is_file():
            self.log(f"{u.world.label}: train {ckpt.name}")
            args = [
                "train",
                *(str(f) for f in files),
                "--algo",
                algo,
                "--reward",
                reward,
                "--steps",
                str(self.s.steps),
                "--seed",
                str(u.seed),
                *(["--encoder", self.s.encoder] if self.s.encoder else []),
                *(["--init", str(init)] if init else []),
                "--out",
                str(ckpt),
                "--json",
            ]
            if base["detour_penalty"]:
                args += ["--detour-penalty", str(base["detour_penalty"])]
            if base.get("augment"):
                args += ["--augment", str(base["augment"])]
            if algo == "bc":
                args += ["--set", f"filter={base.get('bc_filter', 'success')}"]
            for kv in settings:
                args += ["--set", kv]
            _out, wall, cpu = self.timed(edgejudge, *args)
            train_info = {"train_seconds": round(wall, 1), "train_cpu_seconds": round(cpu, 1)}
            timing.write_text(json.dumps(train_info))
        elif timing.exists():
            train_info = json.loads(timing.read_text())
        if not (bundle / "manifest.json").is_file():
            self.log(f"{u.world.label}: export {ckpt.name}")
            edgejudge("export", str(ckpt), "--out", str(bundle), "--json")
        return train_info

    def _drop_if_choice_changed(self, u: Unit, wanted: str, ckpt: Path, bundle: Path) -> None:
        """For an ``auto`` source, a checkpoint trained on another channel than ``wanted`` (the one now
        recorded for its file: it was audited again) is removed with its bundle, so it is trained again: the
        rows name the recorded channel, and must be of a policy that learned it."""
        meta = ckpt / "checkpoint.json"
        if SOURCES[u.source].reward != AUTO or not meta.is_file():
            return
        had = json.loads(meta.read_text()).get("reward")
        if had != wanted:
            self.log(f"{u.world.label}: {ckpt.name} learned {had}, the choice is now {wanted}: train again")
            shutil.rmtree(ckpt)
            shutil.rmtree(bundle, ignore_errors=True)

    def run_unit(self, u: Unit) -> None:
        wd = self.data(u.world)
        ckpt, bundle = self.unit_files(u)
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
        if info["train_successes"] == 0 and RECIPES[u.algo].algo == "bc":
            for r in todo:
                self.put(r, {"status": "skipped", "reason": "no successful episode to clone", **info})
            return
        train_info = self.fit(u, data, ckpt, bundle)
        extra = {**info, **train_info, "label_quality": wd.label_quality(u.source, u.episodes)}
        self.evaluate(u, bundle, todo, extra)
        if not self.keep_bundles and all(self.done(r) for r in u.rows):
            shutil.rmtree(bundle, ignore_errors=True)

    def evaluate(self, u: Unit, bundle: Path, todo: list[dict[str, Any]], extra: dict[str, Any]) -> None:
        """Rows ``todo`` of ``bundle`` (unit ``u``'s configuration): its gold-path decisions, then each row's
        test episodes, through edge-serve first; each row stored with ``extra``."""
        base = u.rows[0]
        wd = self.data(u.world)
        decisions = self.decisions(wd, bundle, base["test_episodes"])
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
            res = {**_summary(json.loads(out)), **extra, "gold_decisions": decisions}
            res.update(eval_seconds=round(wall, 1), eval_cpu_seconds=round(cpu, 1))
            if r["runner"] != "edge-serve":
                res["agrees_with_edge_serve"] = self.agreement(r, res)
            self.put(r, res)

    def agreement(self, row: dict[str, Any], res: dict[str, Any]) -> dict[str, Any] | None:
        """Episodes on which the in-process runner and edge-serve (same bundle, same client) had the same
        outcome and length."""
        twin = self.store.get({**row, "runner": "edge-serve"})
        if not twin or twin.get("status") != "ok":
            return None
        mine = res["per_episode"]
        if "per_episode" in twin:
            same = sum(a == b for a, b in zip(twin["per_episode"], mine, strict=False))
        elif twin.get("episodes_sha") == episodes_digest(mine):  # the twin's arrays stayed where it ran
            same = len(mine)
        else:  # ... and they differ somewhere: how many episodes is not known here
            return {"episodes_equal": None, "of": len(mine)}
        return {"episodes_equal": same, "of": len(mine)}

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

    def run(self, after_units: Callable[[World], None] | None = None) -> list[dict[str, Any]]:
        """Compute every unfinished row; the plan's rows (configurations) in order. ``after_units(world)``
        runs after a world's trained rows (the loop's rounds, :class:`policy.matrix.rounds.Rounds`)."""
        plan: list[dict[str, Any]] = []
        for w in self.worlds:
            us, bs = units(w, self.s), baseline_rows(w, self.s)
            mine = (
                [r for u in us for r in u.rows] + bs + [r for ru in round_units(w, self.s) for r in ru.rows]
            )
            plan += mine
            if all(self.done(r) for r in mine):
                for u in us if not self.baselines_only else []:
                    self.run_unit(u)  # only fills in what finished rows lack
                if after_units is not None and not self.baselines_only:
                    after_units(w)  # only fills in what finished rows lack
                continue
            try:
                for cfg in bs:
                    if cfg["algo"] == "random":
                        self.run_baseline(cfg, w)
                for u in us if not self.baselines_only else []:
                    self.run_unit(u)
                if after_units is not None and not self.baselines_only:
                    after_units(w)
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
