"""Label quality on response-only logs: each state is the response to the last action plus an inventory line
(:mod:`labeler.response_only`, ``edgejudge data response-only``), the shape of many raw agent logs.

ScienceWorld, TEST variations, ``gold-noise`` behaviour. Per family a pool is collected once; two kinds of
log are cut from it with :func:`labeler.subset.scarce_subset` (``edgejudge data subset``, at most 30 %
successful):

- **families**: ``--episodes`` (30) episodes of each of the first ``--families`` (4) families in one log;
- **mixed**: ``--mixed-episodes`` (5) episodes of each of all eight families in one log: few episodes and one
  success per task type.

Each log is labeled as a user labels theirs: one judge-built rubric per task type, and the potential fit on
the whole log (task types pooled, with per-task features). Rows: each log pooled, and per family where a
family has at least 10 episodes. Beside the labels, the per-step AUROC of the episode's own success flag on
every step: what BC on the successes weighs by, the floor a per-step label has to clear.

Each log goes through the user's commands, unreviewed: ``rubrics build --check-folds 0`` (a rubric per task
type) →
``label trca`` → ``label potential`` (the cross-fitted success-model potential, no judge) → optionally
``label coren`` on the mixed log (``--coren``: 2 prompts, mean vote; about 1 step/s) → per-step AUROC of each
channel against score progress (:func:`labeler.quality.measure`, the only reader of ``info``), and the label
check's verdict without ground truth. Every stage's file is kept under ``--work``, so a rerun resumes.

    python -m tools.bench.bench_response_logs --work runs/response \\
        --json tools/results/bench_response_logs.json --md tools/results/bench_response_logs.md
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from labeler.dataset import read_trajectories, write_trajectories
from labeler.label_check import check_channels
from labeler.quality import measure
from labeler.response_only import response_only
from labeler.rubrics_cli import per_task_type_path
from labeler.subset import pool_is_enough, scarce_subset
from tools.bench.benchlib import edgejudge, publish

FAMILIES = (
    "find-living-thing",
    "find-non-living-thing",
    "find-plant",
    "chemistry-mix",
    "find-animal",
    "test-conductivity",
    "lifespan-longest-lived",
    "use-thermometer",
)
CHANNELS = ("trca.total", "potential.delta", "coren.ensemble")
MAX_SUCCESS_RATE = 0.3
MAX_STEPS = 40
NOISE = 0.4


def _once(path: Path, timings: dict, name: str, *args: str) -> None:
    if path.exists():
        return
    t0 = time.perf_counter()
    edgejudge(*args)
    timings[name] = timings.get(name, 0.0) + round(time.perf_counter() - t0, 1)


def pool(family: str, work: Path, need: int, timings: dict) -> list:
    """A pool of the family's TEST episodes (adapter logs, kept for reuse) with enough failures and
    successes for a success-scarce cut of ``need`` episodes: collected at 1.6x ``need`` (at least 20),
    doubled until it has (up to 8x)."""
    n = max(20, int(need * 1.6))
    while True:
        path = work / f"pool-{family}-{n}.jsonl.gz"
        _once(path, timings, "collect_s", "collect", "--env", f"scienceworld:{family}", "--split", "test",
              "--episodes", str(n), "--behaviour", "gold-noise", "--noise", str(NOISE), "--seed", "1",
              "--max-steps", str(MAX_STEPS), "--out", str(path), "--no-progress")  # fmt: skip
        trajs = read_trajectories(path)
        if pool_is_enough(trajs, need, MAX_SUCCESS_RATE) or n >= 8 * need:
            return trajs
        n *= 2


def label(data: Path, timings: dict, coren: bool = False) -> Path:
    """Build one rubric per task type of ``data``, label TRCA and the potential (and COREN, 2 prompts, when
    asked); the labeled file."""
    tasks = sorted({t.task_type for t in read_trajectories(data)})
    stem = data.name.removesuffix(".jsonl.gz")
    prefix = data.with_name(f"{stem}.toml")
    paths = [per_task_type_path(str(prefix), task) for task in tasks]
    # one call builds them all, the last task type's last: its file says the call finished
    _once(Path(paths[-1]), timings, "build_s", "rubrics", "build", "--dataset", str(data), "--out",
          str(prefix), "--check-folds", "0", "--no-progress")  # fmt: skip
    rubrics = [a for p in paths for a in ("--rubrics", p)]
    trca = data.with_name(f"{stem}.trca.jsonl.gz")
    _once(trca, timings, "trca_s", "label", "trca", str(data), *rubrics, "--out", str(trca), "--no-progress")
    out = data.with_name(f"{stem}.labeled.jsonl.gz")
    _once(out, timings, "potential_s", "label", "potential", str(trca), "--out", str(out))
    if not coren:
        return out
    both = data.with_name(f"{stem}.coren.jsonl.gz")
    _once(both, timings, "coren_s", "label", "coren", str(out), "--out", str(both), "--no-progress")
    return both


def make_logs(work: Path, families: int, episodes: int, mixed: int, timings: dict) -> dict[str, Path]:
    """The response-only logs (see the module docstring): name -> path."""
    per_family, mixed_trajs = [], []
    for i, fam in enumerate(FAMILIES):
        trajs = pool(fam, work, episodes if i < families else mixed, timings)
        if i < families:
            per_family += [response_only(t) for t in scarce_subset(trajs, episodes, MAX_SUCCESS_RATE)]
        mixed_trajs += [response_only(t) for t in scarce_subset(trajs, mixed, MAX_SUCCESS_RATE)]
    n = len(FAMILIES)
    logs = {
        f"{families} families x {episodes}": (work / f"families-{families}x{episodes}.jsonl.gz", per_family),
        f"{n} families x {mixed}": (work / f"mixed-{n}x{mixed}.jsonl.gz", mixed_trajs),
    }
    for path, trajs in logs.values():
        if not path.exists():
            write_trajectories(path, trajs)
    return {name: path for name, (path, _) in logs.items()}


def _success_broadcast(trajs) -> float | None:
    """Per-step AUROC of the episode's own success flag on every step (what BC on the successes weighs by):
    the baseline any per-step label has to beat."""
    from labeler.auroc import auroc

    steps = [(float(t.success), s.info.get("progress")) for t in trajs for s in t.steps]
    pairs = [(v, p > 0) for v, p in steps if p is not None]
    return auroc([v for v, _ in pairs], [y for _, y in pairs]) if pairs else None


def quality(trajs) -> dict:
    rep = measure(trajs).to_dict()
    by = {c["channel"]: c["auroc_progress"] for c in rep["channels"]}
    present = [c for c in CHANNELS if by.get(c) is not None]
    checks = {c.channel: c.to_dict()["verdict"] for c in check_channels(trajs, present)} if present else {}
    return {
        **{k: rep[k] for k in ("trajectories", "steps", "progress_steps", "successes")},
        "env_reward": by.get("env.reward"),
        "success_broadcast": _success_broadcast(trajs),
        "auroc": {c: by.get(c) for c in CHANNELS},
        "check": checks,
    }


def report(labeled: dict[str, Path]) -> dict:
    """A row per log (pooled) and, for a log of several families with enough episodes each, per family."""
    rows = []
    for name, path in labeled.items():
        trajs = read_trajectories(path)
        rows.append({"log": name, "pooled": True, **quality(trajs)})
        by_family: dict[str, list] = {}
        for t in trajs:
            by_family.setdefault(t.task_type, []).append(t)
        if min(len(v) for v in by_family.values()) >= 10:
            rows += [{"log": f"  {fam}", "pooled": False, **quality(v)} for fam, v in by_family.items()]
    return {"channels": list(CHANNELS), "max_success_rate": MAX_SUCCESS_RATE, "rows": rows}


def markdown(rep: dict) -> str:
    def f(v):
        return "n/a" if v is None else f"{v:.3f}"

    head = " | ".join(rep["channels"])
    lines = [
        f"| log | episodes | steps (progress) | successes | env reward | own success flag | {head} |",
        "|---|---|---|---|---|---|" + "---|" * len(rep["channels"]),
    ]
    for r in rep["rows"]:
        cells = " | ".join(
            f"{f(r['auroc'][c])}" + (f" ({r['check'][c]})" if c in r["check"] else "")
            for c in rep["channels"]
        )
        lines.append(
            f"| {r['log']} | {r['trajectories']} | {r['steps']} ({r['progress_steps']}) | {r['successes']} "
            f"| {f(r['env_reward'])} | {f(r['success_broadcast'])} | {cells} |"
        )
    return "\n".join(lines) + "\n"


@click.command()
@click.option("--families", default=4, show_default=True, help="Families labeled on their own (the first N).")
@click.option("--episodes", default=30, show_default=True, help="Episodes per family log.")
@click.option("--mixed-episodes", default=5, show_default=True, help="Episodes per family in the mixed log.")
@click.option("--work", type=click.Path(path_type=Path), default=Path("runs/response"), show_default=True)
@click.option("--coren", is_flag=True, help="Label the mixed log with COREN too (about 1 step/s).")
@click.option("--json", "json_out", type=click.Path(path_type=Path), default=None)
@click.option("--md", "md_out", type=click.Path(path_type=Path), default=None)
def main(families: int, episodes: int, mixed_episodes: int, work: Path, coren: bool, json_out: Path | None,
         md_out: Path | None) -> None:  # fmt: skip
    """Unreviewed labels on response-only ScienceWorld logs (see the module docstring)."""
    work.mkdir(parents=True, exist_ok=True)
    timings: dict = {}
    logs = make_logs(work, families, episodes, mixed_episodes, timings)
    labeled = {}
    for name, path in logs.items():
        click.echo(f"[{name}] build, label", err=True)
        labeled[name] = label(path, timings, coren and name.endswith(f"x {mixed_episodes}"))
    rep = {**report(labeled), "timings": timings}
    publish(rep, markdown(rep), json_out, md_out)


if __name__ == "__main__":
    main()
