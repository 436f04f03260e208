"""``label coren --dry-run``: the queries, tokens and an estimated time of a run, without judging."""

from __future__ import annotations

from typing import Any

import click

from labeler.coren.judge_session import open_local

# Measured on the 2-core box with the embedded Gemma 3 270M, 1 thread, while other work shared the CPU
# (BENCHMARKS.md); used only by --dry-run. Every query also reads one 262k-entry logit row (~0.06 s).
EST_PROMPT_TOKENS_PER_S = 220.0
EST_GENERATED_TOKENS_PER_S = 30.0
EST_SECONDS_PER_QUERY = 0.06
EST_EMBED_SECONDS_PER_STEP = 0.1


class _NoEncoder:
    def encode(self, sentences: list[str], **kw: Any) -> Any:  # pragma: no cover - never called in a dry run
        raise RuntimeError("the dry run does not embed")


def dry_run(trajs, prompts, templates, cfg, judge_ref, n_ctx, threads) -> None:
    from labeler.coren.pipeline import CorenInputError, CorenLabeler

    with open_local(judge_ref, n_ctx, threads, None) as judge:
        try:
            plan = CorenLabeler(judge, _NoEncoder(), prompts, templates, cfg).plan(trajs)
        except CorenInputError as e:
            raise click.ClickException(str(e)) from None
    est = (
        plan["new_tokens"] / EST_PROMPT_TOKENS_PER_S
        + plan["generated_tokens_max"] / EST_GENERATED_TOKENS_PER_S
        + plan["total_queries"] * EST_SECONDS_PER_QUERY
        + plan["steps"] * EST_EMBED_SECONDS_PER_STEP
    )
    q = plan["queries"]
    click.echo(
        f"dry run: {plan['trajectories']} trajectories, {plan['steps']} steps, {len(prompts)} prompts "
        f"({', '.join(p.name for p in prompts)})"
    )
    click.echo(
        f"queries: {plan['total_queries']} ({plan['total_queries'] / plan['steps']:.1f} per step): "
        + ", ".join(f"{k} {v}" for k, v in sorted(q.items()))
    )
    click.echo(
        f"tokens: {plan['prompt_tokens']} in all query text, ~{plan['new_tokens']} to evaluate after "
        f"prefix reuse, <= {plan['generated_tokens_max']} generated"
    )
    click.echo(
        f"estimate: ~{est / 60:.1f} min on 1 thread with an empty cache "
        f"({EST_PROMPT_TOKENS_PER_S:.0f} prompt tok/s, {EST_GENERATED_TOKENS_PER_S:.0f} generated tok/s); "
        "cached queries cost nothing"
    )
    if plan["truncations"]:
        click.echo("truncated: " + ", ".join(f"{k} {v}" for k, v in sorted(plan["truncations"].items())))
