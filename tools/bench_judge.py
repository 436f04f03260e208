"""Judge benchmark: how fast the local GGUF judge answers the queries the labelers issue, in one run.

Queries are built from real TextWorldExpress steps (TWC, dev split, collected here with ``policy.collect``,
seeded), in the two shapes the labelers issue (see labeler/coren/pipeline.py and labeler/trca/pipeline.py):

- ``coren``: a prompt variant's header (instruction + in-context examples), then the step (task, observation,
  action, result) and ``Rating:``, choices ``" -2" .. " 2"``. Per step and variant: the taken action with its
  result, and each candidate action without one (COREN ranks the candidates for its temporal check). Two
  variants with different in-context examples.
- ``trca``: a short header, the transition (task, action, game response), one rubric statement, choices
  ``" yes"``/``" no"``; four statements per step.

Measured, on the same queries, one thread:

- (a) ceiling: llama.cpp's raw prompt evaluation (``Llama.eval`` of whole prompts from an empty KV cache, in
  batches of ``n_batch``), tokens/s;
- (b) naive: every query evaluated from scratch (KV cache cleared before each), no label cache, no dedup;
- (c) edgejudge: ``score_many`` with prefix reuse, dedup and a cold label cache (then a warm rerun, reported
  separately).

Reported: queries/s, evaluated tokens/s, "effective" tokens/s (the tokens (b) had to evaluate, divided by the
time (c) took), the ratios (c)/(b) and (c)/(a), and how closely (c)'s log-probs match (b)'s.

    python tools/bench_judge.py --steps 5 --json --out bench-judge.json
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import click  # noqa: E402

TASK = "Pick up objects, then place them in their usual locations."
RATE = "Rate each action of a household robot from -2 (wrong for the task) to 2 (completes part of the task)."
# (observation, action, result, rating): in-context examples of the two prompt variants
_EXAMPLES = (
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
COREN_HEADERS = tuple(
    RATE
    + "\n\n"
    + "".join(
        f"Task: {TASK}\nObservation: {o}\nAction: {a}\nResult: {r}\nRating: {v}\n\n" for o, a, r, v in ex
    )
    for ex in _EXAMPLES
)
COREN_CHOICES = [" -2", " -1", " 0", " 1", " 2"]
TRCA_HEADER = "You check one step of an agent in a text game."
TRCA_STATEMENTS = (
    "The agent picked up an object that is not in its usual location.",
    "The agent put an object in its usual location.",
    "The step revealed new information about the room or its objects.",
    "The action failed, was not allowed, or changed nothing.",
)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def build_queries(n_steps: int, n_candidates: int, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Real TWC dev steps -> judge queries ``{"pattern", "prefix", "choices"}``."""
    import random

    from policy.collect import CollectConfig, collect
    from policy.twx_env import parse_env

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
        episodes += 1
        steps.extend((t.instruction, s) for s in t.steps)
        if len(steps) >= n_steps:
            break
    steps = steps[:n_steps]
    queries = []
    for ins, s in steps:
        result = _one_line(s.info.get("feedback") or "(nothing new)")
        others = [c for c in s.candidates if c != s.action]
        cands = rng.sample(others, min(n_candidates, len(others)))
        for head in COREN_HEADERS:
            stem = f"{head}Task: {ins}\nObservation: {s.observation}\n"
            queries.append(
                {
                    "pattern": "coren",
                    "prefix": f"{stem}Action: {s.action}\nResult: {result}\nRating:",
                    "choices": COREN_CHOICES,
                }
            )
            for c in cands:
                queries.append(
                    {
                        "pattern": "coren",
                        "prefix": f"{stem}Action: {c}\nResult: (not taken yet)\nRating:",
                        "choices": COREN_CHOICES,
                    }
                )
        for st in TRCA_STATEMENTS:
            queries.append(
                {
                    "pattern": "trca",
                    "prefix": f"{TRCA_HEADER}\nTask: {ins}\nAction: {s.action}\n"
                    f"Game response: {result}\nStatement: {st}\nIs the statement true for this step? "
                    "Answer yes or no.\nAnswer:",
                    "choices": [" yes", " no"],
                }
            )
    return queries, {
        "steps": len(steps),
        "episodes": episodes,
        "env": "twx:twc",
        "split": "dev",
        "seed": seed,
        "candidates_per_step": n_candidates,
        "coren_variants": len(COREN_HEADERS),
        "trca_statements": len(TRCA_STATEMENTS),
    }


def _ceiling(judge: Any, prompts: list[str]) -> dict[str, Any]:
    """(a): llama-cpp-python's own Llama.eval of whole prompts from an empty KV cache."""
    llm = judge._llm
    toks = [judge.tokenize(p, bos=True) for p in prompts]
    total = 0
    secs = 0.0
    for t in toks:
        judge.reset()
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.n_tokens = 0
        t0 = time.perf_counter()
        llm.eval(t)
        secs += time.perf_counter() - t0
        total += len(t)
    judge.reset()
    llm.n_tokens = 0
    return {"prompts": len(toks), "tokens": total, "seconds": secs, "tokens_per_s": total / secs}


def _naive(judge: Any, queries: list[dict[str, Any]], progress: bool | None) -> dict[str, Any]:
    from labeler.progress import progress as bar

    out: dict[str, Any] = {"results": [], "by_pattern": {}}
    ev0 = judge.stats["evaluated_tokens"]
    t_all = time.perf_counter()
    with bar(total=len(queries), enabled=progress, desc="(b) naive", unit="q") as pb:
        for q in queries:
            judge.reset()
            e0 = judge.stats["evaluated_tokens"]
            t0 = time.perf_counter()
            s = judge.score(q["prefix"], q["choices"])
            dt = time.perf_counter() - t0
            bp = out["by_pattern"].setdefault(
                q["pattern"], {"queries": 0, "seconds": 0.0, "evaluated_tokens": 0}
            )
            bp["queries"] += 1
            bp["seconds"] += dt
            bp["evaluated_tokens"] += judge.stats["evaluated_tokens"] - e0
            out["results"].append(s.logprobs)
            pb.update(1)
    secs = time.perf_counter() - t_all
    ev = judge.stats["evaluated_tokens"] - ev0
    out.update(
        queries=len(queries),
        seconds=secs,
        queries_per_s=len(queries) / secs,
        evaluated_tokens=ev,
        tokens_per_s=ev / secs,
    )
    for bp in out["by_pattern"].values():
        bp["queries_per_s"] = bp["queries"] / bp["seconds"]
    judge.reset()
    return out


def _edgejudge(
    judge: Any, queries: list[dict[str, Any]], naive_tokens: int, progress: bool | None
) -> dict[str, Any]:
    before = dict(judge.stats)
    out: dict[str, Any] = {"by_pattern": {}}
    results: list[list[float] | None] = [None] * len(queries)
    t_all = time.perf_counter()
    for pattern in sorted({q["pattern"] for q in queries}):
        idx = [i for i, q in enumerate(queries) if q["pattern"] == pattern]
        e0 = judge.stats["evaluated_tokens"]
        t0 = time.perf_counter()
        res = judge.score_many(
            [(queries[i]["prefix"], queries[i]["choices"]) for i in idx],
            template=f"bench.{pattern}",
            version=1,
            progress=progress,
        )
        dt = time.perf_counter() - t0
        for i, s in zip(idx, res, strict=True):
            results[i] = s.logprobs
        out["by_pattern"][pattern] = {
            "queries": len(idx),
            "seconds": dt,
            "queries_per_s": len(idx) / dt,
            "evaluated_tokens": judge.stats["evaluated_tokens"] - e0,
        }
    secs = time.perf_counter() - t_all
    d = {k: judge.stats[k] - before[k] for k in judge.stats}
    out.update(
        queries=len(queries),
        seconds=secs,
        queries_per_s=len(queries) / secs,
        cache_hits=d["cache_hits"],
        evaluated_tokens=d["evaluated_tokens"],
        reused_tokens=d["reused_tokens"],
        tokens_per_s=d["evaluated_tokens"] / secs,
        effective_tokens_per_s=naive_tokens / secs,
        results=results,
    )
    return out


def run(
    model: str,
    steps: int,
    candidates: int,
    seed: int,
    threads: int,
    ceiling_prompts: int,
    progress: bool | None,
) -> dict:
    from labeler.judge import open_judge

    t0 = time.perf_counter()
    queries, data = build_queries(steps, candidates, seed)
    collect_s = time.perf_counter() - t0
    unique = len({(q["prefix"], tuple(q["choices"])) for q in queries})
    with tempfile.TemporaryDirectory(prefix="bench-judge-") as tmp:
        with open_judge(model, n_threads=threads, n_threads_batch=threads, n_ctx=2048, cache=None) as judge:
            coren = [q["prefix"] for q in queries if q["pattern"] == "coren"][:ceiling_prompts]
            a = _ceiling(judge, coren)
            b = _naive(judge, queries, progress)
        # (c) on a fresh judge instance and a cold cache: nothing carried over from (b)
        with open_judge(
            model, n_threads=threads, n_threads_batch=threads, n_ctx=2048, cache=Path(tmp) / "labels.sqlite"
        ) as judge:
            c = _edgejudge(judge, queries, b["evaluated_tokens"], progress)
            # warm rerun: the same queries again, per pattern like (c); everything comes from the cache
            warm_s = 0.0
            hits0 = judge.stats["cache_hits"]
            for pattern in sorted({q["pattern"] for q in queries}):
                t2 = time.perf_counter()
                judge.score_many(
                    [(q["prefix"], q["choices"]) for q in queries if q["pattern"] == pattern],
                    template=f"bench.{pattern}",
                    version=1,
                )
                warm_s += time.perf_counter() - t2
            warm_hits = judge.stats["cache_hits"] - hits0
            sha = judge.model_sha256
    diffs = [
        abs(x - y)
        for rb, rc in zip(b.pop("results"), c.pop("results"), strict=True)
        for x, y in zip(rb, rc or [], strict=True)
    ]
    return {
        "benchmark": "judge",
        "model": model,
        "model_sha256": sha,
        "threads": threads,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs visible, {platform.python_implementation()} "
        f"{platform.python_version()}",
        "data": {
            **data,
            "queries": len(queries),
            "unique_queries": unique,
            "patterns": {p: sum(q["pattern"] == p for q in queries) for p in ("coren", "trca")},
            "collect_seconds": round(collect_s, 2),
        },
        "a_ceiling": a,
        "b_naive": b,
        "c_edgejudge": c,
        "c_warm_rerun": {
            "queries": len(queries),
            "seconds": warm_s,
            "cache_hits": warm_hits,
            "queries_per_s": len(queries) / warm_s if warm_s else None,
        },
        "ratios": {
            "c_over_b_queries_per_s": c["queries_per_s"] / b["queries_per_s"],
            "c_eval_tokens_per_s_over_a": c["tokens_per_s"] / a["tokens_per_s"],
            "b_eval_tokens_per_s_over_a": b["tokens_per_s"] / a["tokens_per_s"],
            "c_effective_tokens_per_s_over_a": c["effective_tokens_per_s"] / a["tokens_per_s"],
        },
        "agreement": {
            "max_abs_logprob_diff_b_vs_c": max(diffs),
            "mean_abs_logprob_diff": sum(diffs) / len(diffs),
        },
        "targets": {
            "c_over_b_queries_per_s >= 5": c["queries_per_s"] / b["queries_per_s"] >= 5,
            "c_eval_tokens_per_s >= 0.7 a": c["tokens_per_s"] / a["tokens_per_s"] >= 0.7,
        },
    }


def _fmt(r: dict) -> str:
    a, b, c, w, x = r["a_ceiling"], r["b_naive"], r["c_edgejudge"], r["c_warm_rerun"], r["ratios"]
    lines = [
        f"judge benchmark: {r['model']} ({r['model_sha256'][:12]}), {r['threads']} thread(s), {r['machine']}",
        f"data: {r['data']['steps']} real TWC dev steps -> {r['data']['queries']} queries "
        f"({r['data']['patterns']}, {r['data']['unique_queries']} unique)",
        f"(a) ceiling   {a['tokens_per_s']:8.1f} tok/s  ({a['tokens']} tokens, {a['prompts']} whole prompts)",
        f"(b) naive     {b['queries_per_s']:8.3f} q/s    {b['tokens_per_s']:8.1f} tok/s  "
        f"({b['evaluated_tokens']} tokens, {b['seconds']:.1f} s)",
        f"(c) edgejudge {c['queries_per_s']:8.3f} q/s    {c['tokens_per_s']:8.1f} tok/s  "
        f"({c['evaluated_tokens']} tokens, {c['seconds']:.1f} s; "
        f"effective {c['effective_tokens_per_s']:.1f} tok/s)",
        f"(c) warm rerun {w['queries_per_s'] or 0:8.1f} q/s (all {w['cache_hits']} from the cache)",
        f"(c)/(b) queries/s      {x['c_over_b_queries_per_s']:.2f}x   (target >= 5)",
        f"(c)/(a) eval tokens/s  {x['c_eval_tokens_per_s_over_a']:.2f}    (target >= 0.70)",
        f"max |logprob (b) - (c)| {r['agreement']['max_abs_logprob_diff_b_vs_c']:.3f} nat",
    ]
    for p in sorted(b["by_pattern"]):
        bb, cc = b["by_pattern"][p], c["by_pattern"][p]
        lines.append(
            f"  {p:6s} (b) {bb['queries_per_s']:.3f} q/s  (c) {cc['queries_per_s']:.3f} q/s  "
            f"-> {cc['queries_per_s'] / bb['queries_per_s']:.2f}x"
        )
    return "\n".join(lines)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--model", default="gemma3-270m", show_default=True, help="Judge: embedded name or .gguf path.")
@click.option(
    "--steps",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Real TWC dev steps; each gives 2 x (1 + candidates) coren and 4 trca queries.",
)
@click.option(
    "--candidates",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="Candidate actions per step that the coren pattern rates besides the taken action.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Collection seed.")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="llama.cpp threads [default: $EDGEJUDGE_THREADS or 1].",
)
@click.option(
    "--ceiling-prompts",
    type=click.IntRange(min=1),
    default=6,
    show_default=True,
    help="Whole prompts evaluated for the (a) ceiling.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Also write the JSON result here.")
@click.option("--progress/--no-progress", default=None, help="Progress bars [default: on a terminal].")
def main(
    model: str,
    steps: int,
    candidates: int,
    seed: int,
    threads: int | None,
    ceiling_prompts: int,
    as_json: bool,
    out: str | None,
    progress: bool | None,
) -> None:
    """Measure (a) raw prompt eval, (b) naive judging, (c) edgejudge judging on real TWC steps."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from labeler.judge import default_threads

    r = run(model, steps, candidates, seed, threads or default_threads(), ceiling_prompts, progress)
    if out:
        tmp = Path(out).with_suffix(".tmp")
        tmp.write_text(json.dumps(r, indent=2) + "\n")
        tmp.replace(out)
    click.echo(json.dumps(r, indent=2) if as_json else _fmt(r))


if __name__ == "__main__":
    main()
