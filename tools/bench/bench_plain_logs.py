"""Label quality on logs without a layout: the same episodes with their recorded layout and flattened into
plain text, labeled by unreviewed judge-built TRCA rubrics, per-step AUROC against score progress.

What a user's own log looks like to edgejudge: free text with no ``meta.state_layout``. For each world
(ScienceWorld families on TEST variations, TWC medium on the dev split), ``edgejudge collect`` writes a log;
a copy is made with every state text *flattened*: each ``Label: value`` line of the recorded layout becomes
its bare value, and the layout, the state format and the environment are removed from ``meta`` (``info``
stays, for measuring only). Both files then go through the same user commands: ``rubrics build``
(success-grounded, unreviewed, ``--check-folds 0``) → ``label trca`` → per-step AUROC of ``trca.total``
against score progress (:func:`labeler.quality.measure`, the only reader of ``info``). The flattened file's
layout is inferred by the reader (the plain layout: no labelled lines are left). For both, the label check
without ground truth
(:func:`labeler.label_check.check_channels`: the trajectories' mean reward against their success flags) gives
its verdict on ``trca.total``; a chance control (the plain file's rewards permuted over its steps, 20
permutations) shows how often the check calls labels that rank nothing separating.

Every stage's file is kept under ``--work`` and reused, so a rerun resumes.

    python -m tools.bench.bench_plain_logs --work runs/plain --json tools/results/bench_plain_logs.json \\
        --md tools/results/bench_plain_logs.md
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from labeler.dataset import iter_trajectories, read_trajectories, write_trajectories
from labeler.label_check import check_channels
from labeler.quality import measure
from models.state_layout import layout_of
from tools.bench.benchlib import edgejudge, publish

SW_FAMILIES = ("find-living-thing", "find-non-living-thing", "find-plant", "chemistry-mix")
WORLDS = {
    **{f: (f"scienceworld:{f}", "test", None, 40) for f in SW_FAMILIES},
    "twc-medium": ("twx:twc", "dev", "level=medium", 50),
}
CHANNEL = "trca.total"
SIDES = ("layout", "plain")


def flatten(text: str, labels: tuple[str, ...]) -> str:
    """``text`` with every ``Label: value`` line of ``labels`` reduced to its value (empty values dropped)."""
    out = []
    for line in text.splitlines():
        for lb in labels:
            if line.startswith(lb + ":"):
                line = line[len(lb) + 1 :].strip()
                break
        if line.strip():
            out.append(line)
    return "\n".join(out)


def flatten_file(src: Path, dst: Path) -> None:
    """A copy of ``src`` as a log no adapter wrote: flattened states, no layout, format or environment."""
    trajs = []
    for t in iter_trajectories(src):
        labels = tuple(p.label for p in layout_of(t.meta).parts)
        for s in t.steps:
            s.observation, s.next_observation = (
                flatten(s.observation, labels),
                flatten(s.next_observation, labels),
            )
        for key in ("state_layout", "state_format", "env", "params"):
            t.meta.pop(key, None)
        trajs.append(t)
    write_trajectories(dst, trajs)


def _once(path: Path, timings: dict, name: str, *args: str) -> None:
    if path.exists():
        return
    t0 = time.perf_counter()
    edgejudge(*args)
    timings[name] = round(time.perf_counter() - t0, 1)


def label(data: Path, task: str, timings: dict, tag: str) -> Path:
    rubric, out = (
        data.with_suffix("").with_suffix(".toml"),
        data.with_name(data.name.replace(".jsonl", ".trca.jsonl")),
    )
    _once(rubric, timings, f"{tag}_build_s", "rubrics", "build", "--dataset", str(data), "--task-type", task,
          "--out", str(rubric), "--check-folds", "0", "--no-progress")  # fmt: skip
    _once(out, timings, f"{tag}_label_s", "label", "trca", str(data), "--rubrics", str(rubric), "--out",
          str(out), "--no-progress")  # fmt: skip
    return out


def run_world(name: str, work: Path, episodes: int) -> dict:
    env, split, params, max_steps = WORLDS[name]
    timings: dict = {}
    raw = work / f"{name}.layout.jsonl.gz"
    collect = ["collect", "--env", env, "--split", split, "--episodes", str(episodes), "--behaviour",
               "gold-noise", "--noise", "0.4", "--seed", "1", "--max-steps", str(max_steps),
               "--out", str(raw), "--no-progress"] + (["--params", params] if params else [])  # fmt: skip
    _once(raw, timings, "collect_s", *collect)
    plain = work / f"{name}.plain.jsonl.gz"
    if not plain.exists():
        flatten_file(raw, plain)
    task = read_trajectories(raw)[0].task_type
    return {
        "world": name,
        "task_type": task,
        "timings": timings,
        **{s: str(label(p, task, timings, s)) for s, p in zip(SIDES, (raw, plain), strict=True)},
    }


def _auroc(trajs) -> tuple[float | None, dict]:
    rep = measure(trajs).to_dict()
    by = {c["channel"]: c["auroc_progress"] for c in rep["channels"]}
    counts = {k: rep[k] for k in ("trajectories", "steps", "progress_steps", "successes")}
    return by.get(CHANNEL), {**counts, "env_reward": by.get("env.reward")}


def _check(trajs) -> dict | None:
    found = check_channels(trajs, [CHANNEL])
    return found[0].to_dict() if found else None


PERMUTATIONS = 20


def chance(trajs) -> dict:
    """The label check's verdicts on :data:`PERMUTATIONS` permutations of the log's rewards (labels that rank
    nothing): how often it would call chance labels separating."""
    verdicts = [_check(shuffled(trajs, seed)) for seed in range(PERMUTATIONS)]
    aurocs = [_auroc(shuffled(trajs, seed))[0] or 0.5 for seed in range(3)]
    return {
        "permutations": PERMUTATIONS,
        "verdicts": {
            v: sum(1 for c in verdicts if c and c["verdict"] == v)
            for v in {c["verdict"] for c in verdicts if c}
        },
        "per_step_auroc": round(sum(aurocs) / len(aurocs), 3),
    }


def shuffled(trajs, seed: int = 0):
    """A chance control: the same steps with their ``trca.total`` rewards permuted over the whole log."""
    import copy
    import random

    out = copy.deepcopy(trajs)
    steps = [s for t in out for s in t.steps]
    values = [s.labels["trca"]["total"] for s in steps]
    random.Random(seed).shuffle(values)
    for s, v in zip(steps, values, strict=True):
        s.labels["trca"]["total"] = v
    return out


def report(worlds: list[dict]) -> dict:
    rows = []
    pooled: dict[str, list] = {side: [] for side in SIDES}
    for w in worlds:
        row = {"world": w["world"], "timings": w["timings"]}
        for side in SIDES:
            trajs = read_trajectories(w[side])
            row[side], row["counts"] = _auroc(trajs)
            row[f"{side}_check"] = _check(trajs)
            if w["world"] in SW_FAMILIES:
                pooled[side] += trajs
        row["chance"] = chance(read_trajectories(w["plain"]))
        rows.append(row)
    if pooled["layout"]:
        row = {"world": f"pooled ScienceWorld, {sum(r['world'] in SW_FAMILIES for r in rows)} families"}
        for side in SIDES:
            row[side], row["counts"] = _auroc(pooled[side])
            row[f"{side}_check"] = _check(pooled[side])
        row["chance"] = chance(pooled["plain"])
        rows.append(row)
    return {"channel": CHANNEL, "rows": rows}


def chance_text(c: dict) -> str:
    counts = ", ".join(f"{n} {v}" for v, n in sorted(c["verdicts"].items(), key=lambda x: (-x[1], x[0])))
    return f"{counts} of {c['permutations']}"


def markdown(rep: dict) -> str:
    def f(v):
        return "n/a" if v is None else f"{v:.3f}"

    def v(check):
        return "" if not check else f" ({check['verdict']})"

    lines = [
        "| log | episodes | steps (progress) | successes | env reward | TRCA, recorded layout "
        "| TRCA, flattened plain text | difference "
        "| plain labels permuted (chance): per-step AUROC, label check |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rep["rows"]:
        c = r["counts"]
        diff = None if r["layout"] is None or r["plain"] is None else r["plain"] - r["layout"]
        d = "" if diff is None else f"{diff:+.3f}"
        lines.append(
            f"| {r['world']} | {c['trajectories']} | {c['steps']} ({c['progress_steps']}) "
            f"| {c['successes']} | {f(c['env_reward'])} | {f(r['layout'])}{v(r['layout_check'])} "
            f"| {f(r['plain'])}{v(r['plain_check'])} | {d} "
            f"| {f(r['chance']['per_step_auroc'])}, {chance_text(r['chance'])} |"
        )
    return "\n".join(lines) + "\n"


@click.command()
@click.option("--worlds", default=",".join(WORLDS), show_default=True, help="Comma-separated worlds.")
@click.option("--episodes", default=15, show_default=True, help="Episodes collected per world.")
@click.option("--work", type=click.Path(path_type=Path), default=Path("runs/plain"), show_default=True)
@click.option("--json", "json_out", type=click.Path(path_type=Path), default=None)
@click.option("--md", "md_out", type=click.Path(path_type=Path), default=None)
@click.option("--report-only", is_flag=True, help="Only read the labeled files already under --work.")
def main(worlds: str, episodes: int, work: Path, json_out: Path | None, md_out: Path | None,
         report_only: bool) -> None:  # fmt: skip
    """Unreviewed TRCA on logs with their layout and flattened into plain text (see the module docstring)."""
    work.mkdir(parents=True, exist_ok=True)
    done = []
    for name in worlds.split(","):
        if report_only:
            done.append({"world": name, "timings": {},
                         **{side: str(work / f"{name}.{side}.trca.jsonl.gz") for side in SIDES}})  # fmt: skip
        else:
            click.echo(f"[{name}] collect, build, label (recorded layout and plain text)", err=True)
            done.append(run_world(name, work, episodes))
    rep = {**report(done), "episodes": episodes}
    publish(rep, markdown(rep), json_out, md_out)


if __name__ == "__main__":
    main()
