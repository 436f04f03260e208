"""``edgejudge judge ...``: inspect the judge model, score choices, batch scoring, cache inspection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from labeler.cache import CacheError, LabelCache
from models.cli_options import (
    cache_option,
    gpu_layers_option,
    judge_option,
    n_ctx_option,
    progress_option,
    threads_option,
)
from models.registry import ModelError, resolve_judge
from models.settings import AtomicFile


def _model_options(f: Any) -> Any:
    for option in (gpu_layers_option(), n_ctx_option(), threads_option(), judge_option("model")):
        f = option(f)
    return f


def _open(model: str, threads: int | None, n_ctx: int, n_gpu_layers: int, cache: str | None) -> Any:
    from labeler.judge import JudgeError, open_judge

    try:
        return open_judge(
            model,
            n_threads=threads,
            n_threads_batch=threads,
            n_ctx=n_ctx,
            n_gpu_layers=n_gpu_layers,
            cache=cache,
        )
    except (ModelError, JudgeError, CacheError) as e:
        raise click.ClickException(str(e)) from None


@click.group()
def judge() -> None:
    """The local GGUF judge: model info, choice scoring, batch scoring through the label cache."""


@judge.command()
@judge_option("model")
def info(model: str) -> None:
    """Resolve the judge (assembling the embedded GGUF on first use) and print its path, sha256 and header."""
    try:
        m = resolve_judge(model)
    except ModelError as e:
        raise click.ClickException(str(e)) from None
    meta = m.info.metadata if m.info else {}
    out = {
        **m.provenance(),
        "path": str(m.path),
        "bytes": m.path.stat().st_size,
        "architecture": m.info.architecture if m.info else None,
        "context_length": meta.get(f"{m.info.architecture}.context_length") if m.info else None,
        "sliding_window": meta.get(f"{m.info.architecture}.attention.sliding_window") if m.info else None,
        "chat_template": bool(m.info and m.info.chat_template),
    }
    click.echo(json.dumps(out, indent=2))


@judge.command()
@_model_options
@click.option("--prefix", required=True, help="The prompt the choices continue.")
@click.option(
    "--choice",
    "choices",
    multiple=True,
    required=True,
    help="A choice (repeat the option; include its leading space, e.g. ' Yes').",
)
@click.option(
    "--normalize",
    type=click.Choice(["sum", "mean"]),
    default="sum",
    show_default=True,
    help="Softmax over summed or per-token mean log-probs.",
)
@cache_option()
def score(
    model: str,
    threads: int | None,
    n_ctx: int,
    n_gpu_layers: int,
    prefix: str,
    choices: tuple[str, ...],
    normalize: str,
    cache: str | None,
) -> None:
    """Log-probabilities and normalised probabilities of each --choice after --prefix (one JSON object)."""
    from labeler.judge import JudgeError

    with _open(model, threads, n_ctx, n_gpu_layers, cache) as j:
        try:
            s = j.score(prefix, list(choices), template="cli", normalize=normalize)
        except JudgeError as e:
            raise click.ClickException(str(e)) from None
        click.echo(
            json.dumps(
                {
                    "choices": list(s.choices),
                    "logprobs": s.logprobs,
                    "probs": s.probs,
                    "ntokens": s.ntokens,
                    "cached": s.cached,
                    "model_sha256": j.model_sha256,
                }
            )
        )


def _read_queries(path: str) -> list[tuple[str, list[str]]]:
    out = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise click.ClickException(f"{path}: cannot read ({e})") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            raise click.ClickException(f"{path}:{n}: not JSON ({e.msg})") from None
        if not isinstance(q, dict) or set(q) - {"prefix", "choices", "id"}:
            raise click.ClickException(
                f"{path}:{n}: expected an object with prefix, choices (and optional id)"
            )
        if not isinstance(q.get("prefix"), str):
            raise click.ClickException(f"{path}:{n}: prefix: expected a string")
        ch = q.get("choices")
        if not isinstance(ch, list) or not ch or not all(isinstance(c, str) and c for c in ch):
            raise click.ClickException(f"{path}:{n}: choices: expected a non-empty list of non-empty strings")
        out.append((q["prefix"], ch))
    if not out:
        raise click.ClickException(f"{path}: no queries")
    return out


@judge.command()
@_model_options
@click.argument("queries", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False),
    required=True,
    help="Results, one JSON line per query (written atomically at the end).",
)
@cache_option(required=True)
@click.option(
    "--template", default="batch", show_default=True, help="Prompt template id (part of the cache key)."
)
@click.option("--version", "version", type=int, default=1, show_default=True, help="Prompt template version.")
@click.option("--normalize", type=click.Choice(["sum", "mean"]), default="sum", show_default=True)
@progress_option()
def batch(
    model: str,
    threads: int | None,
    n_ctx: int,
    n_gpu_layers: int,
    queries: str,
    out_path: str,
    cache: str,
    template: str,
    version: int,
    normalize: str,
    progress: bool | None,
) -> None:
    """Score every query of QUERIES (JSON lines: {"prefix": ..., "choices": [...]}) through the cache.

    Duplicates are answered once, cache hits cost nothing, and the rest runs in an order that reuses shared
    prefixes. A run killed at any point resumes where it stopped when started again with the same --cache."""
    from labeler.judge import JudgeError

    qs = _read_queries(queries)
    with _open(model, threads, n_ctx, n_gpu_layers, cache) as j:
        try:
            res = j.score_many(qs, template=template, version=version, normalize=normalize, progress=progress)
        except JudgeError as e:
            raise click.ClickException(str(e)) from None
        out = Path(out_path)
        with AtomicFile(out) as tmp, open(tmp, "w", encoding="utf-8") as f:
            for s in res:
                f.write(json.dumps({"logprobs": s.logprobs, "probs": s.probs, "ntokens": s.ntokens}) + "\n")
        stats = {k: round(v, 3) if isinstance(v, float) else v for k, v in j.stats.items()}
        click.echo(json.dumps({"queries": len(qs), "out": str(out), "stats": stats}))


@judge.command("cache")
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
def cache_info(path: str) -> None:
    """Entries per (kind, template, version, model) in a label cache, and an integrity check."""
    try:
        with LabelCache(path) as c:
            click.echo(json.dumps({**c.summary(), "integrity": c.integrity_check()}, indent=2))
    except CacheError as e:
        raise click.ClickException(str(e)) from None
