"""COREN prompt layout 2 probe: the shared preamble, the step, then each variant's tail — how well does each
tail rank steps, and how do the votes compare with layout 1 (a header with its own examples per variant)?

Per-step AUROC vs score progress of each prompt's calibrated score, of the majority vote of the quintile votes
(COREN's contextual channel before structural/temporal filtering) and of the unvoted mean position, on a slice
of a labeled dev set. Layout 1's numbers are read from that file's ``dist_p*`` (a run of ``edgejudge label
coren --prompt-dir labeler/prompts/coren/v1``), recalibrated on the same slice; layout 2's come from the judge
(queries through ``--cache``, one ``score_many`` per trajectory as the pipeline sends them). ``--tail`` adds
extra questions to try after the same preamble. Writes tools/results/probe_coren_tails.json.

    python -m tools.probes.probe_coren_tails --labeled runs/coren/dev30.p4.jsonl.gz --trajectories 0:10 \\
        --tail "Useful:" --tail "Correct action:"
"""

from __future__ import annotations

import time

import click
import numpy as np

from labeler.auroc import auroc
from labeler.coren import voting
from labeler.dataset import read_trajectories
from tools.bench.benchlib import ROOT, write_results


def summarize(dists: np.ndarray, y: list[bool]) -> dict:
    """``dists``: (prompts, steps, 2) [P(No), P(Yes)] -> per-prompt, vote and soft AUROC."""
    scores = [voting.prompt_scores(d, [-1, 1]) for d in dists]
    u = np.stack([voting.positions(s) for s in scores])
    pos, votes = voting.to_scale(u), voting.quintile_votes(u)
    vote = [voting.majority_vote(votes[:, s].tolist(), float(pos[:, s].mean())) for s in range(u.shape[1])]
    return {
        "per_prompt": [auroc(s.tolist(), y) for s in scores],
        "vote": auroc(vote, y),
        "soft": auroc(pos.mean(0).tolist(), y),
    }


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--labeled",
    required=True,
    type=click.Path(dir_okay=False, exists=True),
    help="A COREN-labeled dev set (with info; its dist_p* are layout 1's answers).",
)
@click.option("--trajectories", default="0:10", show_default=True, help="Slice START:END of trajectories.")
@click.option("--prompts", default=4, show_default=True, type=click.IntRange(1, 4), help="Layout-2 variants.")
@click.option("--tail", "extra", multiple=True, help="Extra rating tail to try after the same preamble.")
@click.option("--cache", default="runs/coren/cache.sqlite", show_default=True, help="Judge cache.")
@click.option("--json-out", default="tools/results/probe_coren_tails.json", show_default=True)
def main(labeled: str, trajectories: str, prompts: int, extra: tuple[str, ...], cache: str, json_out: str):
    """Per-step AUROC of each layout-2 tail, their vote, and layout 1's on the same steps."""
    from labeler.coren.pipeline import CorenLabeler
    from labeler.coren.prompts import load_prompts, load_templates
    from labeler.judge import open_judge

    a, b = (int(x) for x in trajectories.split(":"))
    trajs = read_trajectories(labeled)[a:b]
    steps = [s for t in trajs for s in t.steps]
    y = [float(s.info.get("progress", 0)) > 0 for s in steps]
    out: dict = {"labeled": labeled, "trajectories": trajectories, "steps": len(steps), "progress": sum(y)}
    n_old = 0
    while steps and f"dist_p{n_old}" in steps[0].labels.get("coren", {}):
        n_old += 1
    if n_old:
        old = np.array([[s.labels["coren"][f"dist_p{n}"] for s in steps] for n in range(n_old)])
        out["layout1"] = summarize(old, y)
    ps = load_prompts(prompts)
    t = load_templates()
    tails = [(p.template_id, p.version, p.rate_tail or t.rating) for p in ps]
    tails += [(f"probe.tail.{i}", 1, x) for i, x in enumerate(extra)]
    t0 = time.process_time()
    with open_judge("gemma3-270m", n_threads=1, cache=str(ROOT / cache)) as judge:
        lab = CorenLabeler(judge, None, ps, t)  # type: ignore[arg-type]  # texts only, no embedding
        d = np.zeros((len(tails), len(steps), 2))
        k = 0
        for traj in trajs:
            ins, sts = lab.step_texts(traj)
            lead = t.preamble
            qs, tids, vers = [], [], []
            for st in sts:
                body = t.step.format(
                    instruction=ins, observation=st.observation, action=st.action, result=st.result
                )
                for tid, ver, tail in tails:
                    qs.append((lead + body + tail, list(t.choices)))
                    tids.append(tid)
                    vers.append(ver)
            res = judge.score_many(qs, template=tids, version=vers)
            for i in range(len(sts)):
                for n in range(len(tails)):
                    d[n, k + i] = res[i * len(tails) + n].probs
            k += len(sts)
    out["layout2"] = summarize(d[:prompts], y)
    out["layout2"]["tails"] = [x for _, _, x in tails[:prompts]]
    out["extra_tails"] = {
        x: summarize(d[prompts + i : prompts + i + 1], y)["per_prompt"][0] for i, x in enumerate(extra)
    }
    out["judge_cpu_seconds"] = time.process_time() - t0
    for name in ("layout1", "layout2"):
        if name in out:
            r = out[name]
            click.echo(
                f"{name}: per prompt {' '.join(f'{x:.3f}' for x in r['per_prompt'])} | vote {r['vote']:.3f} "
                f"| soft {r['soft']:.3f}"
            )
    for x, v in out["extra_tails"].items():
        click.echo(f"extra tail {x!r}: {v:.3f}")
    write_results(ROOT / json_out, out)


if __name__ == "__main__":
    main()
