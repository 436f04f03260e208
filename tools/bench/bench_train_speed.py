"""Training speed: the fast paths against the reference computation, in one run, by the shipped commands.

On the demo's world (TWC by default), with the static encoder and the token reader:
- BC on ``--expert`` expert episodes (gold paths), its default 2,000 updates;
- IQL on a success-scarce mixture of ``--mixed`` episodes with sparse rewards, ``--iql-steps`` updates;
each trained twice with ``edgejudge train``, once with ``EDGEJUDGE_TRAIN_REFERENCE=1`` (the reference
computation) and once without (the fast paths), and each checkpoint asked with ``edgejudge decisions`` on
the gold paths of ``--test`` held-out games: the speed-up, and whether the decisions moved.

    python -m tools.bench.bench_train_speed --out tools/results/bench_train_speed.json
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from tools.bench.benchlib import edgejudge, publish

MODES = {"reference": {"EDGEJUDGE_TRAIN_REFERENCE": "1"}, "fast": {"EDGEJUDGE_TRAIN_REFERENCE": "0"}}


def collect(work: Path, world: tuple[str, ...], name: str, split: str, episodes: int, behaviour: str) -> Path:
    out = work / f"{name}.jsonl.gz"
    if not out.exists():
        noise = "0" if behaviour == "gold-noise" else "0.3"
        edgejudge("collect", *world, "--split", split, "--episodes", str(episodes), "--behaviour", behaviour,
                  "--noise", noise, "--seed", "0", "--out", str(out))  # fmt: skip
    return out


def train(data: Path, out: Path, mode: str, algo: str, *sets: str) -> dict:
    args = ["train", str(data), "--algo", algo, "--reward", "sparse", "--seed", "0", "--json"]
    for s in sets:
        args += ["--set", s]
    args += ["--out", str(out)]
    shutil.rmtree(out, ignore_errors=True)
    return json.loads(edgejudge(*args, env=MODES[mode]))


def decisions(ckpt: str, test: Path) -> dict:
    report = json.loads(edgejudge("decisions", ckpt, str(test), "--json"))
    return {"accuracy": report["accuracy"], "decisions": report["decisions"],
            "per_verb": {verb: v["accuracy"] for verb, v in report["verbs"].items()}}  # fmt: skip


def markdown(rows: dict) -> str:
    lines = [
        "| learner | reference | fast | speed-up | gold-path decisions reference / fast |",
        "|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        ref, fast = r["reference"], r["fast"]
        lines.append(
            f"| {name} | {ref['update_seconds']:.0f} s ({ref['updates_per_second']:.1f} upd/s) "
            f"| {fast['update_seconds']:.0f} s ({fast['updates_per_second']:.1f} upd/s) "
            f"| {ref['update_seconds'] / fast['update_seconds']:.2f}x "
            f"| {ref['decisions']['accuracy']:.3f} / {fast['decisions']['accuracy']:.3f} "
            f"(of {fast['decisions']['decisions']}) |"
        )
    return "\n".join(lines) + "\n"


@click.command()
@click.option("--env", "env_name", default="twx:twc", show_default=True)
@click.option("--expert", default=200, show_default=True, help="Expert episodes BC trains on.")
@click.option("--mixed", default=120, show_default=True, help="Mixture episodes IQL trains on.")
@click.option("--iql-steps", default=300, show_default=True)
@click.option("--test", "test_episodes", default=40, show_default=True, help="Held-out gold paths.")
@click.option(
    "--work-dir", type=click.Path(path_type=Path), default=Path("runs/train_speed"), show_default=True
)
@click.option("--out", type=click.Path(path_type=Path), help="Results JSON (and .md beside it).")
def main(env_name, expert, mixed, iql_steps, test_episodes, work_dir, out) -> None:
    """Time BC and IQL training with and without the fast paths, and compare their decisions."""
    work_dir.mkdir(parents=True, exist_ok=True)
    world = ("--env", env_name)
    experts = collect(work_dir, world, f"expert{expert}", "train", expert, "gold-noise")
    mixture = collect(work_dir, world, f"mixed{mixed}", "train", mixed, "gold-noise=0.3,random=0.7")
    test = collect(work_dir, world, f"test{test_episodes}", "test", test_episodes, "gold-noise")
    runs = {
        f"BC, {expert} expert episodes, 2,000 updates": (experts, "bc"),
        f"IQL, {mixed} mixed episodes, {iql_steps} updates": (mixture, "iql", f"steps={iql_steps}"),
    }
    rows: dict = {}
    for name, (data, algo, *sets) in runs.items():
        for mode in MODES:
            summary = train(data, work_dir / f"{algo}-{mode}", mode, algo, *sets)
            summary["decisions"] = decisions(summary["checkpoint"], test)
            rows.setdefault(name, {})[mode] = summary
            click.echo(f"{name} {mode}: {summary['update_seconds']:.1f} s", err=True)
    md = markdown(rows)
    payload = {"env": env_name, "rows": rows}
    publish(payload, md, out, out.with_suffix(".md") if out else None)


if __name__ == "__main__":
    main()
