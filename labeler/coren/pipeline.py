"""The COREN labeling pipeline: judge queries in prefix-sharing order, votes, orchestrator, labels.

Query kinds (per prompt n). A query is ``header + preamble + body + tail`` (labeler/coren/prompts.py); all
prompts' queries of a trajectory go to the judge in one call, so with the shipped layout (one shared preamble,
variants differ in their tails) a step's text is evaluated once for every prompt:

* ``rate``  — the taken action *with its result* (the transition) at every step: the prompt's distribution
  over the template's answers (Yes/No; the cot prompt first generates one line of reasoning). These give the
  prompts' votes (see :mod:`labeler.coren.voting`).
* ``cand``  — one multiple-choice query per observation scoring every candidate at once: the prompt's
  high-value action for the temporal check. It shares the observation's text with the ``rate`` query as KV
  prefix (the judge orders a trajectory's queries by prefix).
* ``back``  — one backward verification per trajectory: can the prompt's high-value actions achieve the task?
* ``qa``    — the structural question retrieved for the steps, answered once per (prompt, QA entry).

Output per step: ``labels["coren"] = {contextual, structural, temporal, ensemble, contextual_soft,
w_contextual, w_structural, w_temporal, dist_p0 .. dist_p{N-1}}`` — the four rewards on -2..2; the unvoted
mean scale position over prompts; the orchestrator's weights; and each prompt's raw distribution over the
template's answers for the taken action ([P(No), P(Yes)]: two floats per prompt, kept so the votes can be
recomputed without the judge; ``--no-dists`` drops them). Per trajectory: ``provenance["coren"]``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from labeler.coren import structural, temporal, voting
from labeler.coren.prompts import CorenPrompt, Templates
from labeler.coren.texts import TruncationStats, fit_head, fit_plan, transition_text
from labeler.dataset import Trajectory

METHOD = "coren"
ACTION_TOKENS = 32
PLAN_TOKENS = 384
SAFETY_TOKENS = 16
COT_GRAMMAR = r"root ::= [^\n]+"


class CorenInputError(ValueError):
    """The dataset cannot be labeled as asked (e.g. steps without candidates)."""


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


class EncoderLike(Protocol):
    def encode(self, sentences: list[str], **kw: Any) -> Any: ...


@dataclass
class CorenConfig:
    """Labeling options (the CLI's flags)."""

    obs_tokens: int = 48
    """Most tokens of the observation in rating and candidate queries (its head: feedback, inventory, recent
    actions, then the room). The 270M judge ranks better with a short observation (BENCHMARKS.md), and every
    token costs time. Structural questions get the whole observation (up to the context)."""
    result_tokens: int = 40
    """Most tokens of the result (the first new line of the next observation) shown with the taken action."""
    qa_size: int = 48
    """Most entries of the built structural QA set (farthest-point sampled)."""
    qa_answer_tokens: int = 16
    """Most tokens of a prompt's answer to a structural question."""
    keep_dists: bool = True
    """Keep each prompt's distribution over the scale per step (dist_p0 ...)."""


@dataclass
class StepText:
    observation: str
    action: str
    result: str
    candidates: list[str]


@dataclass
class Report:
    trajectories: int = 0
    steps: int = 0
    queries: dict[str, int] = field(default_factory=dict)
    cache_hits: int = 0
    seconds: float = 0.0
    judge_seconds: float = 0.0
    truncations: dict[str, int] = field(default_factory=dict)
    structural_fallbacks: int = 0
    temporal_fallbacks: int = 0
    temporal_violations: int = 0
    backward_pass_rate: list[float] = field(default_factory=list)
    qa_pass_rate: list[float] = field(default_factory=list)
    qa_entries: int = 0
    mean_weights: list[float] = field(default_factory=list)
    orchestrator_losses: tuple[float, float] | None = None

    @property
    def total_queries(self) -> int:
        return sum(self.queries.values())

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["total_queries"] = self.total_queries
        d["steps_per_second"] = self.steps / self.seconds if self.seconds else None
        d["queries_per_step"] = self.total_queries / self.steps if self.steps else None
        return d


def ranked_candidates(st: StepText, max_options: int) -> list[int]:
    """Indices of the candidates offered in the multiple-choice query: all of them when they fit the letters;
    otherwise the first ``max_options - 1`` plus the taken action (documented cap)."""
    n = len(st.candidates)
    if n <= max_options:
        return list(range(n))
    keep = list(range(max_options - 1))
    taken = st.candidates.index(st.action) if st.action in st.candidates else 0
    return keep + [taken] if taken not in keep else list(range(max_options))


def check_candidates(trajectories: Sequence[Trajectory], source: str = "input") -> None:
    for t in trajectories:
        for i, s in enumerate(t.steps):
            if not s.candidates:
                raise CorenInputError(
                    f"{source}: trajectory {t.id!r} step {i} has no candidates: COREN's temporal consistency "
                    "rates every candidate (admissible) action at each observation. Record the candidate "
                    "actions in each step's 'candidates' list (edgejudge collect does), or add them to your "
                    "logs."
                )


class Budgets:
    """Token budgets per field (see :mod:`labeler.coren.texts` for the truncation rule)."""

    def __init__(
        self,
        n_ctx: int,
        prompts: Sequence[CorenPrompt],
        templates: Templates,
        count: Callable[[str], int],
        result_tokens: int,
    ):
        scaffold = max(
            count(templates.step.format(instruction="", observation="", action="", result="")),
            count(templates.qa.format(instruction="", observation="")),
        )
        header = max(count(p.header) for p in prompts) + count(templates.preamble)
        reasoning = max((p.reasoning_tokens for p in prompts), default=0)
        tail = (
            count(templates.reasoning)
            + reasoning
            + max(count(x) for p in prompts for x in (templates.rating, *p.tails()))
            + max(count(c) for c in templates.choices)
        )
        self.avail = n_ctx - header - scaffold - tail - SAFETY_TOKENS - 1
        if self.avail < 64 + result_tokens:
            raise CorenInputError(
                f"judge context n_ctx={n_ctx} is too small for the COREN prompts "
                f"(headers take {header} tokens); use a larger --n-ctx"
            )
        self.instruction = self.avail // 4
        self.result = result_tokens
        self.action = ACTION_TOKENS


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
        self.trunc = TruncationStats()
        self.report = Report()
        self._count = judge.count_tokens
        self._emb: dict[str, np.ndarray] = {}
        self.budgets = Budgets(judge.n_ctx, self.prompts, templates, self._count, self.cfg.result_tokens)

    # ------------------------------------------------------------------------------------------------ units

    @property
    def anchor(self) -> str:
        """The text every query starts with (the prompts' shared header and preamble)."""
        return os.path.commonprefix([self._lead(p) for p in self.prompts])

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
            self._tick(kind, n)
        for what, n in truncations.items():
            self.trunc.counts[what] = self.trunc.counts.get(what, 0) + n

    # ------------------------------------------------------------------------------------------------ texts

    def _fit(self, text: str, tokens: int, what: str) -> str:
        out, cut = fit_head(text, tokens, self._count)
        if cut:
            self.trunc.add(what)
        return out

    def step_texts(self, traj: Trajectory) -> tuple[str, list[StepText]]:
        b = self.budgets
        instruction = self._fit(traj.instruction, b.instruction, "instruction")
        left = b.avail - self._count(instruction)
        out = []
        for s in traj.steps:
            result = self._fit(transition_text(s.observation, s.next_observation), b.result, "result")
            action = self._fit(s.action, b.action, "action")
            cands = [self._fit(c, b.action, "candidate") for c in s.candidates]
            options = sum(self._count(c) + 2 for c in cands[: len(self.t.letters)])
            room = left - max(self._count(result) + self._count(action), options)
            # a cut to --obs-tokens is by design (counted apart); a cut to the context is a truncation
            obs = self._fit(
                s.observation,
                min(self.cfg.obs_tokens, room),
                "observation_head" if self.cfg.obs_tokens <= room else "observation",
            )
            out.append(StepText(obs, action, result, cands))
        return instruction, out

    def _body(self, instruction: str, st: StepText, action: str, result: str) -> str:
        return self.t.step.format(
            instruction=instruction, observation=st.observation, action=action, result=result
        )

    # ------------------------------------------------------------------------------------------------ queries

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

    def _lead(self, prompt: CorenPrompt) -> str:
        return prompt.header + self.t.preamble

    def _rating(self, prompt: CorenPrompt) -> str:
        return prompt.rate_tail or self.t.rating

    def _queries(
        self, prompt: CorenPrompt, instruction: str, texts: list[StepText]
    ) -> tuple[list, list[str]]:
        """One candidate query per step (multiple choice over its ranked candidates) and the taken actions'
        rating prefixes (with result; for the cot prompt, the text the reasoning is generated after)."""
        t = self.t
        lead = self._lead(prompt)
        cand = []
        for st in texts:
            ranked = ranked_candidates(st, len(t.letters))
            options = "\n".join(f"{t.letters[i]}. {st.candidates[c]}" for i, c in enumerate(ranked))
            body = t.choose.format(instruction=instruction, observation=st.observation, options=options)
            cand.append((lead + body + prompt.choose_tail, [" " + t.letters[i] for i in range(len(ranked))]))
        tail = t.reasoning if prompt.cot else self._rating(prompt)
        rate = [lead + self._body(instruction, st, st.action, st.result) + tail for st in texts]
        return cand, rate

    def rate_trajectory(self, instruction: str, texts: list[StepText]) -> tuple[np.ndarray, list[list]]:
        """Every prompt's (steps, K) distributions of the taken action with its result, shape (prompts,
        steps, K); per prompt and step the distribution over its ranked candidates (see
        :func:`ranked_candidates`).

        All prompts' candidate and rating queries of a trajectory go to the judge in one call: it orders them
        by prefix and decodes the tails after a shared text together, so one step's text is evaluated once for
        its candidate and rating queries of every prompt that shares the preamble."""
        t = self.t
        queries: list[tuple[str, Sequence[str]]] = []
        tids: list[str] = []
        versions: list[int] = []
        spans = []
        for prompt in self.prompts:
            cand, bases = self._queries(prompt, instruction, texts)
            if prompt.cot:
                rate = []
                for base in bases:
                    why = self._generate(prompt, base, prompt.reasoning_tokens, "reason", stop=["\n"])
                    why = " " + " ".join(why.split()) if why.strip() else ""
                    rate.append((base + why + "\n" + self._rating(prompt), t.choices))
            else:
                rate = [(b, t.choices) for b in bases]
            spans.append((len(queries), len(cand), len(rate)))
            queries += cand + rate
            tids += [prompt.template_id] * (len(cand) + len(rate))
            versions += [prompt.version] * (len(cand) + len(rate))
        res = self.judge.score_many(queries, template=tids, version=versions)
        rate_out = np.zeros((len(self.prompts), len(texts), len(t.values)))
        cand_out: list[list] = []
        for n, (start, n_cand, n_rate) in enumerate(spans):
            self._tick("cand", n_cand)
            self._tick("rate", n_rate)
            cand_out.append([np.asarray(r.probs, dtype=np.float64) for r in res[start : start + n_cand]])
            if n_rate:
                rate_out[n] = np.array([r.probs for r in res[start + n_cand : start + n_cand + n_rate]])
        return rate_out, cand_out

    def plan(self, trajectories: Sequence[Trajectory]) -> dict[str, Any]:
        """Query counts and a token estimate, without running the judge (``--dry-run``).

        ``prompt_tokens``: all query text; ``new_tokens``: what is left after the prefix shared with the
        previous query in the judge's order (what llama.cpp actually evaluates; estimated from characters)."""
        check_candidates(trajectories)
        counts: dict[str, int] = {}
        chars = new_chars = 0
        gen_tokens = 0
        sample: list[str] = []
        texts = [self.step_texts(t) for t in trajectories]
        n_qa = min(self.cfg.qa_size, len(structural.candidate_entries(trajectories)))
        prev = ""
        for instruction, sts in texts:
            qs = []
            for prompt in self.prompts:
                cand, rate = self._queries(prompt, instruction, sts)
                qs += [q for q, _ in cand] + rate
                counts["cand"] = counts.get("cand", 0) + len(cand)
                counts["rate"] = counts.get("rate", 0) + len(rate)
                if prompt.cot:
                    counts["reason"] = counts.get("reason", 0) + len(rate)
                    gen_tokens += len(rate) * prompt.reasoning_tokens
                counts["back"] = counts.get("back", 0) + 1
            qs.sort()
            for q in qs:
                lcp = 0
                for a, b in zip(prev, q, strict=False):
                    if a != b:
                        break
                    lcp += 1
                chars += len(q)
                new_chars += len(q) - lcp
                prev = q
            sample.extend(qs[:1])
        for _prompt in self.prompts:
            counts["qa"] = counts.get("qa", 0) + n_qa
            gen_tokens += n_qa * self.cfg.qa_answer_tokens
        ratio = (
            (sum(self._count(x) for x in sample) / max(sum(len(x) for x in sample), 1)) if sample else 0.25
        )
        return {
            "trajectories": len(trajectories),
            "steps": sum(len(t.steps) for t in trajectories),
            "queries": counts,
            "total_queries": sum(counts.values()),
            "prompt_tokens": int(chars * ratio),
            "new_tokens": int(new_chars * ratio),
            "generated_tokens_max": gen_tokens,
            "truncations": dict(self.trunc.counts),
            "example_query": sample[0] if sample else "",
        }

    def backward(self, prompt: CorenPrompt, instruction: str, plan: list[str]) -> float:
        text, cut = fit_plan(plan, PLAN_TOKENS, self._count)
        if cut:
            self.trunc.add("plan")
        body = self.t.backward.format(instruction=instruction, plan=text)
        q = self._lead(prompt) + body + prompt.backward_tail
        res = self._score(prompt, [(q, self.t.backward_choices)], "back")[0]
        return float(res.probs[0])

    def answer(self, prompt: CorenPrompt, entry: structural.QAEntry) -> str:
        b = self.budgets
        instruction = self._fit(entry.instruction, b.instruction, "qa_instruction")
        obs = self._fit(entry.observation, b.avail - self._count(instruction), "qa_observation")
        q = self._lead(prompt) + self.t.qa.format(instruction=instruction, observation=obs) + prompt.qa_tail
        return structural.clean_answer(
            self._generate(prompt, q, self.cfg.qa_answer_tokens, "qa", stop=["\n"])
        )

    def answer_all(self, entry: structural.QAEntry) -> list[str]:
        """Every prompt's answer to one QA entry (its text first, then each prompt's tail: prefix reuse)."""
        return [self.answer(prompt, entry) for prompt in self.prompts]

    # ------------------------------------------------------------------------------------------------ embed

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
        obs_all = [s.observation for t in trajs for s in t.steps]
        obs_emb = self.embed(obs_all)
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
        p_yes = np.zeros((n_p, len(trajs)))
        answers: list[dict[int, str]] = [{} for _ in range(n_p)]
        for j, (r, c) in enumerate(self.run_units("rate_trajectory", texts)):
            rate[:, offsets[j] : offsets[j + 1]] = r
            for n in range(n_p):
                cand[n].extend(c[n])
        for q, ans in zip(used_qa, self.run_units("answer_all", [(qa[q],) for q in used_qa]), strict=True):
            for n in range(n_p):
                answers[n][q] = ans[n]
        # high-value actions need every prompt's candidate calibration: done after all candidate queries
        high = np.zeros((n_p, n_s), dtype=bool)  # taken action == the prompt's high-value action
        checks = []
        for n, prompt in enumerate(self.prompts):
            prior = temporal.position_prior(cand[n], len(self.t.letters))
            for j, t in enumerate(trajs):
                plan = []
                for i, s in enumerate(t.steps):
                    ranked = ranked_candidates(texts[j][1][i], len(self.t.letters))
                    pick = temporal.high_value_index(cand[n][offsets[j] + i], prior)
                    best = s.candidates[ranked[pick]]
                    plan.append(best)
                    high[n, offsets[j] + i] = best == s.action
                checks.append((prompt, texts[j][0], plan))
        p_yes[:] = np.reshape(self.run_units("backward", checks), (n_p, len(trajs)))

        # --- votes
        u = np.stack([voting.positions(voting.prompt_scores(rate[n], vals)) for n in range(n_p)])
        pos = voting.to_scale(u)  # (prompts, steps) continuous positions on -2..2
        votes = voting.quintile_votes(u)
        contextual = np.array(
            [voting.majority_vote(votes[:, s].tolist(), float(pos[:, s].mean())) for s in range(n_s)]
        )

        qa_pass = np.ones((n_p, max(len(qa), 1)), dtype=bool)
        if used_qa:
            ref = self.embed([qa[q].answer for q in used_qa])
            for n in range(n_p):
                ans = self.embed([answers[n][q] or "(no answer)" for q in used_qa])
                sims = (ans * ref).sum(axis=1)
                for q, sim in zip(used_qa, sims, strict=True):
                    qa_pass[n, q] = structural.answer_passes(float(sim))
            rep.qa_pass_rate = [float(qa_pass[n, used_qa].mean()) for n in range(n_p)]
        structural_r = np.zeros(n_s)
        for s in range(n_s):
            passed = qa_pass[:, retrieved[s]] if retrieved is not None else np.zeros(n_p, dtype=bool)
            structural_r[s], fb = voting.filtered_vote(
                votes[:, s].tolist(), passed.tolist(), int(contextual[s]), pos[:, s]
            )
            rep.structural_fallbacks += fb

        back_pass = np.stack([temporal.backward_passes(p_yes[n]) for n in range(n_p)])
        rep.backward_pass_rate = [float(back_pass[n].mean()) for n in range(n_p)]
        traj_of_step = np.repeat(np.arange(len(trajs)), [len(t.steps) for t in trajs])
        violated = high & ~back_pass[:, traj_of_step]
        rep.temporal_violations = int(violated.sum())
        temporal_r = np.zeros(n_s)
        for s in range(n_s):
            temporal_r[s], fb = voting.filtered_vote(
                votes[:, s].tolist(), (~violated[:, s]).tolist(), int(contextual[s]), pos[:, s]
            )
            rep.temporal_fallbacks += fb

        channels = np.stack([contextual, structural_r, temporal_r], axis=1).astype(np.float64)
        return LabelResult(trajs, channels, rate, texts, obs_emb, traj_of_step, qa, p_yes, pos.mean(axis=0))


@dataclass
class LabelResult:
    """Everything the labeler computed before the ensemble (the orchestrator step needs features)."""

    trajectories: list[Trajectory]
    channels: np.ndarray  # (steps, 3): contextual, structural, temporal
    rate: np.ndarray  # (prompts, steps, K) raw distributions of the taken action
    texts: list[tuple[str, list[StepText]]]
    obs_emb: np.ndarray
    traj_of_step: np.ndarray
    qa: list[structural.QAEntry]
    p_yes: np.ndarray
    soft: np.ndarray  # (steps,) mean scale position over prompts: the unvoted contextual reward


def step_features(labeler: CorenLabeler, result: LabelResult) -> np.ndarray:
    """Orchestrator input per step: [emb(observation), emb(action), emb(instruction)]."""
    trajs = result.trajectories
    actions = labeler.embed([s.action for t in trajs for s in t.steps])
    instr = labeler.embed([t.instruction for t in trajs for _ in t.steps])
    return np.concatenate([result.obs_emb, actions, instr], axis=1).astype(np.float32)


def split_by_trajectory(arr: np.ndarray, trajs: Sequence[Trajectory]) -> list[np.ndarray]:
    out, k = [], 0
    for t in trajs:
        out.append(arr[k : k + len(t.steps)])
        k += len(t.steps)
    return out


def write_labels(
    result: LabelResult, weights: np.ndarray, provenance: dict[str, Any], keep_dists: bool
) -> None:
    """Put the channels, the ensemble and the weights on every step, and the provenance on every
    trajectory."""
    ens = (weights * result.channels).sum(axis=1)
    k = 0
    for t in result.trajectories:
        for s in t.steps:
            c = result.channels[k]
            lab: dict[str, Any] = {
                "contextual": float(c[0]),
                "structural": float(c[1]),
                "temporal": float(c[2]),
                "ensemble": round(float(ens[k]), 6),
                "contextual_soft": round(float(result.soft[k]), 6),
                "w_contextual": round(float(weights[k, 0]), 6),
                "w_structural": round(float(weights[k, 1]), 6),
                "w_temporal": round(float(weights[k, 2]), 6),
            }
            if keep_dists:
                for n in range(result.rate.shape[0]):
                    lab[f"dist_p{n}"] = [round(float(x), 5) for x in result.rate[n, k]]
            s.labels[METHOD] = lab
            k += 1
        t.provenance[METHOD] = dict(provenance)
