"""The matrix's loop: each trained policy deployed, its episodes logged, labeled with everything before, and
trained on again, round after round (``edgejudge matrix --rounds N``).

Round 0 is a trained policy of the matrix (its unit, :mod:`policy.matrix.run`). Round ``r`` deploys
round ``r - 1``'s bundle through edge-serve on the train split (``edgejudge collect --policy BUNDLE
--serve``: the client, loop guard and log writer a robot uses, exploring at ``--round-temperature``), merges
the training file and every round's log so far into one file labeled for the unit's source
(:meth:`policy.matrix.data.WorldData.round_training_file`), trains the unit's recipe on it (from round
``r - 1``'s checkpoint with ``--round-init``; with the recipe's ``--round-set`` settings), exports and
evaluates it like any row. Each learner lives on its own data: BC on the successes is self-imitation
(expert iteration), IQL and the recipes on the labels learn from their own near-misses. Beside the rounds of
a policy on labels, BC on as many expert episodes as its training file has successful ones (the fair
imitation baseline of that round).

A round's files are kept under ``WORK/WORLD/rounds/UNIT/``: ``log-R.jsonl`` (the robot's plain JSON
Lines, collected under a temporary name and renamed once complete), ``train-R.jsonl.gz``, the checkpoint and
the bundle. Rows are stored as they finish; a round whose rows are all stored is not recomputed, but its
files are remade (deterministically, the same seeds) when a later round needs them and they are gone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import click

from models.cli_run import edgejudge
from policy.matrix.data import file_label_quality, short_hash
from policy.matrix.plan import (
    EXPERT,
    RoundUnit,
    Unit,
    World,
    extends_rubric,
    loop_settings,
    round_settings,
    round_units,
    unit,
)
from policy.matrix.recipes import SOURCES
from policy.matrix.run import Matrix
from policy.matrix.store import row_key

ROUND_SEED = 1000
"""Round ``r`` of a policy trained with seed ``s`` collects with seed ``collect_seed + ROUND_SEED * r + s``:
other games each round, the same games on a rerun."""


def deployed_stats(log: Path) -> dict[str, Any]:
    """What the robot saw: the deployed policy's own episodes in ``log``."""
    from models.trajectory import read_trajectories

    trajs = read_trajectories(log)
    succ = sum(t.success for t in trajs)
    return {
        "episodes": len(trajs),
        "successes": succ,
        "success_rate": succ / len(trajs),
        "mean_steps": sum(len(t.steps) for t in trajs) / len(trajs),
    }


class Rounds:
    """The rounds of one matrix run: ``m``'s store, work folder and steps."""

    def __init__(self, m: Matrix):
        self.m, self.s = m, m.s

    def folder(self, u: Unit) -> Path:
        base = {k: v for k, v in u.rows[0].items() if k not in ("client", "runner")}
        base |= loop_settings(self.s, u.algo, u.source)
        d = self.m.data(u.world).dir / "rounds" / f"{u.name}-{short_hash(base)}"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def run(self, w: World) -> None:
        """Every round of world ``w`` not stored yet, in round order per policy, each followed by its matched
        imitation baseline."""
        rounds = round_units(w, self.s)
        firsts = [ru.unit for ru in rounds if ru.round == 1]
        for u in firsts:  # round 0's baseline: as many expert episodes as the training file's successes
            for matched in matched_experts(self.s, [self.m.store.get(r) or {} for r in u.rows], w):
                self.m.run_unit(matched)
        for i, ru in enumerate(rounds):
            later = [x for x in rounds[i:] if x.unit == ru.unit]
            if not all(self.m.done(r) for x in later for r in x.rows):
                self.run_round(ru)
            for u in matched_experts(self.s, [self.m.store.get(r) or {} for r in ru.rows], w):
                self.m.run_unit(u)

    def bundle(self, u: Unit, r: int) -> tuple[Path, Path]:
        """(checkpoint, bundle) of round ``r`` of ``u``'s loop, made if they are not there (round 0: the
        unit's own, trained and exported as the matrix does)."""
        if r == 0:
            ckpt, bundle = self.m.unit_files(u)
            if not (bundle / "manifest.json").is_file():
                data, _info = self.m.data(u.world).training_file(u.source, u.episodes)
                self.m.fit(u, data, ckpt, bundle)
            return ckpt, bundle
        ru = next(x for x in round_units(u.world, self.s) if x.unit == u and x.round == r)
        self.run_round(ru, evaluate=False)
        d = self.folder(u)
        return d / f"ckpt-{r}", d / f"bundle-{r}"

    def log(self, u: Unit, r: int) -> Path:
        """Round ``r``'s log: round ``r - 1``'s bundle deployed on the train split."""
        path = self.folder(u) / f"log-{r}.jsonl"
        if path.exists():
            return path
        _ckpt, prev = self.bundle(u, r - 1)
        partial = path.with_name(f"log-{r}.partial.jsonl")
        partial.unlink(missing_ok=True)  # an earlier run cut short: its episodes are not this round's
        w = u.world
        self.m.log(f"{w.label}: round {r} of {u.name}: {self.s.round_episodes} episodes of its policy")
        out, wall, _cpu = self.m.timed(
            edgejudge,
            "collect", *w.spec_args(), "--policy", str(prev), "--serve",
            "--temperature", str(self.s.round_temperature), "--split", "train",
            "--episodes", str(self.s.round_episodes), "--max-steps", str(w.max_steps),
            "--seed", str(self.s.collect_seed + ROUND_SEED * r + u.seed), "--no-progress",
            "--out", str(partial),
        )  # fmt: skip
        partial.replace(path)
        (path.parent / f"log-{r}.timing.json").write_text(json.dumps({"collect_seconds": round(wall, 1)}))
        return path

    def run_round(self, ru: RoundUnit, *, evaluate: bool = True) -> None:
        """Round ``ru.round`` of ``ru.unit``'s loop: its log, training file, checkpoint and bundle, then (with
        ``evaluate``) its rows not stored yet and the matched expert baseline."""
        u, r = ru.unit, ru.round
        d = self.folder(u)
        ckpt, bundle = d / f"ckpt-{r}", d / f"bundle-{r}"
        todo = [row for row in ru.rows if not self.m.done(row)] if evaluate else []
        if (bundle / "manifest.json").is_file() and not todo:
            return
        try:
            logs = [self.log(u, k) for k in range(1, r + 1)]
            data, info = self.m.data(u.world).round_training_file(
                u.source, u.episodes, logs, d / f"train-{r}.jsonl.gz", extend=extends_rubric(self.s, u.source)
            )
        except click.ClickException as e:
            reason = f"round {r}: {e.message.strip().splitlines()[-1]}"
            for row in todo:
                self.m.put(row, {"status": "error", "reason": reason})
            return
        init = d / f"ckpt-{r - 1}" if r > 1 else self.m.unit_files(u)[0]
        warm = init if self.s.round_init else None
        train_info = self.m.fit(u, data, ckpt, bundle, init=warm, settings=round_settings(self.s, u.algo))
        if not todo:
            return
        timing = d / f"log-{r}.timing.json"
        extra = {
            **info,
            **train_info,
            **(json.loads(timing.read_text()) if timing.exists() else {}),
            "deployed": deployed_stats(logs[-1]),
            "label_quality": round_label_quality(data, u.source),
        }
        self.m.evaluate(u, bundle, todo, extra)
        if not self.m.keep_bundles and r > 1:  # the next round deploys this one: keep it, drop the one before
            shutil.rmtree(d / f"bundle-{r - 1}", ignore_errors=True)


def round_label_quality(data: Path, source: str) -> dict[str, Any] | None:
    """The labels of a round's training file (per-step AUROC against score progress and the gold path, the
    label check's verdict), as the matrix records them for its files; None for the success flag. Cached
    beside the file."""
    return file_label_quality(data, source) if SOURCES[source].dense else None


def matched_experts(s, rows: list[dict[str, Any]], w: World) -> list[Unit]:
    """The imitation baselines of a round's stored ``rows``: for a policy on labels (a dense source), BC on
    as many expert episodes as its training file had successful ones (when the plan trains BC at all)."""
    out = []
    for row in rows:
        n = row.get("train_successes") if row.get("status") == "ok" else None
        cfg = row.get("config", {})
        if n and "bc" in s.algos and SOURCES.get(cfg.get("source", ""), SOURCES["sparse"]).dense:
            u = unit(w, s, "bc", EXPERT, int(n), int(cfg["seed"]))
            if u not in out:
                out.append(u)
    return out


def matched_expert_rows(s, stored: list[dict[str, Any]], worlds: list[World]) -> list[dict[str, Any]]:
    """The configurations of the matched imitation baselines of every stored row of this plan's loops, their
    round 0 included (``stored``: the store's rows; the rows of other loops in the same file, with other round
    settings, are not this plan's), for the plan a report reads."""
    by_label = {w.label: w for w in worlds}
    looped = {
        row_key(r) for w in worlds for ru in round_units(w, s) for r in (*ru.unit.rows, *ru.rows)
    }  # every round of every looped policy, round 0 included
    out: list[dict[str, Any]] = []
    for row in stored:
        cfg = row.get("config", {})
        if row_key(cfg) in looped and cfg.get("world") in by_label:
            for u in matched_experts(s, [row], by_label[cfg["world"]]):
                out += [r for r in u.rows if r not in out]
    return out
