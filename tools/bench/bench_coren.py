"""COREN benchmark: labeled steps/s, queries per step and label quality on the held-out TWC dev set.

Runs (unless given existing results with --labeled/--report):

1. ``edgejudge collect --env twx:twc --split dev --episodes 30 --behaviour gold-noise --noise 0.4 --seed 1``
   (the exact command the TRCA benchmark uses, so both tables describe the same 622 steps);
2. ``edgejudge label coren`` with an empty judge cache (``--cache`` in the work folder) and ``--report``;
3. ``edgejudge label quality --json``.

Baselines measured in the same run: each prompt alone (its calibrated score, from ``dist_p*``), the env's
sparse reward, and the naive query plan (one rating query per candidate and prompt, the per-candidate reading
of COREN) against the plan used (one rating + one multiple-choice query per observation and prompt).
Writes ``tools/results/bench_coren.json`` and prints a Markdown table for BENCHMARKS.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from labeler.auroc import auroc
from labeler.coren.voting import prompt_scores
from labeler.quality import measure
from models.trajectory import read_trajectories
from tools.bench.benchlib import HELDOUT_DEV_COLLECT, ROOT, edgejudge, write_results


def per_prompt(labeled: Path) -> list[dict]:
    trajs = read_trajectories(labeled)
    steps = [s for t in trajs for s in t.steps]
    y_prog = [float(s.info.get("progress", 0)) > 0 for s in steps]
    y_gold = [bool(s.info.get("gold")) for s in steps]
    out = []
    n = 0
    while f"dist_p{n}" in steps[0].labels["coren"]:
        d = np.array([s.labels["coren"][f"dist_p{n}"] for s in steps])
        values = [-1.0, 1.0] if d.shape[1] == 2 else list(np.linspace(-2, 2, d.shape[1]))
        sc = prompt_scores(d, values).tolist()
        out.append({"prompt": n, "auroc_progress": auroc(sc, y_prog), "auroc_gold": auroc(sc, y_gold)})
        n += 1
    return out


@click.command()
@click.option("--work", default="runs/bench_coren", show_default=True, type=click.Path(file_okay=False))
@click.option("--prompts", default=5, show_default=True, type=int)
@click.option(
    "--labeled",
    default=None,
    type=click.Path(dir_okay=False, exists=True),
    help="Summarise an existing labeled file instead of labeling (needs --report too).",
)
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False, exists=True))
@click.option("--json-out", default="tools/results/bench_coren.json", show_default=True)
def main(work: str, prompts: int, labeled: str | None, report_path: str | None, json_out: str) -> None:
    """Label the TWC dev set with COREN and measure speed and label quality."""
    w = ROOT / work
    w.mkdir(parents=True, exist_ok=True)
    if labeled is None:
        dev = w / "twc-dev30.jsonl.gz"
        if not dev.exists():
            edgejudge(*HELDOUT_DEV_COLLECT, "--out", str(dev))
        labeled_path = w / f"dev30.p{prompts}.coren.jsonl.gz"
        rep = w / f"dev30.p{prompts}.report.json"
        edgejudge(
            "label",
            "coren",
            str(dev),
            "--out",
            str(labeled_path),
            "--prompts",
            str(prompts),
            "--threads",
            "1",
            "--cache",
            str(w / "cache.sqlite"),
            "--report",
            str(rep),
        )
    else:
        if report_path is None:
            raise click.UsageError("--labeled needs --report")
        labeled_path, rep = Path(labeled), Path(report_path)
    report = json.loads(rep.read_text())
    trajs = read_trajectories(labeled_path)
    quality = measure(trajs, str(labeled_path)).to_dict()
    steps = report["steps"]
    n_prompts = len(trajs[0].provenance["coren"]["prompts"])
    cands = sum(len(s.candidates) for t in trajs for s in t.steps)
    naive = n_prompts * (cands + steps) + n_prompts * len(trajs) + report["queries"].get("qa", 0)
    js = report["judge_stats"]
    result = {
        "dev_command": "edgejudge " + " ".join(HELDOUT_DEV_COLLECT),
        "labeled": str(labeled_path),
        "prompts": n_prompts,
        "steps": steps,
        "trajectories": report["trajectories"],
        "seconds": report["seconds"],
        "steps_per_second": report["steps_per_second"],
        "queries": report["queries"],
        "queries_per_step": report["queries_per_step"],
        "naive_queries_per_step": naive / steps,
        "query_ratio_naive_over_used": naive / report["total_queries"],
        "cache_hits": report["cache_hits"],
        "evaluated_tokens": js.get("evaluated_tokens"),
        "reused_tokens": js.get("reused_tokens"),
        "generated_tokens": js.get("generated_tokens"),
        "reuse_ratio": (js.get("reused_tokens", 0) + js.get("evaluated_tokens", 0))
        / max(js.get("evaluated_tokens", 1), 1),
        "fallbacks": {"structural": report["structural_fallbacks"], "temporal": report["temporal_fallbacks"]},
        "temporal_violations": report["temporal_violations"],
        "backward_pass_rate": report["backward_pass_rate"],
        "qa_pass_rate": report["qa_pass_rate"],
        "mean_weights": report["mean_weights"],
        "quality": quality,
        "per_prompt": per_prompt(labeled_path),
    }
    write_results(ROOT / json_out, result)
    print_markdown(result)


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def print_markdown(r: dict) -> None:
    print(
        f"{r['steps']} steps, {r['trajectories']} trajectories, {r['prompts']} prompts: "
        f"{r['steps_per_second']:.3f} steps/s ({r['seconds'] / 60:.1f} min), {r['queries_per_step']:.1f} "
        f"queries/step (naive per-candidate plan: {r['naive_queries_per_step']:.1f}, "
        f"x{r['query_ratio_naive_over_used']:.1f}); prefix reuse x{r['reuse_ratio']:.1f}"
    )
    print("\n| channel | AUROC progress | AUROC gold | AUROC success (return) |\n|---|---|---|---|")
    for c in r["quality"]["channels"]:
        if c["channel"].startswith("coren.w_"):
            continue
        aurocs = (_f(c["auroc_progress"]), _f(c["auroc_gold"]), _f(c["auroc_success"]))
        print(f"| {c['channel']} | " + " | ".join(aurocs) + " |")
    for p in r["per_prompt"]:
        print(
            f"| prompt {p['prompt']} alone (calibrated score) | {_f(p['auroc_progress'])} | "
            f"{_f(p['auroc_gold'])} | |"
        )


if __name__ == "__main__":
    main()
