"""The label grid (``edgejudge matrix labels``): how well each label method ranks the steps of each world's
log, in each log shape, before any policy is trained on it.

A row is one (world, log shape, label method, episodes) on the matrix's cached steps (:class:`WorldData`): a
pool collected on the held-out split (or a given log, ``--pool``), its success-scarce cut, the cut in the log
shape (``full``: the adapter's states and layout; ``plain``: flattened into text without a layout;
``response``: the last response and the inventory line), labeled as a user labels it (``trca`` the shipped
rubric of the task type, ``trca-built`` one judge-built rubric per task type of the file, ``coren``,
``potential``), beside two baselines that need no labels: ``sparse`` (the environment's reward) and
``success`` (each step carrying its episode's success flag, what BC on the successes weighs by). Each row
holds per-step AUROC against score progress and the gold path (``info``, read only here), every channel of its
method, and the label check's verdict from the success flags alone. With several worlds, a ``pooled`` row per
(shape, method, episodes) measures the worlds' labeled files together.

Rows are keyed by their configuration in the matrix's row store (one JSON file, atomic rewrite after each
row), so a second run computes only what is missing, and the files of every step are reused from the work
folder.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from policy.matrix.data import WorldData, channel_of, label_summary
from policy.matrix.labels_audit import TRUTH, TruthAuditor, audit_log, audited, choice_report, stale
from policy.matrix.plan import Sizes, World, episode_source
from policy.matrix.store import FINAL, RowStore

METHODS = ("sparse", "success", "potential", "trca", "trca-built", "coren")
"""Label methods, baselines first."""

METHOD_NAMES = {
    "sparse": "env reward (sparse)",
    "success": "own success flag",
    "potential": "potential (no judge)",
    "trca": "TRCA, shipped rubric",
    "trca-built": "TRCA, judge-built rubric",
    "coren": "COREN",
}
SHAPE_NAMES = {
    "full": "full-state log (the adapter's layout)",
    "plain": "plain text (flattened, no layout)",
    "response": "response-only log (last response + inventory)",
}
POOLED = "pooled"
_PER_WORLD = ("env", "params", "max_steps", "pool")
"""The keys of a world's rows that a pooled row lists per world."""


def row_config(w: World, s: Sizes, shape: str, method: str, n: int) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "kind": "labels",
        "world": w.label,
        "env": w.env,
        "params": w.key_params,
        "max_steps": w.max_steps,
        "split": s.split,
        **episode_source(w, s),
        "max_success_rate": s.max_success_rate,
        "episodes": n,
        "shape": shape,
        "method": method,
    }
    if method in ("trca-built", "coren"):
        cfg["judge"] = s.judge
    if method == "coren":
        cfg["coren_prompts"] = s.coren_prompts
    if s.audit_steps and audited(method):
        cfg["audit_steps"] = s.audit_steps
        if s.auditor == TRUTH:
            cfg["auditor"] = TRUTH
        else:
            cfg["judge"] = s.judge
    return cfg


def plan(worlds: Sequence[World], s: Sizes, shapes: Sequence[str], methods: Sequence[str]) -> list[dict]:
    """Every row: world x shape x method x episodes (COREN up to ``s.coren_max_episodes``), then one pooled
    row per (shape, method, episodes) when there are several worlds."""
    rows = []
    for shape in shapes:
        for n in s.sizes:
            for method in methods:
                if method == "coren" and n > s.coren_max_episodes:
                    continue
                per_world = [row_config(w, s, shape, method, n) for w in worlds]
                rows += per_world
                if len(worlds) > 1:
                    # a pooled row is never audited
                    first = row_config(worlds[0], replace(s, audit_steps=0), shape, method, n)
                    rows.append(
                        {
                            **{k: v for k, v in first.items() if k not in _PER_WORLD},
                            "world": POOLED,
                            "worlds": [r["world"] for r in per_world],
                            "world_configs": [[r[k] for k in _PER_WORLD if k in r] for r in per_world],
                        }
                    )
    return rows


def done(store: RowStore, cfg: dict[str, Any]) -> bool:
    row = store.get(cfg)
    return row is not None and row.get("status") in FINAL and not (cfg.get("audit_steps") and stale(row))


def run(
    store: RowStore,
    rows: Sequence[dict[str, Any]],
    worlds: Sequence[World],
    s: Sizes,
    work: Path,
    log: Callable[[str], None],
) -> int:
    """Compute the rows not finished in ``store``; how many were computed. A row whose step fails is stored
    as ``error`` with the reason (retried by the next run); a pooled row waits for its worlds' rows."""
    data = {w.label: WorldData(work, w, s, log) for w in worlds}
    judge = TruthAuditor() if s.auditor == TRUTH else _LazyJudge(s.judge)
    computed = 0
    try:
        for cfg in rows:
            if done(store, cfg):
                continue
            t0 = time.perf_counter()
            result = _result(cfg, store, data, s, judge)
            result["seconds"] = round(time.perf_counter() - t0, 1)
            store.put(cfg, result)
            computed += result["status"] == "ok"
            what = f"{cfg['world']} {cfg['shape']} {cfg['method']} n={cfg['episodes']}"
            if result["status"] == "ok":
                log(
                    f"{what}: per-step AUROC vs progress {_f(result['auroc_progress'])}, "
                    f"check {result['check'] or '-'}"
                )
            else:
                log(f"{what}: error: {result['reason'].splitlines()[-1] if result['reason'] else ''}")
    finally:
        judge.close()
    return computed


def _result(
    cfg: dict[str, Any], store: RowStore, data: dict[str, WorldData], s: Sizes, judge
) -> dict[str, Any]:
    """One row's figures (and its judge's audit when the row asks for one); a failed step's reason instead."""
    from models.trajectory import read_trajectories

    shape, method, n = cfg["shape"], cfg["method"], cfg["episodes"]
    try:
        if cfg["world"] == POOLED:
            missing = [w for w in cfg["worlds"] if not _ok(store, row_config(data[w].w, s, shape, method, n))]
            if missing:
                raise RuntimeError(f"no labels of {', '.join(missing)}")
            trajs = [
                t
                for w in cfg["worlds"]
                for t in read_trajectories(data[w].training_file(method, n, shape)[0])
            ]
        else:
            path, _ = data[cfg["world"]].training_file(method, n, shape)
            trajs = read_trajectories(path)
        result = {"status": "ok", **label_summary(trajs, channel_of(method))}
        if cfg.get("audit_steps"):
            result["audit"] = audit_log(trajs, result["channel"], judge, cfg["audit_steps"], s.collect_seed)
        return result
    except Exception as e:  # a failed command or a file too small for the method: said in the row
        return {"status": "error", "reason": str(e).strip()[-600:]}


class _LazyJudge:
    """The judge of the audits, loaded at the first audited row and kept for the rest of the run."""

    def __init__(self, ref: str) -> None:
        from labeler.audit.judge_audit import auditor_name

        self.ref, self.by, self._judge = ref, auditor_name(ref), None

    def audit(self, trajectories, refs):
        """The judge's marks of the steps ``refs`` (:func:`labeler.audit.judge_audit.judge_audit`)."""
        from labeler.audit.judge_audit import judge_audit

        if self._judge is None:
            from labeler.judge import open_judge
            from labeler.trca.pipeline import default_cache

            self._judge = open_judge(self.ref, cache=default_cache())
        return judge_audit(trajectories, refs, self._judge, self.by)

    def close(self) -> None:
        if self._judge is not None:
            self._judge.close()
            self._judge = None


def _ok(store: RowStore, cfg: dict[str, Any]) -> bool:
    return (store.get(cfg) or {}).get("status") == "ok"


def _f(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def cell(row: dict[str, Any] | None) -> str:
    """``progress / gold (verdict)``; ``n/a`` for a row without a figure, ``error`` for a failed one."""
    if row is None:
        return ""
    if row.get("status") != "ok":
        return "error"
    text = f"{_f(row['auroc_progress'])} / {_f(row['auroc_gold'])}"
    return text + (f" ({row['check']})" if row.get("check") else "")


def markdown(store: RowStore, rows: Sequence[dict[str, Any]]) -> str:
    """One table per log shape: a line per world (and pooled) and episodes, a column per method; then the
    shapes side by side per method, and the rows without a result."""
    rows = list(rows)
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    lines = [
        "Per-step AUROC of each method's labels against score progress / the gold path (ground truth from "
        "`info`, read only here); in brackets the label check from the success flags alone (`label quality "
        "--check`).",
        "",
    ]
    for shape in shapes:
        lines += [
            f"### {SHAPE_NAMES[shape]}",
            "",
            "| world | episodes | steps (progress) | successes | "
            + " | ".join(f"{METHOD_NAMES[m]}: {_channel(m)}" for m in methods)
            + " |",
            "|---|---|---|---|" + "---|" * len(methods),
        ]
        keys = list(dict.fromkeys((r["world"], r["episodes"]) for r in rows if r["shape"] == shape))
        for world, n in keys:
            found = {
                r["method"]: store.get(r)
                for r in rows
                if (r["world"], r["episodes"], r["shape"]) == (world, n, shape)
            }
            ok = next((v for v in found.values() if v and v.get("status") == "ok"), None)
            counts = f"{ok['steps']} ({ok['progress_steps']}) | {ok['successes']}" if ok else " | "
            name = world
            if world == POOLED:
                name = f"pooled, {len(next(r for r in rows if r['world'] == world)['worlds'])} worlds"
            lines.append(
                f"| {name} | {ok['trajectories'] if ok else n} | {counts} | "
                + " | ".join(cell(found.get(m)) for m in methods)
                + " |"
            )
        lines.append("")
    if len(shapes) > 1:
        lines += [
            "### Log shapes side by side (per-step AUROC vs score progress)",
            "",
            "| world | episodes | method | " + " | ".join(shapes) + " |",
            "|---|---|---|" + "---|" * len(shapes),
        ]
        by_key = {(r["world"], r["episodes"], r["method"], r["shape"]): store.get(r) for r in rows}
        for world, n, m in dict.fromkeys(k[:3] for k in by_key):
            got = [by_key.get((world, n, m, shape)) for shape in shapes]
            vals = [_f(g["auroc_progress"]) if g and g.get("status") == "ok" else "" for g in got]
            lines.append(f"| {world} | {n} | {METHOD_NAMES[m]} | " + " | ".join(vals) + " |")
        lines.append("")
    lines += agreement(store, rows)
    lines += choice_report(store, rows)
    missing = [r for r in rows if not _ok(store, r)]
    if missing:
        lines += ["Rows without a result:", ""]
        for r in missing:
            got = store.get(r)
            reason = (got or {}).get("reason") or ""
            last = reason.strip().splitlines()[-1].strip() if reason.strip() else ""
            why = "not run" if got is None else f"{got['status']}: {last}"
            lines.append(f"- {r['world']} {r['shape']} {r['method']} n={r['episodes']}: {why}")
        lines.append("")
    return "\n".join(lines)


CREDIT_FLOOR = 0.65
"""Per-step AUROC below which a channel's step credit is too poor to be called separating."""


def agreement(store: RowStore, rows: Sequence[dict[str, Any]]) -> list[str]:
    """The label check's verdicts against the per-step AUROC of the same rows (each world's logs, not the
    pooled ones): how often each verdict went to step credit below and above :data:`CREDIT_FLOOR`, and
    every ``separates`` below it."""
    got = [
        (r, v)
        for r in rows
        if r["world"] != POOLED
        and (v := store.get(r))
        and v.get("status") == "ok"
        and v.get("check")
        and v.get("auroc_progress") is not None
    ]
    if not got:
        return []
    verdicts = list(dict.fromkeys(v["check"] for _, v in got))
    lines = [
        "### The label check against per-step AUROC",
        "",
        f"| verdict | rows | per-step AUROC < {CREDIT_FLOOR} | >= {CREDIT_FLOOR} | per-step AUROC range |",
        "|---|---|---|---|---|",
    ]
    for verdict in verdicts:
        a = sorted(v["auroc_progress"] for _, v in got if v["check"] == verdict)
        low = sum(x < CREDIT_FLOOR for x in a)
        lines.append(f"| {verdict} | {len(a)} | {low} | {len(a) - low} | {a[0]:.3f}-{a[-1]:.3f} |")
    wrong = [(r, v) for r, v in got if v["check"] == "separates" and v["auroc_progress"] < CREDIT_FLOOR]
    lines.append("")
    lines += [
        f"- `separates` on step credit below {CREDIT_FLOOR}: {r['world']} {r['shape']} {r['method']} "
        f"{v['auroc_progress']:.3f} (check {_f(v['check_auroc'])}, without the last step "
        f"{_f(v.get('check_body_auroc'))}, over the first steps {_f(v.get('check_prefix_auroc'))}, moves vs "
        f"idle steps {_f(v.get('check_anchor_auroc'))})"
        for r, v in wrong
    ] or [f"- `separates` never went to step credit below {CREDIT_FLOOR}."]
    return [*lines, ""]


def _channel(method: str) -> str:
    return "flag" if method == "success" else channel_of(method)
