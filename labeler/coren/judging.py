"""COREN's judge calls: a trajectory's rating and candidate queries for every prompt in one ``score_many``,
the backward verification of each prompt's plan, and every prompt's answer to a structural question
generated together as parallel sequences (``generate_many``; a judge without it answers one at a time).
Each call is counted by kind in the report and reported to the progress callback.

Where the time went before batching (4 prompts, 74 TWC dev steps, CPU seconds on a shared 2-core box): step
queries 65 s (2 decodes and ~155 evaluated tokens per step), structural answers 213 s (96 answers of 16
generated tokens, one decode per token), backward checks 8 s, embeddings 3 s."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from labeler.coren import structural
from labeler.coren.prompts import CorenPrompt
from labeler.coren.queries import QueryBuilder, StepText
from labeler.coren.report import Report

COT_GRAMMAR = r"root ::= [^\n]+"


class JudgeLike(Protocol):
    stats: dict[str, float]

    @property
    def model_sha256(self) -> str: ...
    @property
    def n_ctx(self) -> int: ...
    def count_tokens(self, text: str) -> int: ...
    def score_many(
        self,
        queries: Sequence[tuple[str, Sequence[str]]],
        *,
        template: str | Sequence[str],
        version: int | Sequence[int],
        **kw: Any,
    ) -> list[Any]: ...
    def generate(
        self,
        prompt: str,
        *,
        grammar: str | None = None,
        max_tokens: int = 64,
        stop: Sequence[str] | None = None,
        template: str = "adhoc",
        version: int = 1,
    ) -> str: ...


class JudgeCalls:
    """The judge work of a labeling run, over the texts of a :class:`QueryBuilder`."""

    def __init__(
        self,
        judge: JudgeLike,
        queries: QueryBuilder,
        report: Report,
        progress: Callable[[int, dict[str, Any]], None],
    ):
        self.judge = judge
        self.q = queries
        self.report = report
        self.progress = progress

    def _score(self, prompt: CorenPrompt, queries: list[tuple[str, Sequence[str]]], kind: str) -> list[Any]:
        res = self.judge.score_many(queries, template=prompt.template_id, version=prompt.version)
        self._tick(kind, len(queries))
        return res

    def _generate(
        self, prompt: CorenPrompt, text: str, max_tokens: int, kind: str, stop: Sequence[str]
    ) -> str:
        out = self.judge.generate(
            text,
            grammar=COT_GRAMMAR,
            max_tokens=max_tokens,
            stop=list(stop),
            template=prompt.template_id,
            version=prompt.version,
        )
        self._tick(kind, 1)
        return out

    def _tick(self, kind: str, n: int) -> None:
        self.report.queries[kind] = self.report.queries.get(kind, 0) + n
        self.progress(n, {"kind": kind, "cache_hits": int(self.judge.stats.get("cache_hits", 0))})

    def rate_trajectory(self, instruction: str, texts: list[StepText]) -> tuple[np.ndarray, list[list]]:
        """Every prompt's (steps, K) distributions of the taken action with its result, shape (prompts,
        steps, K); per prompt and step the distribution over its ranked candidates (see
        :func:`labeler.coren.queries.ranked_candidates`).

        All prompts' candidate and rating queries of a trajectory go to the judge in one call: it orders them
        by prefix and decodes the tails after a shared text together, so one step's text is evaluated once for
        its candidate and rating queries of every prompt that shares the preamble."""
        t = self.q.t
        prompts = self.q.prompts
        queries: list[tuple[str, Sequence[str]]] = []
        tids: list[str] = []
        versions: list[int] = []
        spans = []
        for prompt in prompts:
            cand, bases = self.q.step_queries(prompt, instruction, texts)
            if prompt.cot:
                rate = []
                for base in bases:
                    why = self._generate(prompt, base, prompt.reasoning_tokens, "reason", stop=["\n"])
                    why = " " + " ".join(why.split()) if why.strip() else ""
                    rate.append((base + why + "\n" + self.q.rating(prompt), t.choices))
            else:
                rate = [(b, t.choices) for b in bases]
            spans.append((len(queries), len(cand), len(rate)))
            queries += cand + rate
            tids += [prompt.template_id] * (len(cand) + len(rate))
            versions += [prompt.version] * (len(cand) + len(rate))
        res = self.judge.score_many(queries, template=tids, version=versions)
        rate_out = np.zeros((len(prompts), len(texts), len(t.values)))
        cand_out: list[list] = []
        for n, (start, n_cand, n_rate) in enumerate(spans):
            self._tick("cand", n_cand)
            self._tick("rate", n_rate)
            cand_out.append([np.asarray(r.probs, dtype=np.float64) for r in res[start : start + n_cand]])
            if n_rate:
                rate_out[n] = np.array([r.probs for r in res[start + n_cand : start + n_cand + n_rate]])
        return rate_out, cand_out

    def answer_many(self, items: Sequence[tuple[CorenPrompt, structural.QAEntry]]) -> list[str]:
        """Answers to many structural questions ``(prompt, entry)``: generated together as parallel
        sequences when the judge offers ``generate_many``, otherwise one after another."""
        many = getattr(self.judge, "generate_many", None)
        if many is None:
            return [self.answer(p, e) for p, e in items]
        if not items:
            return []
        texts = [self.q.qa_query(p, e) for p, e in items]
        out = many(
            texts,
            grammar=COT_GRAMMAR,
            max_tokens=self.q.cfg.qa_answer_tokens,
            stop=["\n"],
            template=[p.template_id for p, _ in items],
            version=[p.version for p, _ in items],
        )
        self._tick("qa", len(items))
        return [structural.clean_answer(a) for a in out]

    def backward(self, prompt: CorenPrompt, instruction: str, plan: list[str]) -> float:
        """P(Yes) of the prompt's backward verification of ``plan``."""
        q = self.q.backward_query(prompt, instruction, plan)
        res = self._score(prompt, [(q, self.q.t.backward_choices)], "back")[0]
        return float(res.probs[0])

    def answer(self, prompt: CorenPrompt, entry: structural.QAEntry) -> str:
        """The prompt's answer to the structural question about ``entry``."""
        q = self.q.qa_query(prompt, entry)
        return structural.clean_answer(
            self._generate(prompt, q, self.q.cfg.qa_answer_tokens, "qa", stop=["\n"])
        )
