"""Judge benchmark: how fast the local GGUF judge answers the queries the labelers issue, in one run.

Queries are built from real TextWorldExpress steps (TWC, dev split, collected here with
``policy.worlds.collect``, seeded; :mod:`tools.bench.judge_queries`), in the shapes the two labelers send:

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
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from models.cli_options import gpu_layers_option, judge_option, progress_option, threads_option
from tools.bench.benchlib import provenance, write_results
from tools.bench.judge_queries import build_queries as build_queries  # the benchmark's setups


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


class _Tally:
    """What a run measures: the clocks of (a), (b), (c), the warm rerun and of (b) and (c) per query shape,
    the tokens (b) and (c) evaluated per shape, each query's log-probs under (b) and (c), (c)'s counters."""

    def __init__(self, queries: list[dict[str, Any]]) -> None:
        per = [(m, p) for m in ("b", "c") for p in sorted({q["pattern"] for q in queries})]
        self.clocks = {k: _Clock() for k in ("a", "b", "c", "warm")}
        self.per = {k: _Clock() for k in per}
        self.evaluated = dict.fromkeys(per, 0)
        self.logprobs: dict[str, list[list[float]]] = {m: [[] for _ in queries] for m in ("b", "c")}
        self.tokens_a = self.hits_c = self.warm_hits = self.reused_c = 0
        self.sha = ""

    def evaluated_by(self, method: str) -> int:
        return sum(v for (m, _), v in self.evaluated.items() if m == method)


def run(
    model: str, steps: int, seed: int, threads: int, ceiling_prompts: int, progress: bool | None,
    patterns: tuple[str, ...] = ("coren", "trca"), candidates: int = 5, coren_prompts: int = 4,
    gpu_layers: int = 0,
) -> dict:  # fmt: skip
    """(a), (b) and (c) interleaved trajectory by trajectory, so that load from other jobs on the box hits all
    three alike; ratios are reported on process CPU time and on wall time."""
    t0 = time.perf_counter()
    queries, data = build_queries(steps, seed, patterns, candidates, coren_prompts)
    collect_s = round(time.perf_counter() - t0, 2)
    unique = len({(q["prefix"], tuple(q["choices"])) for q in queries})
    data = {**data, "queries": len(queries), "unique_queries": unique, "collect_seconds": collect_s}
    kw = {"n_threads": threads, "n_threads_batch": threads, "n_ctx": 2048, "n_gpu_layers": gpu_layers}
    tally = _measure(model, kw, queries, ceiling_prompts, progress)
    head = {"benchmark": "judge", "command": "python -m tools.bench.bench_judge " + " ".join(sys.argv[1:])}
    head.update(model=model, model_sha256=tally.sha, threads=threads, gpu_layers=gpu_layers)
    return {**head, **_results(queries, data, tally)}


def _measure(
    model: str, kw: dict[str, Any], queries: list[dict[str, Any]], ceiling_prompts: int, progress: bool | None
) -> _Tally:
    """The labelers' calls, trajectory by trajectory: (a) on the trajectory's first whole prompts, then each
    call's queries (b) one by one from scratch and (c) as the labelers make it; then (c)'s warm rerun."""
    from labeler.judge import open_judge
    from models.progress import progress as bar

    tally, groups = _Tally(queries), _groups(queries)
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
                trca = [q["prefix"] for q in queries if q["traj"] == traj and q["pattern"] == "trca"]
                tally.tokens_a += _ceiling(jb, mine[:per_traj] + trca[:1], tally.clocks["a"])
            _naive(jb, queries, idx, pattern, tally)
            _edgejudge(jc, queries, idx, pattern, tally)
            pb.update(len(idx))
        tally.hits_c = int(jc.stats["cache_hits"])
        h0 = jc.stats["cache_hits"]
        with tally.clocks["warm"]:  # the same calls again, all answered by the label cache
            for _, pattern, idx in groups:
                jc.score_many(
                    [(queries[i]["prefix"], queries[i]["choices"]) for i in idx],
                    **_keys(queries, idx, pattern),
                )
        tally.warm_hits = int(jc.stats["cache_hits"] - h0)
        tally.reused_c, tally.sha = int(jc.stats["reused_tokens"]), jc.model_sha256
    return tally


def _naive(jb: Any, queries: list[dict[str, Any]], idx: list[int], pattern: str, tally: _Tally) -> None:
    """(b): every query from scratch."""
    for i in idx:
        jb.reset()
        e0 = jb.stats["evaluated_tokens"]
        with tally.clocks["b"], tally.per[("b", pattern)]:
            tally.logprobs["b"][i] = jb.score(queries[i]["prefix"], queries[i]["choices"]).logprobs
        tally.evaluated[("b", pattern)] += int(jb.stats["evaluated_tokens"] - e0)


def _edgejudge(jc: Any, queries: list[dict[str, Any]], idx: list[int], pattern: str, tally: _Tally) -> None:
    """(c): edgejudge, called the way the labelers call it."""
    e0 = jc.stats["evaluated_tokens"]
    with tally.clocks["c"], tally.per[("c", pattern)]:
        if pattern != "trca":
            out = jc.score_many(
                [(queries[i]["prefix"], queries[i]["choices"]) for i in idx],
                **_keys(queries, idx, pattern),
            )
            for i, r in zip(idx, out, strict=True):
                tally.logprobs["c"][i] = r.logprobs
        else:
            for i in idx:
                tally.logprobs["c"][i] = jc.score(
                    queries[i]["prefix"], queries[i]["choices"], template="bench.trca", version=1
                ).logprobs
    tally.evaluated[("c", pattern)] += int(jc.stats["evaluated_tokens"] - e0)


def _results(queries: list[dict[str, Any]], data: dict[str, Any], tally: _Tally) -> dict[str, Any]:
    """The measurements as rates per CPU- and wall-second, their ratios, targets and (b)/(c) agreement."""
    n, names = len(queries), sorted({q["pattern"] for q in queries})
    a, b, c, warm = (tally.clocks[k] for k in ("a", "b", "c", "warm"))
    ev_b, ev_c = tally.evaluated_by("b"), tally.evaluated_by("c")
    qps = {"b": _rate(n, b), "c": _rate(n, c)}
    tps = {"a": _rate(tally.tokens_a, a), "b": _rate(ev_b, b), "c": _rate(ev_c, c)}
    eff = _rate(ev_b, c)  # the tokens naive judging needs, per second of edgejudge
    pairs = zip(tally.logprobs["b"], tally.logprobs["c"], strict=True)
    diffs = [abs(x - y) for rb, rc in pairs for x, y in zip(rb, rc, strict=True)]
    ratios = {
        "c_over_b_queries_per_s": _ratio(qps["c"], qps["b"]),
        "c_eval_tokens_per_s_over_a": _ratio(tps["c"], tps["a"]),
        "b_eval_tokens_per_s_over_a": _ratio(tps["b"], tps["a"]),
        "c_effective_tokens_per_s_over_a": _ratio(eff, tps["a"]),
    }
    return {
        "data": {**data, "patterns": {p: sum(q["pattern"] == p for q in queries) for p in names}},
        "a_ceiling": {"tokens": tally.tokens_a, **_timed(a, tokens=tps["a"])},
        "b_naive": {"queries": n, "evaluated_tokens": ev_b, **_timed(b, queries=qps["b"], tokens=tps["b"])},
        "c_edgejudge": {
            "queries": n,
            "cache_hits": tally.hits_c,
            "evaluated_tokens": ev_c,
            "reused_tokens": tally.reused_c,
            **_timed(c, queries=qps["c"], tokens=tps["c"], effective_tokens=eff),
        },
        "c_warm_rerun": {
            "queries": n,
            "cache_hits": tally.warm_hits,
            "seconds_wall": warm.wall,
            "queries_per_s_wall": n / warm.wall,
        },
        "by_pattern": _by_pattern(queries, names, tally),
        "ratios": ratios,
        "agreement": {
            "max_abs_logprob_diff_b_vs_c": max(diffs),
            "mean_abs_logprob_diff": sum(diffs) / len(diffs),
        },
        "targets": {
            "c_over_b_queries_per_s >= 5 (cpu)": ratios["c_over_b_queries_per_s"]["cpu"] >= 5,
            "c_eval_tokens_per_s >= 0.7 a (cpu)": ratios["c_eval_tokens_per_s_over_a"]["cpu"] >= 0.7,
        },
    }


def _timed(clock: _Clock, **rates: dict[str, float]) -> dict[str, float]:
    """``clock``'s seconds, then each rate per CPU- and wall-second (``<name>_per_s_cpu``, ``..._wall``)."""
    out = {"seconds_cpu": clock.cpu, "seconds_wall": clock.wall}
    for name, r in rates.items():
        out.update({f"{name}_per_s_cpu": r["per_s_cpu"], f"{name}_per_s_wall": r["per_s_wall"]})
    return out


def _ratio(x: dict[str, float], y: dict[str, float]) -> dict[str, float]:
    return {"cpu": x["per_s_cpu"] / y["per_s_cpu"], "wall": x["per_s_wall"] / y["per_s_wall"]}


def _by_pattern(queries: list[dict[str, Any]], names: list[str], tally: _Tally) -> dict[str, Any]:
    out = {}
    for p in names:
        nq = sum(q["pattern"] == p for q in queries)
        b, c = tally.per[("b", p)], tally.per[("c", p)]
        if nq:
            out[p] = {
                "queries": nq,
                "b_queries_per_s_cpu": nq / b.cpu,
                "c_queries_per_s_cpu": nq / c.cpu,
                "c_over_b_cpu": b.cpu / c.cpu,
                "b_evaluated_tokens": tally.evaluated[("b", p)],
                "c_evaluated_tokens": tally.evaluated[("c", p)],
            }
    return out


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
    model: str, steps: int, patterns: str, candidates: int, coren_prompts: int, seed: int,
    threads: int | None, ceiling_prompts: int, gpu_layers: int, as_json: bool, out: str | None,
    progress: bool | None,
) -> None:  # fmt: skip
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
        model, steps, seed, threads, ceiling_prompts, progress, names, candidates, coren_prompts, gpu_layers
    )
    r = write_results(out, r) if out else {**provenance(), **r}
    click.echo(json.dumps(r, indent=2) if as_json else _fmt(r))


if __name__ == "__main__":
    main()
