"""The COREN labeling pipeline: the structural QA set and retrieval, the judge work, then label assembly.

:class:`CorenLabeler` wires the parts: :mod:`labeler.coren.queries` composes the query texts,
:mod:`labeler.coren.judging` sends them to the judge (all prompts' step queries of a trajectory in one
call, so with the shipped layout a step's text is evaluated once for every prompt), and
:mod:`labeler.coren.assembly` turns the answers into the contextual, structural and temporal channels and
each step's labels (written by :mod:`labeler.label_writer`). The names the CLI and the tests import
(``CorenConfig``, ``StepText``, ``labeled`` ...) are re-exported here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from labeler.coren import structural
from labeler.coren.assembly import (
    METHOD,
    LabelResult,
    contextual_votes,
    high_value_plans,
    labeled,
    qa_passes,
    split_by_trajectory,
    step_features,
    structural_channel,
    temporal_channel,
)
from labeler.coren.config import CorenConfig, CorenInputError, check_candidates
from labeler.coren.judging import COT_GRAMMAR, JudgeCalls, JudgeLike
from labeler.coren.prompts import CorenPrompt, Templates
from labeler.coren.queries import (
    ACTION_TOKENS,
    PLAN_TOKENS,
    SAFETY_TOKENS,
    Budgets,
    QueryBuilder,
    StepText,
    ranked_candidates,
)
from labeler.coren.report import Report
from models.trajectory import Trajectory

__all__ = [
    "ACTION_TOKENS",
    "COT_GRAMMAR",
    "METHOD",
    "PLAN_TOKENS",
    "SAFETY_TOKENS",
    "Budgets",
    "CorenConfig",
    "CorenInputError",
    "CorenLabeler",
    "EncoderLike",
    "JudgeLike",
    "LabelResult",
    "Report",
    "StepText",
    "check_candidates",
    "labeled",
    "ranked_candidates",
    "split_by_trajectory",
    "step_features",
]


class EncoderLike(Protocol):
    def encode(self, sentences: list[str], **kw: Any) -> Any: ...


class CorenLabeler:
    def __init__(
        self,
        judge: JudgeLike,
        encoder: EncoderLike,
        prompts: Sequence[CorenPrompt],
        templates: Templates,
        cfg: CorenConfig | None = None,
        progress: Callable[[int, dict[str, Any]], None] | None = None,
        runner: Callable[[str, str, list[tuple]], list[Any]] | None = None,
    ):
        self.judge = judge
        self.runner = runner
        self.encoder = encoder
        self.prompts = list(prompts)
        self.t = templates
        self.cfg = cfg or CorenConfig()
        self.progress = progress or (lambda n, info: None)
        self.report = Report()
        self._emb: dict[str, np.ndarray] = {}
        self.queries = QueryBuilder(self.prompts, templates, self.cfg, judge.count_tokens, judge.n_ctx)
        self.calls = JudgeCalls(judge, self.queries, self.report, self.progress)
        self.trunc = self.queries.trunc
        self.budgets = self.queries.budgets

    # ------------------------------------------------------------------------------------------------ units

    @property
    def anchor(self) -> str:
        """The text every query starts with (the prompts' shared header and preamble)."""
        return os.path.commonprefix([self.queries.lead(p) for p in self.prompts])

    def run_units(self, method: str, calls: list[tuple]) -> list[Any]:
        """``[getattr(self, method)(*args) for args in calls]``, each call from the judge primed with
        :attr:`anchor` (so an answer depends only on its own call, in any order, process or worker). A runner
        given to the labeler (``labeler.cluster``) runs the calls on remote copies of this labeler instead."""
        if self.runner is not None:
            return self.runner(self.anchor, method, calls)
        prime = getattr(self.judge, "prime", None)
        out = []
        for args in calls:
            if prime is not None:
                prime(self.anchor)
            out.append(getattr(self, method)(*args))
        return out

    def merge_counts(self, queries: dict[str, int], truncations: dict[str, int]) -> None:
        """Count the queries and truncations of calls a remote copy of this labeler ran."""
        for kind, n in queries.items():
            self.calls._tick(kind, n)
        for what, n in truncations.items():
            self.trunc.counts[what] = self.trunc.counts.get(what, 0) + n

    # ------------------------------------------------------------------------------------------------ parts

    def step_texts(self, traj: Trajectory) -> tuple[str, list[StepText]]:
        return self.queries.step_texts(traj)

    def plan(self, trajectories: Sequence[Trajectory]) -> dict[str, Any]:
        """Query counts and a token estimate, without running the judge (``--dry-run``)."""
        return self.queries.plan(trajectories)

    def rate_trajectory(self, instruction: str, texts: list[StepText]) -> tuple[np.ndarray, list[list]]:
        """See :meth:`labeler.coren.judging.JudgeCalls.rate_trajectory`."""
        return self.calls.rate_trajectory(instruction, texts)

    def backward(self, prompt: CorenPrompt, instruction: str, plan: list[str]) -> float:
        return self.calls.backward(prompt, instruction, plan)

    def answer(self, prompt: CorenPrompt, entry: structural.QAEntry) -> str:
        return self.calls.answer(prompt, entry)

    def answer_all(self, entry: structural.QAEntry) -> list[str]:
        """Every prompt's answer to one QA entry, generated together (the entry's text is evaluated once,
        each prompt's tail and answer is its own sequence; see :meth:`JudgeCalls.answer_many`)."""
        return self.calls.answer_many([(prompt, entry) for prompt in self.prompts])

    def embed(self, texts: list[str]) -> np.ndarray:
        """L2-normalised embeddings of ``texts``; each distinct text is encoded once per labeler."""
        new = sorted({t for t in texts if t not in self._emb})
        if new:
            vecs = np.asarray(
                self.encoder.encode(new, batch_size=32, normalize_embeddings=True, show_progress_bar=False),
                dtype=np.float64,
            )
            vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
            self._emb.update(zip(new, vecs, strict=True))
        if not texts:
            return np.zeros((0, 1))
        return np.stack([self._emb[t] for t in texts])

    # ------------------------------------------------------------------------------------------------ main

    def label(
        self,
        trajectories: Sequence[Trajectory],
        qa: Sequence[structural.QAEntry] | None = None,
        orchestrator: Any = None,
        orchestrator_cfg: Any = None,
    ) -> LabelResult:
        """Label ``trajectories``; ``qa`` replaces the built QA set; ``orchestrator`` a loaded model."""
        check_candidates(trajectories)
        trajs = list(trajectories)
        rep = self.report
        rep.trajectories, rep.steps = len(trajs), sum(len(t.steps) for t in trajs)
        texts = [self.step_texts(t) for t in trajs]
        offsets = np.cumsum([0] + [len(t.steps) for t in trajs])
        n_p, n_s, vals = len(self.prompts), rep.steps, self.t.values

        # --- structural: QA set and retrieval (embeddings of observations; no judge yet)
        obs_emb = self.embed([s.observation for t in trajs for s in t.steps])
        if qa is None:
            cands = structural.candidate_entries(trajs)
            if cands:
                ce = self.embed([e.observation for e in cands])
                qa = [cands[i] for i in structural.farthest_point(ce, self.cfg.qa_size)]
            else:
                qa = []
        qa = list(qa)
        rep.qa_entries = len(qa)
        retrieved = structural.retrieve(obs_emb, self.embed([e.observation for e in qa])) if qa else None
        used_qa = sorted(set(retrieved.tolist())) if retrieved is not None else []

        # --- judge queries: all prompts' step queries per trajectory, then QA answers per prompt
        rate = np.zeros((n_p, n_s, len(vals)))
        cand: list[list[np.ndarray]] = [[] for _ in range(n_p)]
        for j, (r, c) in enumerate(self.run_units("rate_trajectory", texts)):
            rate[:, offsets[j] : offsets[j + 1]] = r
            for n in range(n_p):
                cand[n].extend(c[n])
        answers: list[dict[int, str]] = [{} for _ in range(n_p)]
        for q, ans in zip(used_qa, self.run_units("answer_all", [(qa[q],) for q in used_qa]), strict=True):
            for n in range(n_p):
                answers[n][q] = ans[n]
        # high-value actions need every prompt's candidate calibration: done after all candidate queries
        high = np.zeros((n_p, n_s), dtype=bool)  # taken action == the prompt's high-value action
        p_yes = np.zeros((n_p, len(trajs)))
        checks = []
        for n, prompt in enumerate(self.prompts):
            high[n], plans = high_value_plans(cand[n], trajs, texts, len(self.t.letters))
            checks += [(prompt, texts[j][0], plan) for j, plan in enumerate(plans)]
        p_yes[:] = np.reshape(self.run_units("backward", checks), (n_p, len(trajs)))

        # --- channels
        pos, votes, contextual = contextual_votes(rate, vals, self.cfg.vote)
        qa_pass = qa_passes(answers, qa, used_qa, self.embed, rep)
        structural_r = structural_channel(votes, pos, contextual, qa_pass, retrieved, rep, self.cfg.vote)
        traj_of_step = np.repeat(np.arange(len(trajs)), [len(t.steps) for t in trajs])
        temporal_r = temporal_channel(votes, pos, contextual, high, p_yes, traj_of_step, rep, self.cfg.vote)
        channels = np.stack([contextual, structural_r, temporal_r], axis=1).astype(np.float64)
        return LabelResult(trajs, channels, rate, texts, obs_emb, traj_of_step, qa, p_yes, pos.mean(axis=0))
