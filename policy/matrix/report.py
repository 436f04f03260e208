"""The matrix's Markdown tables from the rows of one plan (``edgejudge matrix``; its PNG:
:mod:`policy.matrix.plot`).

Seeds are pooled per configuration: the success rate is the mean over seeds (each seed's rate is listed), the
95 % interval is Wilson's over all the configuration's episodes, the spread is the seeds' min-max.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from models.settings import atomic_write
from policy.matrix.groups import (
    HEADLINE,
    ORDER,
    ROW_NAMES,
    TRAINED,
    cell,
    expert_sizes,
    find,
    find_expert,
    pct,
    plan_worlds,
    table,
    trained_sizes,
    with_ceiling,
    world_ceiling,
)
from policy.matrix.plot import plot
from policy.matrix.recipes import SOURCES, dense_sources
from policy.matrix.rounds_report import rounds_markdown, rounds_plot
from policy.matrix.store import RowStore


def _headline(agg, plan, top: int, targets) -> list[list[str]]:
    """Per world: every trained row at the largest size (guard and argmax via edge-serve), the imitation
    ceiling at each of its sizes, random, LLM."""
    body = []
    for w in plan_worlds(plan):
        name = w["world"]
        metric, target = targets.get(name, ("success", None))
        expert = expert_sizes(agg, name)
        for algo, src, n in ((a, s, n) for a, s in ORDER for n in (expert if s == "expert" else [top])):
            runner = "in-process" if algo in ("random", "llm-agent") else "edge-serve"
            n = 0 if runner == "in-process" else n
            guard = find(agg, name, algo, src, n, "guard", runner)
            argmax = find(agg, name, algo, src, n, "argmax", runner)
            g = guard or argmax
            if g is None:
                continue
            verdict = ""
            if target is not None and guard is not None and runner == "edge-serve" and src != "expert":
                value = guard["mean"] if metric == "success" else (guard["score"] or 0.0)
                verdict = f"{'met' if value >= target else 'missed'}: {metric} {value:.2f} vs {target:.2f}"
            score = "" if g["score"] is None else f"{g['score']:.2f}"
            label = ROW_NAMES[(algo, src)] + (f", {n} episodes" if src == "expert" else "")
            body.append(
                [
                    name,
                    label,
                    cell(guard),
                    cell(argmax),
                    score,
                    str(g["episodes"]),
                    verdict,
                ]
            )
    return body


def _decision_tables(rows: Sequence[dict[str, Any]], min_decisions: int = 20) -> list[str]:
    """Per world, the ceiling bundle's per-decision accuracy on the test gold paths, per verb (verbs with
    fewer than ``min_decisions`` decisions summed in one row)."""
    seen: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        if r.get("gold_decisions") and r.get("source") == "expert":
            seen.setdefault((r["world"], r["train_episodes"], r["seed"]), r["gold_decisions"])
    if not seen:
        return []
    lines = [
        "",
        "### Where the imitation ceiling fails: per-decision accuracy on the test gold paths, per verb",
        "",
        f"`edgejudge decisions BUNDLE GOLD`; verbs with fewer than {min_decisions} decisions are summed in "
        "one row; *later*: misses that pick an action the gold path takes at a later step (another order); "
        "*instead*: the verbs picked when wrong.",
        "",
    ]
    body = []
    for (world, n, seed), d in sorted(seen.items()):
        rest = [0, 0, 0]
        counted = all("later" in v for v in d["verbs"].values())  # rows stored before it was counted: not
        for verb, v in sorted(d["verbs"].items(), key=lambda kv: -kv[1]["decisions"]):
            if v["decisions"] < min_decisions:
                rest[0] += v["decisions"]
                rest[1] += v["right"]
                rest[2] += v.get("later", 0)
                continue
            # the most frequent first: the stored rows keep their keys sorted, not in the order counted
            picks = sorted(v["wrong_picks"].items(), key=lambda kc: -kc[1])[:3]
            instead = ", ".join(f"{k} {c}" for k, c in picks)
            body.append(
                [
                    f"{world} (n={n}, seed {seed})",
                    verb,
                    str(v["decisions"]),
                    f"{v['accuracy']:.3f}",
                    str(v["later"]) if counted else "",
                    instead,
                ]
            )
        if rest[0]:
            body.append(
                [
                    f"{world} (n={n}, seed {seed})",
                    "(rarer verbs)",
                    str(rest[0]),
                    f"{rest[1] / rest[0]:.3f}",
                    str(rest[2]) if counted else "",
                    "",
                ]
            )
        body.append(
            [
                f"{world} (n={n}, seed {seed})",
                "**all**",
                str(d["decisions"]),
                f"{d['accuracy']:.3f}",
                str(sum(v["later"] for v in d["verbs"].values())) if counted else "",
                "",
            ]
        )
    return lines + table(["world", "verb", "decisions", "accuracy", "later", "instead"], body)


def _verbs(group: dict[str, Any]) -> dict[str, list[int]] | None:
    """A group's gold-path decisions pooled over the seeds that recorded them: verb -> [right, decisions]
    (None when none did)."""
    out: dict[str, list[int]] = {}
    for r in group["rows"]:
        d = r.get("gold_decisions")
        if not d:
            continue
        for verb, v in d["verbs"].items():
            acc = out.setdefault(verb, [0, 0])
            acc[0] += v["right"]
            acc[1] += v["decisions"]
    return out or None


def _best(agg, world: str, n: int, dense: bool) -> tuple[tuple[str, str], dict[str, Any]] | None:
    """The most successful trained row (edge-serve, guard) of a world and size with gold-path decisions,
    among the dense-label rows or the success-flag rows."""
    found = []
    for algo, src in TRAINED:
        g = find(agg, world, algo, src, n, *HEADLINE)
        if g is not None and SOURCES[src].dense == dense and _verbs(g) is not None:
            found.append(((algo, src), g))
    return max(found, key=lambda x: x[1]["mean"], default=None)


def _same_size_expert(agg, world: str, group: dict[str, Any]) -> dict[str, Any] | None:
    """The BC row on as many expert episodes as ``group``'s training file has successes (None: not run)."""
    successes = next((r["train_successes"] for r in group["rows"] if r.get("train_successes")), None)
    return find_expert(agg, world, successes) if successes else None


def _verb_gap_tables(agg, plan, top: int, min_decisions: int = 20) -> list[str]:
    """Per world: per-verb decision accuracy on the test gold paths of the imitation ceiling, the best
    dense-label row and the best success-flag row: which decisions the labels win back and which stay
    capped."""
    body = []
    for w in plan_worlds(plan):
        world = w["world"]
        ceil = world_ceiling(agg, world)
        dense, sparse = _best(agg, world, top, True), _best(agg, world, top, False)
        if dense is None:
            continue
        same = _same_size_expert(agg, world, dense[1])
        cols = [_verbs(ceil[1]) if ceil else None, _verbs(same) if same else None, _verbs(dense[1])]
        cols.append(_verbs(sparse[1]) if sparse else None)
        verbs = sorted(
            {v for c in cols if c for v, (_, n) in c.items() if n >= min_decisions},
            key=lambda v: (-max(c[v][1] for c in cols if c and v in c), v),
        )
        names = f"{ROW_NAMES[dense[0]]} ({pct(dense[1]['mean'])})" + (
            f" / {ROW_NAMES[sparse[0]]} ({pct(sparse[1]['mean'])})" if sparse else ""
        )
        for i, verb in enumerate([*verbs, "**all**"]):
            cells = []
            for c in cols:
                if c is None:
                    cells.append("")
                    continue
                right, n = (
                    [sum(x[0] for x in c.values()), sum(x[1] for x in c.values())]
                    if verb == "**all**"
                    else c.get(verb, [0, 0])
                )
                cells.append(f"{right / n:.2f} ({n})" if n else "")
            body.append([f"{world}: {names}" if i == 0 else "", verb, *cells])
    if not body:
        return []
    return [
        "",
        f"### Where the labels help: per-verb decisions on the test gold paths ({top} episodes)",
        "",
        "`edgejudge decisions` of each row's policy on the gold paths of the same test games, pooled over "
        "the seeds that recorded them (accuracy, decisions): the imitation ceiling, BC on as many expert "
        "episodes as the training file has successes (what the failed episodes have to add to), the best "
        "dense-label row and the best success-flag row of each world (named first); verbs with at least "
        f"{min_decisions} decisions.",
        "",
        *table(
            [
                "world: best dense / best sparse",
                "verb",
                "ceiling",
                "as many expert",
                "best dense",
                "best sparse",
            ],
            body,
        ),
    ]


def _label_table(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The labels behind the rows: per training file and source, the reward channel's per-step AUROC and
    success separation."""
    seen: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        if r.get("label_quality"):
            seen.setdefault((r["world"], r["train_episodes"], r["source"]), r["label_quality"])
    if not seen:
        return []

    def f(x: float | None) -> str:
        return "" if x is None else f"{x:.3f}"

    body = [
        [world, str(n), src, q["channel"], f(q["auroc_progress"]), f(q["auroc_gold"]),
         f"{q['check']} ({f(q['check_auroc'])})" if q.get("check") else ""]
        for (world, n, src), q in sorted(seen.items())
    ]  # fmt: skip
    return [
        "",
        "### The labels behind the rows",
        "",
        "Each training file's reward channel: per-step AUROC against score progress and the gold path "
        "(`edgejudge label quality`), and the success separation of its mean per episode "
        "(`label quality --check`: *in-sample* when the labels were fit on the same flags).",
        "",
        *table(["world", "episodes", "source", "channel", "AUROC progress", "AUROC gold", "check"], body),
    ]


def _size_tables(agg, plan: Sequence[dict[str, Any]], sizes: list[int]) -> list[str]:
    """Per client, every trained row's success against the training episodes."""
    lines: list[str] = []
    for client in ("guard", "argmax"):
        body = []
        for w in plan_worlds(plan):
            for algo, src in TRAINED:
                cells = [cell(find(agg, w["world"], algo, src, n, client, "edge-serve")) for n in sizes]
                if any(cells):
                    body.append([w["world"], ROW_NAMES[(algo, src)], *cells])
        if body:
            lines += ["", f"### Success against training episodes (edge-serve, {client})", ""]
            lines += table(["world", "row", *(f"{n} episodes" for n in sizes)], body)
    return lines


def _dense_minus_sparse(agg, plan: Sequence[dict[str, Any]], sizes: list[int]) -> list[str]:
    """IQL on each dense source minus IQL on the success flag, same data, in points."""
    body = []
    for w in plan_worlds(plan):
        for src in dense_sources():
            cells = []
            for n in sizes:
                d, s = (find(agg, w["world"], "iql", x, n, *HEADLINE) for x in (src, "sparse"))
                cells.append(f"{100 * (d['mean'] - s['mean']):+.0f}" if d and s else "")
            if any(cells):
                body.append([w["world"], src, *cells])
    if not body:
        return []
    title = "### Dense labels minus sparse on the same data (IQL, edge-serve + loop guard), points"
    return ["", title, "", *table(["world", "source", *(f"{n} episodes" for n in sizes)], body)]


def markdown(
    store: RowStore,
    plan: Sequence[dict[str, Any]],
    targets: dict[str, tuple[str, float]],
    ceiling: Sequence[dict[str, Any]] = (),
) -> str:
    """The report of ``plan``'s rows in ``store``; ``ceiling``: imitation-ceiling rows of another results
    file (BC on expert episodes of the same worlds), shown beside them."""
    rows = store.select(plan)
    agg = with_ceiling(rows, ceiling)
    meta = store.meta
    sizes = trained_sizes(plan)
    top = max(sizes) if sizes else 0
    lines = [
        f"Benchmark matrix ({meta.get('size', '?')} size): `{meta.get('command', '')}`; "
        f"{meta.get('machine', '')}.",
        "",
        "Success on the test split with a Wilson 95 % interval over all seeds' episodes (with several seeds: "
        "the mean over seeds, then each seed's rate). Trained rows are the exported bundle served by "
        "edge-serve and driven by edgejudge eval --serve: *guard* is the client's generic loop guard "
        "(keyed by the adapter's world key), *argmax* the daemon's answer at every step. Random and the "
        "LLM-as-agent (the judge picking by log-prob) run in process.",
        "",
        f"### {top} training episodes",
        "",
    ]
    lines += table(
        ["world", "row", "+ loop guard", "argmax", "mean score", "episodes", "target (guard)"],
        _headline(agg, plan, top, targets),
    )
    lines += _size_tables(agg, plan, sizes)
    lines += _dense_minus_sparse(agg, plan, sizes)
    lines += _verb_gap_tables(agg, plan, top)
    lines += _label_table(rows)
    lines += _decision_tables(rows)
    checks = [r for r in rows if r.get("runner") == "in-process" and r.get("agrees_with_edge_serve")]
    if checks:
        lines += [
            "",
            "The in-process bundle runner (`edgejudge eval BUNDLE --loop-guard`) against edge-serve, "
            "same bundle and client:",
            "",
        ]
        for r in checks:
            a = r["agrees_with_edge_serve"]
            same = "not all" if a["episodes_equal"] is None else a["episodes_equal"]
            lines.append(
                f"- {r['world']} {r['algo']}/{r['source']} n={r['train_episodes']} seed {r['seed']}: "
                f"{same} of {a['of']} episodes identical (outcome and length)"
            )
    data = sorted(
        {
            (r["world"], r["train_episodes"], r.get("train_success_rate"), r.get("train_steps"))
            for r in rows
            if r.get("train_steps")
        }
    )
    if data:
        lines += ["", "Training data (success-scarce cuts of one collected pool per world):", ""]
        for world, n, rate, steps in data:
            lines.append(f"- {world}, {n} episodes: {100 * rate:.1f} % successful, {steps} steps")
    bad = [r for r in (store.get(c) or {**c, "status": "not run"} for c in plan) if r.get("status") != "ok"]
    if bad:
        lines += ["", "Rows without a result:", ""]
        missing: dict[str, list[str]] = {}
        for r in bad:
            if r["status"] != "not run":
                lines.append(
                    f"- {r['world']} {r['algo']}/{r['source']} n={r['train_episodes']} seed {r['seed']} "
                    f"{r['client']}: {r.get('status')} {r.get('reason', '')}".rstrip()
                )
            else:
                missing.setdefault(r["world"], []).append(
                    f"{r['algo']}/{r['source']} n={r['train_episodes']} s{r['seed']}"
                    + ("" if r["runner"] == "edge-serve" else f" {r['runner']}")
                )
        for world, what in missing.items():
            lines.append(f"- {world}, not run ({len(what)}): {', '.join(what)}")
    done = [r for r in rows if r.get("status") == "ok"]
    if done:
        units = {
            (r["world"], r["algo"], r["source"], r["train_episodes"], r["seed"]): r
            for r in done
            if r.get("train_seconds")
        }
        train = sum(r["train_seconds"] for r in units.values())
        train_cpu = sum(r.get("train_cpu_seconds", 0) for r in units.values())
        ev = sum(r.get("eval_seconds", 0) for r in done)
        ev_cpu = sum(r.get("eval_cpu_seconds", 0) for r in done)
        lines += [
            "",
            f"Compute of the rows shown: training runs {len(units)} ({train:.0f} s wall, "
            f"{train_cpu:.0f} CPU-s), "
            f"evaluations {len(done)} ({ev:.0f} s wall, {ev_cpu:.0f} CPU-s); CPU-s are those of the finished "
            "subprocesses (a world's JVM is not always counted); exports are not timed.",
        ]
        for w in plan_worlds(plan):
            mine = [r for r in done if r["world"] == w["world"]]
            t = sum(r.get("train_cpu_seconds", 0) for k, r in units.items() if k[0] == w["world"])
            e = sum(r.get("eval_cpu_seconds", 0) for r in mine)
            if mine:
                lines.append(
                    f"- {w['world']}: {(t + e) / 60:.0f} CPU-min "
                    f"({t / 60:.0f} training, {e / 60:.0f} evaluation)"
                )
    runs = meta.get("runs", [])
    if runs:
        full = max(runs, key=lambda x: x["rows_computed"])
        load = full.get("load_average")
        lines += [
            "",
            f"Time: the run that computed {full['rows_computed']} rows took {full['seconds']:.0f} s wall"
            + (f" (load average {load[0]:.1f} at its start, {load[1]:.1f} at its end)." if load else "."),
        ]
    return "\n".join(lines) + "\n"


def write_report(
    store: RowStore,
    plan: Sequence[dict[str, Any]],
    out: str | Path,
    targets=None,
    ceiling: Sequence[dict[str, Any]] = (),
) -> None:
    from policy.matrix.plan import PRESETS

    targets = targets or {k: (w.metric, w.target) for k, w in PRESETS.items() if w.target is not None}
    matrix_plan = [r for r in plan if "round" not in r]  # a loop's rounds have tables of their own
    agg = with_ceiling(store.select(plan), ceiling)
    text = markdown(store, matrix_plan, targets, ceiling) + "".join(
        f"{x}\n" for x in rounds_markdown(agg, plan)
    )
    atomic_write(f"{out}.md", text)
    atomic_write(f"{out}.png", plot(store, matrix_plan, ceiling))
    png = rounds_plot(agg, plan)
    if png is not None:
        atomic_write(f"{out}.rounds.png", png)
