"""Units of judge work: calls run one after another from a primed judge, locally or on judge actors.

A unit is one method call on a worker (a labeler, or a scorer around the judge) whose judge queries start from
``judge.prime(anchor)``: the anchor (the prompts' shared text) is restored in the KV cache before the call, so
the unit's answers depend only on the call itself and come out bit-identical in one process or spread over
any number of judge actors. The single-process labelers run their units through :func:`run_local`; with
``--ray`` :class:`labeler.cluster.pool.JudgePool` runs the same units on actors. Ray is not imported here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from models.progress import progress as progress_bar

Runner = Callable[[str, str, list[tuple]], list[Any]]
"""``runner(anchor, method, calls)`` -> ``[worker.method(*args) for args in calls]``, each from the anchor."""

SCORE_CHUNK = 16
"""Queries per unit when a list of independent queries is split (a rubric build's tagging queries)."""


def anchor_of(prefixes: Sequence[str]) -> str:
    """The longest common start of ``prefixes``, cut after its last newline (a token boundary in practice)."""
    common = os.path.commonprefix(list(prefixes)) if prefixes else ""
    cut = common.rfind("\n")
    return common[: cut + 1] if cut >= 0 else ""


def run_local(judge: Any, worker: Any, anchor: str, method: str, calls: list[tuple]) -> list[Any]:
    """Run the calls in this process, each after ``judge.prime(anchor)``."""
    out = []
    for args in calls:
        judge.prime(anchor)
        out.append(getattr(worker, method)(*args))
    return out


class ScoreWorker:
    """The judge's ``score_many`` as a unit of work (what a rubric build's chunks run)."""

    def __init__(self, judge: Any):
        self.judge = judge

    def score_many(
        self, queries: list[tuple[str, list[str]]], template: str, version: int, normalize: str
    ) -> list[Any]:
        return self.judge.score_many(queries, template=template, version=version, normalize=normalize)


class UnitScorer:
    """``score_many`` split into units of :data:`SCORE_CHUNK` queries, each from the primed common anchor of
    the call; the same answers whether ``runner`` is local (:func:`run_local`) or a judge pool."""

    def __init__(self, model_sha256: str, runner: Runner, chunk: int = SCORE_CHUNK):
        self.model_sha256 = model_sha256
        self.runner = runner
        self.chunk = chunk
        self.queries = 0

    @classmethod
    def local(cls, judge: Any) -> UnitScorer:
        worker = ScoreWorker(judge)
        return cls(
            judge.model_sha256,
            lambda anchor, method, calls: run_local(judge, worker, anchor, method, calls),
        )

    def score_many(
        self,
        queries: Sequence[tuple[str, Sequence[str]]],
        *,
        template: str,
        version: int,
        normalize: str = "sum",
        progress: bool | None = False,
    ) -> list[Any]:
        qs = [(p, list(c)) for p, c in queries]
        anchor = anchor_of([p for p, _ in qs])
        calls = [
            (qs[i : i + self.chunk], template, version, normalize) for i in range(0, len(qs), self.chunk)
        ]
        out: list[Any] = []
        with progress_bar(len(qs), enabled=progress, desc="judge", unit="q") as bar:
            for res in self.runner(anchor, "score_many", calls):
                out.extend(res)
                bar.update(len(res))
        self.queries += len(qs)
        return out
