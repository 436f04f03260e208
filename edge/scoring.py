"""edge-serve's answers to the ``act`` requests of one batch: one encoder pass and one policy call for all,
in one of the daemon's worker threads (embedding requests: in its loop).

Each request is checked against the bundle first (embedding sizes, a skill list when candidates are omitted);
a refused request gets its error reply and the others are scored together. A failing inference answers every
request of the batch with ``internal`` and the daemon goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edge.logs import JsonLogger
from edge.metrics import Metrics
from edge.protocol import Code, ProtocolError, Request, ok_reply
from edge.runtime import Item, Runtime, TextRequest

Send = Callable[[list[bytes], dict[str, Any], float, str], None]
"""send(envelope, reply, t0, op): answer one request."""
Refuse = Callable[[list[bytes], float, ProtocolError, str], None]
"""refuse(envelope, t0, error, op): answer one request with an error."""


@dataclass
class Pending:
    envelope: list[bytes]
    t0: float
    req: Request


def _check(rt: Runtime, r: Request) -> ProtocolError | None:
    if r.is_embedding and rt.structured:
        return ProtocolError(
            Code.BAD_REQUEST,
            f"this bundle (format {rt.format_version}) scores a structured state with the episode memory: "
            "send text (instruction, observation, memory), not embeddings",
            r.id,
        )
    if r.is_embedding:
        assert r.instruction_emb is not None and r.candidates_emb is not None
        if r.instruction_emb.shape[0] != rt.dim or r.candidates_emb.shape[1] != rt.cand_dim:
            return ProtocolError(
                Code.BAD_ARRAY,
                f"embedding dimension {r.instruction_emb.shape[0]} and candidate features "
                f"{r.candidates_emb.shape[1]}, the bundle's are {rt.dim} and {rt.cand_dim} "
                f"({rt.manifest.candidate_features})",
                r.id,
            )
    elif r.candidates is None and not rt.skills:
        return ProtocolError(Code.NO_SKILLS, "candidates omitted but the bundle has no skill list", r.id)
    return None


def answer_acts(
    rt: Runtime, acts: list[Pending], send: Send, refuse: Refuse, metrics: Metrics, log: JsonLogger
) -> None:
    """Check, score and answer ``acts`` (all of one batch)."""
    ready: list[Pending] = []
    items: list[Item | None] = []
    texts: list[TextRequest] = []
    text_pos: list[int] = []
    for p in acts:
        r = p.req
        err = _check(rt, r)
        if err is not None:
            refuse(p.envelope, p.t0, err, "act")
            continue
        if r.is_embedding:
            assert r.instruction_emb is not None and r.observation_emb is not None
            assert r.candidates_emb is not None
            items.append(Item(r.instruction_emb, r.observation_emb, r.candidates_emb, r.candidates))
        else:
            assert r.instruction is not None and r.observation is not None
            text_pos.append(len(items))
            items.append(None)
            texts.append(TextRequest(r.instruction, r.observation, r.candidates, r.memory or ()))
        ready.append(p)
    if not ready:
        return
    t_inf = time.perf_counter()
    try:
        if texts:
            for pos, item in zip(text_pos, rt.items_from_text(texts), strict=False):
                items[pos] = item
        scores = rt.score([it for it in items if it is not None])
    except Exception as e:  # never let one bad batch take the daemon down
        log.error("inference_failed", error=f"{type(e).__name__}: {e}", batch=len(ready))
        for p in ready:
            err = ProtocolError(Code.INTERNAL, "inference failed (logged)", p.req.id)
            refuse(p.envelope, p.t0, err, "act")
        return
    infer_ms = (time.perf_counter() - t_inf) * 1000
    metrics.batch_size(len(ready))
    model = rt.model_sha256
    for p, item, s in zip(ready, items, scores, strict=False):
        assert item is not None
        idx = int(s.argmax())
        send(
            p.envelope,
            ok_reply(
                p.req.id,
                index=idx,
                action=item.texts[idx] if item.texts is not None else None,
                scores=s.tolist(),
                model=model,
                timing={
                    "server_ms": round((time.perf_counter() - p.t0) * 1000, 4),
                    "infer_ms": round(infer_ms, 4),
                    "batch": len(ready),
                },
            ),
            p.t0,
            "act",
        )
