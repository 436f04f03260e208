"""Judge benchmark: how fast the local GGUF judge answers the queries the labelers issue, in one run.

Queries are built from real TextWorldExpress steps (TWC, dev split, collected here with ``policy.collect``,
seeded), in the shapes the two labelers send:

- ``coren``: COREN's shipped prompts (``labeler/prompts/coren/``, read from the files; layout 2: one shared
  preamble of in-context examples, the step, then each prompt variant's short tail), per step and variant a
  *rate* query (task, observation head, action, result, the variant's rating tail -> ``" No"``/``" Yes"``)
  and a *choose* query (task, observation head, the candidate actions as lettered options, the variant's
  choose tail -> ``" A"``, ``" B"``, ...); one ``score_many`` call per trajectory with every variant's
  queries, as COREN makes (``--coren-prompts`` variants, default 4).
- ``coren1``: the same with COREN's first layout (``labeler/prompts/coren/v1/``: a header with its own
  examples per variant before the step; one ``score_many`` per trajectory and variant, as COREN made).
- ``trca``: the transition (task, action, game response) and one of four rubric statements -> ``" yes"``/
  ``" no"``; one ``score`` call per (step, statement), as TRCA's judge items make (labeler/trca/pipeline.py).
- ``cand``: COREN's very first design (every candidate rated -2..2 after the full observation; own texts).

Measured on the same queries, one thread, interleaved trajectory by trajectory:

- (a) ceiling: llama.cpp's raw prompt evaluation (``Llama.eval`` of whole prompts from an empty KV cache, in
  batches of ``n_batch``), tokens/s;
- (b) naive: every query evaluated from scratch (KV cache cleared before each), no label cache, no dedup;
- (c) edgejudge: the labelers' calls with prefix reuse, parallel tails, dedup and a cold label cache (then a
  warm rerun, reported separately).

Reported per CPU-second of this process and per wall-second (the box is shared): queries/s, evaluated
tokens/s, "effective" tokens/s (the tokens (b) had to evaluate, divided by the time (c) took), the ratios
(c)/(b) and (c)/(a), and how closely (c)'s log-probs match (b)'s.

    python -m tools.bench.bench_judge --out tools/results/bench_judge.json
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from models.cli_options import gpu_layers_option, judge_option, progress_option, threads_option
from tools.bench.benchlib import provenance, write_results

TASK = "Pick up objects, then place them in their usual locations."
CAND_RATE = (
    "Rate each action of a household robot from -2 (wrong for the task) to 2 (completes part of the task)."
)
# shape 'cand' (COREN's first design): every candidate rated -2..2 with the full observation;
# (observation, action, result, rating) examples of its two prompt variants
_CAND_EXAMPLES = (
    (
        (
            "Room: You are in the bathroom. You see a sink, a bath mat and a towel rack, that has "
            "nothing on it. There is also a wet towel.\nInventory: empty",
            "take wet towel",
            "Feedback: You take the wet towel.",
            2,
        ),
        (
            "Room: You are in the bathroom. You see a sink, a bath mat and a towel rack.\n"
            "Inventory: a wet towel",
            "inventory",
            "Inventory: a wet towel",
            0,
        ),
        (
            "Room: You are in the bathroom. You see a sink, a bath mat and a towel rack.\n"
            "Inventory: a wet towel",
            "put wet towel in sink",
            "Feedback: You put the wet towel in the sink.",
            -2,
        ),
    ),
    (
        (
            "Room: You are in the living room. You see a sofa, a bookcase that is empty, and a coffee "
            "table. There is also a novel.\nInventory: empty",
            "take novel",
            "Feedback: You take the novel.",
            2,
        ),
        (
            "Room: You are in the living room. You see a sofa, a bookcase that is empty, and a coffee "
            "table.\nInventory: a novel",
            "put novel in bookcase",
            "Feedback: You put the novel in the bookcase.",
            2,
        ),
        (
            "Room: You are in the living room. You see a sofa and a coffee table.\nInventory: empty",
            "look around",
            "Room: You are in the living room. You see a sofa and a coffee table.",
            0,
        ),
    ),
)
CAND_HEADERS = tuple(
    CAND_RATE
    + "\n\n"
    + "".join(
        f"Task: {TASK}\nObservation: {o}\nAction: {a}\nResult: {r}\nRating: {v}\n\n" for o, a, r, v in ex
    )
    for ex in _CAND_EXAMPLES
)
CAND_CHOICES = [" -2", " -1", " 0", " 1", " 2"]
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
OBS_WORDS = 36  # about COREN's default 48-token observation head
TRCA_HEADER = "You check one step of an agent in a text game."
TRCA_STATEMENTS = (
    "The agent picked up an object that is not in its usual location.",
    "The agent put an object in its usual location.",
    "The step revealed new information about the room or its objects.",
    "The action failed, was not allowed, or changed nothing.",
)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _head(text: str, words: int) -> str:
    """The first ``words`` words of ``text`` with its line breaks (COREN's observation head, by words)."""
    parts = re.split(r"(\s+)", text.strip())
    kept = parts[: 2 * words - 1]
    return "".join(kept) + (" ..." if len(parts) > len(kept) else "")


def _coren_queries(
    pattern: str, folder: Path, n_prompts: int, ins: str, obs: str, s: Any, result: str
) -> list:
    """One step's COREN queries built from the prompt files exactly as labeler.coren.pipeline composes them
    (header + preamble + body + tail)."""
    from labeler.coren.pipeline import StepText, ranked_candidates
    from labeler.coren.prompts import load_prompts, load_templates

    t = load_templates(folder)
    st = StepText(obs, s.action, result, list(s.candidates))
    ranked = ranked_candidates(st, len(t.letters))
    options = "\n".join(f"{t.letters[i]}. {st.candidates[c]}" for i, c in enumerate(ranked))
    out = []
    for v, p in enumerate(p for p in load_prompts(n_prompts, folder) if not p.cot):
        lead = p.header + t.preamble
        rate = t.step.format(instruction=ins, observation=obs, action=s.action, result=result)
        choose = t.choose.format(instruction=ins, observation=obs, options=options)
        base = {"pattern": pattern, "variant": v, "template": p.template_id, "version": p.version}
        out.append({**base, "choices": list(t.choices), "prefix": lead + rate + (p.rate_tail or t.rating)})
        out.append(
            {
                **base,
                "choices": [" " + t.letters[i] for i in range(len(ranked))],
                "prefix": lead + choose + p.choose_tail,
            }
        )
    return out


def build_queries(
    n_steps: int,
    seed: int,
    patterns: tuple[str, ...] = ("coren", "trca"),
    n_candidates: int = 5,
    coren_prompts: int = 4,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Real TWC dev steps -> judge queries ``{"pattern", "traj", "variant", "prefix", "choices"}``."""
    import random

    from labeler.coren.prompts import PROMPT_DIR
    from policy.collect import CollectConfig, collect
    from policy.envs import parse_env

    rng = random.Random(seed)
    steps = []
    episodes = 0
    cfg = CollectConfig(
        env=parse_env("twx:twc"),
        split="dev",
        episodes=max(2, n_steps),
        behaviour="gold-noise=0.5,random=0.5",
        noise=0.4,
        seed=seed,
        max_steps=12,
    )
    for t in collect(cfg):
        steps.extend((episodes, t.instruction, s, r) for s, r in zip(t.steps, t.responses(), strict=True))
        episodes += 1
        if len(steps) >= n_steps:
            break
    steps = steps[:n_steps]
    queries: list[dict[str, Any]] = []
    for traj, ins, s, response in steps:
        result = _one_line((s.info.get("feedback") or "(nothing new)").strip().splitlines()[0])
        obs = _head(s.observation, OBS_WORDS)
        coren_result = response or "(nothing new)"
        for pattern, folder in (("coren", PROMPT_DIR), ("coren1", PROMPT_DIR / "v1")):
            if pattern in patterns:
                for q in _coren_queries(pattern, folder, coren_prompts, ins, obs, s, coren_result):
                    queries.append({**q, "traj": traj})
        if "cand" in patterns:
            others = [c for c in s.candidates if c != s.action]
            picked = rng.sample(others, min(n_candidates, len(others)))
            for v, head in enumerate(CAND_HEADERS):
                stem = f"{head}Task: {ins}\nObservation: {s.observation}\n"
                queries.append(
                    {
                        "pattern": "cand",
                        "traj": traj,
                        "variant": v,
                        "choices": CAND_CHOICES,
                        "prefix": f"{stem}Action: {s.action}\nResult: {result}\nRating:",
                    }
                )
                for c in picked:
                    queries.append(
                        {
                            "pattern": "cand",
                            "traj": traj,
                            "variant": v,
                            "choices": CAND_CHOICES,
                            "prefix": f"{stem}Action: {c}\nResult: (not taken yet)\nRating:",
                        }
                    )
        for st in TRCA_STATEMENTS if "trca" in patterns else ():
            queries.append(
                {
                    "pattern": "trca",
                    "traj": traj,
                    "variant": 0,
                    "choices": [" yes", " no"],
                    "prefix": f"{TRCA_HEADER}\nTask: {ins}\nAction: {s.action}\nGame response: {result}\n"
                    f"Statement: {st}\nIs the statement true for this step? Answer yes or no.\nAnswer:",
                }
            )
    return queries, {
        "steps": len(steps),
        "episodes": episodes,
        "env": "twx:twc",
        "split": "dev",
        "seed": seed,
        "coren_variants": len({q["variant"] for q in queries if q["pattern"] == "coren"}),
        "trca_statements": len(TRCA_STATEMENTS),
    }


class _Clock:
    """Wall and process-CPU seconds. The box is shared: CPU time is what the judge itself spent (one thread),
    wall time also counts waiting for a core behind other people's jobs."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def __enter__(self) -> _Clock:
        self._w, self._c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.wall += time.perf_counter() - self._w
        self.cpu += time.process_time() - self._c


def _groups(queries: list[dict[str, Any]]) -> list[tuple[int, str, list[int]]]:
    """The labelers' call pattern, per trajectory: COREN sends all prompt variants' queries of a trajectory
    in one ``score_many`` call (shape coren); its first layout sent one call per variant (coren1, cand);
    TRCA asks ``score`` once per (step, statement)."""
    out: list[tuple[int, str, list[int]]] = []
    patterns = sorted({q["pattern"] for q in queries})
    for traj in sorted({q["traj"] for q in queries}):
        for p in patterns:
            per_variant = p in ("coren1", "cand")
            for v in sorted({q["variant"] for q in queries if q["pattern"] == p}) if per_variant else [None]:
                idx = [
                    i
                    for i, q in enumerate(queries)
                    if q["traj"] == traj and q["pattern"] == p and (v is None or q["variant"] == v)
                ]
                if idx:
                    out.append((traj, p, idx))
    return out


def _keys(queries: list[dict[str, Any]], idx: list[int], pattern: str) -> dict[str, Any]:
    """The cache keys the labeler uses: COREN's per-prompt template ids and versions, else the bench's."""
    if pattern.startswith("coren"):
        return {
            "template": [queries[i]["template"] for i in idx],
            "version": [queries[i]["version"] for i in idx],
        }
    return {"template": f"bench.{pattern}", "version": 1}


def _ceiling(judge: Any, prompts: list[str], clock: _Clock) -> int:
    """(a): llama-cpp-python's own ``Llama.eval`` of whole prompts from an empty KV cache; returns tokens."""
    llm = judge._llm
    total = 0
    for p in prompts:
        t = judge.tokenize(p, bos=True)
        judge.reset()
        with clock:
            llm.eval(t)
        total += len(t)
    judge.reset()
    return total


def _rate(n: float, clock: _Clock) -> dict[str, float]:
    return {"per_s_cpu": n / clock.cpu, "per_s_wall": n / clock.wall}


def run(
    model: str,
    steps: int,
    seed: int,
    threads: int,
    ceiling_prompts: int,
    progress: bool | None,
    patterns: tuple[str, ...] = ("coren", "trca"),
    candidates: int = 5,
    coren_prompts: int = 4,
    gpu_layers: int = 0,
) -> dict:
    """(a), (b) and (c) interleaved trajectory by trajectory, so that load from other jobs on the box hits all
    three alike; ratios are reported on process CPU time and on wall time."""
    from labeler.judge import open_judge
    from labeler.progress import progress as bar

    t0 = time.perf_counter()
    queries, data = build_queries(steps, seed, patterns, candidates, coren_prompts)
    collect_s = time.perf_counter() - t0
    groups = _groups(queries)
    unique = len({(q["prefix"], tuple(q["choices"])) for q in queries})
    clocks = {k: _Clock() for k in ("a", "b", "c", "warm")}
    names = sorted({q["pattern"] for q in queries})
    per = {(m, p): _Clock() for m in ("b", "c") for p in names}
    tokens_a = 0
    res_b: list[list[float]] = [[] for _ in queries]
    res_c: list[list[float]] = [[] for _ in queries]
    ev = {"b": 0, "c": 0}
    ev_pat = {(m, p): 0 for m in ("b", "c") for p in names}
    kw = {"n_threads": threads, "n_threads_batch": threads, "n_ctx": 2048, "n_gpu_layers": gpu_layers}
    with (
        tempfile.TemporaryDirectory(prefix="bench-judge-") as tmp,
        open_judge(model, cache=None, **kw) as jb,
        open_judge(model, cache=Path(tmp) / "labels.sqlite", **kw) as jc,
        bar(total=len(queries), enabled=progress, desc="judge bench", unit="q") as pb,
    ):
        per_traj = max(1, ceiling_prompts // max(1, len({q["traj"] for q in queries})))
        done_a: set[int] = set()
        for traj, pattern, idx in groups:
            if traj not in done_a:  # (a) on whole prompts of this trajectory, both shapes
                done_a.add(traj)
                mine = [q["prefix"] for q in queries if q["traj"] == traj]
                tokens_a += _ceiling(
                    jb,
                    mine[:per_traj]
                    + [q["prefix"] for q in queries if q["traj"] == traj and q["pattern"] == "trca"][:1],
                    clocks["a"],
                )
            # (b) naive: every query from scratch
            for i in idx:
                jb.reset()
                e0 = jb.stats["evaluated_tokens"]
                with clocks["b"], per[("b", pattern)]:
                    res_b[i] = jb.score(queries[i]["prefix"], queries[i]["choices"]).logprobs
                ev_pat[("b", pattern)] += int(jb.stats["evaluated_tokens"] - e0)
            # (c) edgejudge, called the way the labelers call it
            e0 = jc.stats["evaluated_tokens"]
            with clocks["c"], per[("c", pattern)]:
                if pattern != "trca":
                    out = jc.score_many(
                        [(queries[i]["prefix"], queries[i]["choices"]) for i in idx],
                        **_keys(queries, idx, pattern),
                    )
                    for i, r in zip(idx, out, strict=True):
                        res_c[i] = r.logprobs
                else:
                    for i in idx:
                        res_c[i] = jc.score(
                            queries[i]["prefix"], queries[i]["choices"], template="bench.trca", version=1
                        ).logprobs
            ev_pat[("c", pattern)] += int(jc.stats["evaluated_tokens"] - e0)
            pb.update(len(idx))
        ev["b"] = sum(v for (m, _), v in ev_pat.items() if m == "b")
        ev["c"] = sum(v for (m, _), v in ev_pat.items() if m == "c")
        hits_c = int(jc.stats["cache_hits"])
        # warm rerun: the same calls again, all answered by the label cache
        h0 = jc.stats["cache_hits"]
        with clocks["warm"]:
            for _, pattern, idx in groups:
                jc.score_many(
                    [(queries[i]["prefix"], queries[i]["choices"]) for i in idx],
                    **_keys(queries, idx, pattern),
                )
        warm_hits = int(jc.stats["cache_hits"] - h0)
        sha = jc.model_sha256
    n = len(queries)
    diffs = [abs(x - y) for rb, rc in zip(res_b, res_c, strict=True) for x, y in zip(rb, rc, strict=True)]
    a, b, c = clocks["a"], clocks["b"], clocks["c"]
    qps = {k: _rate(n, clocks[k]) for k in ("b", "c")}
    tps = {"a": _rate(tokens_a, a), "b": _rate(ev["b"], b), "c": _rate(ev["c"], c)}
    eff = _rate(ev["b"], c)  # the tokens naive judging needs, per second of edgejudge

    def ratio(x: dict[str, float], y: dict[str, float]) -> dict[str, float]:
        return {"cpu": x["per_s_cpu"] / y["per_s_cpu"], "wall": x["per_s_wall"] / y["per_s_wall"]}

    by_pattern = {}
    for p in names:
        nq = sum(q["pattern"] == p for q in queries)
        if nq:
            by_pattern[p] = {
                "queries": nq,
                "b_queries_per_s_cpu": nq / per[("b", p)].cpu,
                "c_queries_per_s_cpu": nq / per[("c", p)].cpu,
                "c_over_b_cpu": per[("b", p)].cpu / per[("c", p)].cpu,
                "b_evaluated_tokens": ev_pat[("b", p)],
                "c_evaluated_tokens": ev_pat[("c", p)],
            }
    r = {
        "benchmark": "judge",
        "command": "python -m tools.bench.bench_judge " + " ".join(sys.argv[1:]),
        "model": model,
        "model_sha256": sha,
        "threads": threads,
        "gpu_layers": gpu_layers,
        "data": {
            **data,
            "queries": n,
            "unique_queries": unique,
            "collect_seconds": round(collect_s, 2),
            "patterns": {p: sum(q["pattern"] == p for q in queries) for p in names},
        },
        "a_ceiling": {
            "tokens": tokens_a,
            "seconds_cpu": a.cpu,
            "seconds_wall": a.wall,
            "tokens_per_s_cpu": tps["a"]["per_s_cpu"],
            "tokens_per_s_wall": tps["a"]["per_s_wall"],
        },
        "b_naive": {
            "queries": n,
            "evaluated_tokens": ev["b"],
            "seconds_cpu": b.cpu,
            "seconds_wall": b.wall,
            "queries_per_s_cpu": qps["b"]["per_s_cpu"],
            "queries_per_s_wall": qps["b"]["per_s_wall"],
            "tokens_per_s_cpu": tps["b"]["per_s_cpu"],
            "tokens_per_s_wall": tps["b"]["per_s_wall"],
        },
        "c_edgejudge": {
            "queries": n,
            "cache_hits": hits_c,
            "evaluated_tokens": ev["c"],
            "reused_tokens": int(jc.stats["reused_tokens"]),
            "seconds_cpu": c.cpu,
            "seconds_wall": c.wall,
            "queries_per_s_cpu": qps["c"]["per_s_cpu"],
            "queries_per_s_wall": qps["c"]["per_s_wall"],
            "tokens_per_s_cpu": tps["c"]["per_s_cpu"],
            "tokens_per_s_wall": tps["c"]["per_s_wall"],
            "effective_tokens_per_s_cpu": eff["per_s_cpu"],
            "effective_tokens_per_s_wall": eff["per_s_wall"],
        },
        "c_warm_rerun": {
            "queries": n,
            "cache_hits": warm_hits,
            "seconds_wall": clocks["warm"].wall,
            "queries_per_s_wall": n / clocks["warm"].wall,
        },
        "by_pattern": by_pattern,
        "ratios": {
            "c_over_b_queries_per_s": ratio(qps["c"], qps["b"]),
            "c_eval_tokens_per_s_over_a": ratio(tps["c"], tps["a"]),
            "b_eval_tokens_per_s_over_a": ratio(tps["b"], tps["a"]),
            "c_effective_tokens_per_s_over_a": ratio(eff, tps["a"]),
        },
        "agreement": {
            "max_abs_logprob_diff_b_vs_c": max(diffs),
            "mean_abs_logprob_diff": sum(diffs) / len(diffs),
        },
    }
    x = r["ratios"]
    r["targets"] = {
        "c_over_b_queries_per_s >= 5 (cpu)": x["c_over_b_queries_per_s"]["cpu"] >= 5,
        "c_eval_tokens_per_s >= 0.7 a (cpu)": x["c_eval_tokens_per_s_over_a"]["cpu"] >= 0.7,
    }
    return r


def _fmt(r: dict) -> str:
    a, b, c, w, x = r["a_ceiling"], r["b_naive"], r["c_edgejudge"], r["c_warm_rerun"], r["ratios"]
    d = r["data"]
    lines = [
        f"judge benchmark: {r['model']} ({r['model_sha256'][:12]}), {r['threads']} thread(s), "
        f"{r['machine']}, load average {r['load_average'][0]:.1f}",
        f"data: {d['steps']} real TWC dev steps, {d['episodes']} episode(s) -> {d['queries']} queries "
        f"({d['patterns']}, {d['unique_queries']} unique)",
        "                 per CPU-second          per wall-second",
        f"(a) ceiling    {a['tokens_per_s_cpu']:8.1f} tok/s          {a['tokens_per_s_wall']:8.1f} tok/s"
        f"   ({a['tokens']} tokens)",
        f"(b) naive      {b['queries_per_s_cpu']:8.3f} q/s {b['tokens_per_s_cpu']:7.1f} tok/s  "
        f"{b['queries_per_s_wall']:8.3f} q/s {b['tokens_per_s_wall']:7.1f} tok/s"
        f"   ({b['evaluated_tokens']} tokens)",
        f"(c) edgejudge  {c['queries_per_s_cpu']:8.3f} q/s {c['tokens_per_s_cpu']:7.1f} tok/s  "
        f"{c['queries_per_s_wall']:8.3f} q/s {c['tokens_per_s_wall']:7.1f} tok/s"
        f"   ({c['evaluated_tokens']} tokens)",
        f"(c) effective  {c['effective_tokens_per_s_cpu']:8.1f} tok/s (tokens (b) needed / time (c) took)",
        f"(c) warm rerun {w['queries_per_s_wall']:8.1f} q/s (all {w['cache_hits']} from the cache)",
        f"(c)/(b) queries/s       {x['c_over_b_queries_per_s']['cpu']:.2f}x cpu, "
        f"{x['c_over_b_queries_per_s']['wall']:.2f}x wall   (target >= 5)",
        f"(c)/(a) eval tokens/s   {x['c_eval_tokens_per_s_over_a']['cpu']:.2f} cpu, "
        f"{x['c_eval_tokens_per_s_over_a']['wall']:.2f} wall    (target >= 0.70)",
        f"(c)/(a) effective       {x['c_effective_tokens_per_s_over_a']['cpu']:.2f} cpu",
        f"max |logprob (b) - (c)| {r['agreement']['max_abs_logprob_diff_b_vs_c']:.3f} nat "
        f"(mean {r['agreement']['mean_abs_logprob_diff']:.3f})",
    ]
    for p, v in r["by_pattern"].items():
        lines.append(
            f"  {p:6s} (b) {v['b_queries_per_s_cpu']:.3f} q/s  (c) {v['c_queries_per_s_cpu']:.3f} q/s  "
            f"-> {v['c_over_b_cpu']:.2f}x   tokens {v['b_evaluated_tokens']} -> {v['c_evaluated_tokens']}"
        )
    return "\n".join(lines)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@judge_option("model")
@click.option(
    "--steps",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Real TWC dev steps; each gives 2 coren queries per variant (rate, choose) and 4 trca queries.",
)
@click.option(
    "--patterns",
    default="coren,trca",
    show_default=True,
    help="Query shapes, comma-separated: coren, trca (the labelers' current shapes), coren1 (COREN's first "
    "prompt layout: a header per variant) and cand (every "
    "candidate action rated -2..2 with the full observation: COREN's first design).",
)
@click.option(
    "--coren-prompts",
    type=click.IntRange(min=1, max=4),
    default=4,
    show_default=True,
    help="COREN prompt variants per step (the first N prompt files; the cot prompt is never used here).",
)
@click.option(
    "--candidates",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Candidates per step rated by the cand shape (besides the taken action).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Collection seed.")
@threads_option()
@click.option(
    "--ceiling-prompts",
    type=click.IntRange(min=1),
    default=6,
    show_default=True,
    help="Whole prompts evaluated for the (a) ceiling.",
)
@gpu_layers_option("gpu_layers")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Also write the JSON result here.")
@progress_option()
def main(
    model: str,
    steps: int,
    patterns: str,
    candidates: int,
    coren_prompts: int,
    seed: int,
    threads: int | None,
    ceiling_prompts: int,
    gpu_layers: int,
    as_json: bool,
    out: str | None,
    progress: bool | None,
) -> None:
    """Measure (a) raw prompt eval, (b) naive judging, (c) edgejudge judging on real TWC steps."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    names = tuple(p.strip() for p in patterns.split(",") if p.strip())
    unknown = sorted(set(names) - {"coren", "coren1", "trca", "cand"})
    if unknown or not names:
        raise click.BadParameter(
            f"unknown shape(s) {', '.join(unknown) or '(none)'}: use coren, coren1, trca, cand",
            param_hint="--patterns",
        )
    r = run(
        model,
        steps,
        seed,
        threads,
        ceiling_prompts,
        progress,
        names,
        candidates,
        coren_prompts,
        gpu_layers,
    )
    r = write_results(out, r) if out else {**provenance(), **r}
    click.echo(json.dumps(r, indent=2) if as_json else _fmt(r))


if __name__ == "__main__":
    main()
