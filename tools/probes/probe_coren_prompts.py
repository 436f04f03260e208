"""Which question format makes the embedded 270M judge useful for COREN? A probe on 118 TWC dev steps.

Steps: trajectories 2-6 of the dev set that ``tools/bench/bench_coren.py`` collects (the TRCA/COREN benchmark
command). Every variant is a 6-shot completion prompt (the same six kitchen examples) read from the last
logits; the query shows the task, optionally the observation, the action and its result (the first new line of
the next observation). Compared: a five-word -2..2 scale (terrible .. excellent) vs a Yes/No "progress"
question, and no observation vs the whole observation (room first) vs its first 48 tokens. Per-step AUROC vs
score progress. Queries go through the judge cache (``--cache``), so a rerun is free. Writes
tools/results/probe_coren_prompts.json.
"""

from __future__ import annotations

import time

import click
import numpy as np

from labeler.auroc import auroc
from labeler.coren.texts import NOTHING_NEW, fit_head
from labeler.dataset import read_trajectories
from tools.bench.benchlib import ROOT, write_results

WORDS = [" terrible", " bad", " neutral", " good", " excellent"]
EXAMPLES = [
    ("take dirty plate", "Feedback: You take the dirty plate.", "excellent", "Yes"),
    ("look around", "Recent actions: take dirty plate, look around", "neutral", "No"),
    ("open fridge", "Feedback: You open the fridge. It's empty inside.", "neutral", "No"),
    (
        "put dirty plate in dishwasher",
        "Feedback: You put the dirty plate in the dishwasher.",
        "excellent",
        "Yes",
    ),
    ("inventory", "Feedback: Inventory: a milk carton", "bad", "No"),
    ("put milk carton in oven", "Feedback: You put the milk carton in the oven.", "terrible", "No"),
]
TASK = "Pick up objects, then place them in their usual locations."


def header(kind: str) -> str:
    if kind == "w":
        h = "Rate each action of a household robot as terrible, bad, neutral, good or excellent for its task."
        h += "\n\n"
    else:
        h = "Say whether each action of a household robot made progress on its task.\n\n"
    for a, r, w, yn in EXAMPLES:
        h += f"Task: {TASK}\nAction: {a}\nResult: {r}\n" + (
            f"Rating: {w}\n\n" if kind == "w" else f"Progress: {yn}\n\n"
        )
    return h


def room_first(obs: str) -> str:
    lines = obs.split("\n")
    room = [ln for ln in lines if ln.startswith("Room:")]
    return "\n".join(room + [ln for ln in lines if not ln.startswith("Room:")])


@click.command()
@click.option("--dev", default="runs/bench_coren/twc-dev30.jsonl.gz", show_default=True)
@click.option("--cache", default="runs/coren/cache.sqlite", show_default=True)
@click.option("--json-out", default="tools/results/probe_coren_prompts.json", show_default=True)
def main(dev: str, cache: str, json_out: str) -> None:
    from labeler.judge import open_judge

    trajs = read_trajectories(ROOT / dev)[2:7]
    steps = [(t, s) for t in trajs for s in t.steps]
    answers = {id(s): r for t in trajs for s, r in zip(t.steps, t.responses(), strict=True)}
    y = [float(s.info["progress"]) > 0 for _, s in steps]
    results = {"steps": len(steps), "progress_steps": sum(y), "variants": {}}
    with open_judge("gemma3-270m", n_threads=1, n_ctx=2048, cache=str(ROOT / cache)) as j:

        def obs_text(s, mode: str) -> str:
            if mode == "none":
                return ""
            o = (
                room_first(s.observation)
                if mode == "full"
                else fit_head(s.observation, 48, j.count_tokens)[0]
            )
            return f"Observation: {o}\n"

        for name, kind, mode in [
            ("compact-yn", "y", "none"),
            ("compact-w", "w", "none"),
            ("obs-yn", "y", "full"),
            ("obs-w", "w", "full"),
            ("obs48-yn", "y", "head48"),
            ("obs48-w", "w", "head48"),
        ]:
            t0 = time.perf_counter()
            h = header(kind)
            tail, choices = ("Rating:", WORDS) if kind == "w" else ("Progress:", [" Yes", " No"])
            qs = [
                (
                    h + f"Task: {t.instruction}\n" + obs_text(s, mode) + f"Action: {s.action}\n"
                    f"Result: {answers[id(s)] or NOTHING_NEW}\n" + tail,
                    choices,
                )
                for t, s in steps
            ]
            res = j.score_many(qs, template="probe." + name, version=1)
            if kind == "y":
                a = auroc([r.logprobs[0] - r.logprobs[1] for r in res], y)
            else:
                d = np.array([r.probs for r in res])
                cal = d / d.mean(0)
                cal /= cal.sum(1, keepdims=True)
                a = auroc((cal @ np.array([-2, -1, 0, 1, 2])).tolist(), y)
            results["variants"][name] = {
                "auroc_progress": a,
                "seconds": time.perf_counter() - t0,
                "scale": "yes/no" if kind == "y" else "five words",
                "observation": mode,
            }
            print(f"{name:12s} AUROC {a:.3f}", flush=True)
    write_results(ROOT / json_out, results)


if __name__ == "__main__":
    main()
