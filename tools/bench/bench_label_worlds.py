"""Label quality per world: TRCA and COREN per-step AUROC against score progress on held-out episodes of
harder worlds (TWC medium and hard by default), next to the sparse reward.

    python -m tools.bench.bench_label_worlds --work runs/lw --json-out tools/results/label_quality_worlds.json

Per world: ``edgejudge collect`` on the dev split (``gold-noise``, noise 0.4, as the TWC dev set of the
labeling sections), then

* ``TRCA shipped + --base``: the world's shipped rubric (``labeler/rubrics/TASK.toml``) extended with the
  judge's places for the dev objects (``rubrics build --base --no-grounding``);
* ``TRCA judge-built``: ``rubrics build`` on the same dev logs, unreviewed (grounded on the success flags,
  in-sample);
* ``COREN``: ``label coren --prompts N`` (the ensemble and the contextual, structural and temporal channels)
  on the first ``--coren-episodes`` episodes (COREN runs about one step per second on one thread), with the
  TRCA rows repeated on that slice so that the methods are compared on the same steps; once per
  ``--coren-vote`` (the first labels cold, the others reuse every judge answer from the cache);

each read by ``edgejudge label quality --json`` (the only reader of ``info``). Every step is cached in the
work folder, so an interrupted run resumes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from labeler.dataset import read_trajectories, write_trajectories
from tools.bench.benchlib import ROOT, edgejudge, write_results

WORLDS = {
    "twc-medium": ("twx:twc", "level=medium", 50),
    "twc-hard": ("twx:twc", "level=hard", 70),
}


def _once(path: Path, *args: str) -> Path:
    if not path.exists():
        edgejudge(*args)
    return path


def _channels(quality: dict) -> dict[str, float]:
    return {c["channel"]: c.get("auroc_progress") for c in quality["channels"]}


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--work", required=True, type=click.Path(file_okay=False, path_type=Path), help="Work folder.")
@click.option(
    "--world",
    "worlds",
    multiple=True,
    type=click.Choice(sorted(WORLDS)),
    help="Worlds to measure (default: all).",
)
@click.option("--episodes", default=25, show_default=True, type=click.IntRange(2, 1000))
@click.option("--coren-prompts", default=2, show_default=True, type=click.IntRange(1, 5))
@click.option(
    "--coren-episodes", default=4, show_default=True, type=click.IntRange(1, 1000), help="COREN's slice."
)
@click.option(
    "--coren-vote",
    "coren_votes",
    multiple=True,
    type=click.Choice(["mean", "majority"]),
    help="COREN's votes to label with (default: mean, then majority from the same judge answers).",
)
@click.option("--no-coren", is_flag=True, help="TRCA only (COREN runs ~1 step/s).")
@click.option("--json-out", type=click.Path(dir_okay=False, path_type=Path), help="Results JSON.")
def main(
    work: Path,
    worlds,
    episodes: int,
    coren_prompts: int,
    coren_episodes: int,
    coren_votes,
    no_coren: bool,
    json_out: Path | None,
) -> None:
    """Collect, label and measure each world; print one Markdown table."""
    work.mkdir(parents=True, exist_ok=True)
    results = {}
    for key in worlds or sorted(WORLDS):
        env, params, max_steps = WORLDS[key]
        task = env.split(":", 1)[1]
        d = work / key
        d.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        data = _once(
            d / "dev.jsonl.gz",
            *("collect", "--env", env, "--params", params, "--split", "dev", "--episodes", str(episodes)),
            *("--behaviour", "gold-noise", "--noise", "0.4", "--seed", "1", "--max-steps", str(max_steps)),
            *("--no-progress", "--out", str(d / "dev.jsonl.gz")),
        )
        stats = json.loads(edgejudge("data", "stats", str(data), "--json"))
        rubric_base = _once(
            d / "rubric.base.toml",
            *("rubrics", "build", "--dataset", str(data), "--task-type", task, "--no-grounding"),
            *(
                "--base",
                str(ROOT / "labeler" / "rubrics" / f"{task}.toml"),
                "--out",
                str(d / "rubric.base.toml"),
            ),
            "--no-progress",
        )
        rubric_built = _once(
            d / "rubric.built.toml",
            *(
                "rubrics",
                "build",
                "--dataset",
                str(data),
                "--task-type",
                task,
                "--out",
                str(d / "rubric.built.toml"),
            ),
            "--no-progress",
        )
        rows = {}
        for name, rubric in (
            ("TRCA shipped + --base", rubric_base),
            ("TRCA judge-built, unreviewed", rubric_built),
        ):
            out = d / f"dev.{rubric.stem}.jsonl.gz"
            _once(out, "label", "trca", str(data), "--rubrics", str(rubric), "--out", str(out))
            q = json.loads(edgejudge("label", "quality", str(out), "--json"))
            ch = _channels(q)
            rows[name] = ch.get("trca.total")
            rows.setdefault("env reward (sparse)", ch.get("env.reward"))
        coren_s, coren_steps_s = None, None
        slice_steps = None
        if not no_coren:
            sliced = d / f"slice{coren_episodes}.jsonl.gz"
            if not sliced.exists():
                write_trajectories(sliced, read_trajectories(data)[:coren_episodes])
            slice_steps = sum(len(t.steps) for t in read_trajectories(sliced))
            ids = {t.id for t in read_trajectories(sliced)}
            for name, rubric in (
                ("TRCA shipped + --base", rubric_base),
                ("TRCA judge-built, unreviewed", rubric_built),
            ):
                part = d / f"slice{coren_episodes}.{rubric.stem}.jsonl.gz"
                if not part.exists():
                    labeled = read_trajectories(d / f"dev.{rubric.stem}.jsonl.gz")
                    write_trajectories(part, [t for t in labeled if t.id in ids])
                ch = _channels(json.loads(edgejudge("label", "quality", str(part), "--json")))
                rows[f"{name}, COREN's slice"] = ch.get("trca.total")
            coren_s, coren_steps_s = {}, {}
            for vote in coren_votes or ("mean", "majority"):
                out = d / f"slice{coren_episodes}.coren-{vote}.jsonl.gz"
                if not out.exists():
                    t1 = time.perf_counter()
                    report = d / f"coren-{vote}.report.json"
                    edgejudge(
                        "label", "coren", str(sliced), "--out", str(out), "--prompts", str(coren_prompts),
                        "--vote", vote, "--report", str(report), "--no-progress",
                    )  # fmt: skip
                    coren_s[vote] = time.perf_counter() - t1
                    coren_steps_s[vote] = json.loads(report.read_text()).get("steps_per_second")
                ch = _channels(json.loads(edgejudge("label", "quality", str(out), "--json")))
                for c in ("ensemble", "contextual", "structural", "temporal"):
                    name = f"COREN {c}, {coren_prompts} prompts, {vote} vote, COREN's slice"
                    rows[name] = ch.get(f"coren.{c}")
        results[key] = {
            "env": env,
            "params": params,
            "max_steps": max_steps,
            "episodes": stats["trajectories"],
            "steps": stats["steps"],
            "success_rate": stats["success_rate"],
            "auroc_progress": rows,
            "coren_episodes": None if no_coren else coren_episodes,
            "coren_slice_steps": slice_steps,
            "coren_seconds": coren_s,
            "coren_steps_per_s": coren_steps_s,
            "seconds": time.perf_counter() - t0,
        }
        click.echo(f"{key}: {json.dumps(results[key])}", err=True)
    names = list(dict.fromkeys(n for r in results.values() for n in r["auroc_progress"]))
    keys = list(results)
    lines = [
        "| label | " + " | ".join(f"{k} dev, {results[k]['steps']} steps" for k in keys) + " |",
        "|---|" + "---|" * len(keys),
    ]
    for n in names:
        vals = [results[k]["auroc_progress"].get(n) for k in keys]
        lines.append(f"| {n} | " + " | ".join("" if v is None else f"{v:.3f}" for v in vals) + " |")
    click.echo("\n".join(lines))
    if json_out:
        write_results(json_out, {"worlds": results}, indent=1)


if __name__ == "__main__":
    main()
