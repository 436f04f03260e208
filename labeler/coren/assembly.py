"""COREN's label assembly: from the judge's answers to the three channels per step and each step's labels.

* contextual — the vote of the prompts' calibrated ratings (:mod:`labeler.coren.voting`: by default the mean
  of their calibrated scores, ``--vote majority`` the majority of their quintile votes);
* structural — the vote of the prompts whose answer to the retrieved structural question passes;
* temporal — the vote of the prompts whose rating is not violated (the taken action is the prompt's
  high-value action and its plan failed the backward check; :mod:`labeler.coren.temporal`).

Output per step: ``labels["coren"] = {contextual, structural, temporal, ensemble, contextual_soft,
w_contextual, w_structural, w_temporal, dist_p0 .. dist_p{N-1}}`` — the four rewards on -2..2; the unvoted
mean scale position over prompts; the orchestrator's weights; and each prompt's raw distribution over the
template's answers for the taken action ([P(No), P(Yes)]: two floats per prompt, kept so the votes can be
recomputed without the judge; ``--no-dists`` drops them). Per trajectory: ``provenance["coren"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from labeler.coren import structural, temporal, voting
from labeler.coren.queries import StepText, ranked_candidates
from labeler.coren.report import Report
from models.trajectory import Trajectory

METHOD = "coren"


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


def high_value_plans(
    cand: Sequence[np.ndarray],
    trajs: Sequence[Trajectory],
    texts: Sequence[tuple[str, list[StepText]]],
    letters: int,
) -> tuple[np.ndarray, list[list[str]]]:
    """One prompt's high-value actions: per step whether the taken action is the prompt's top candidate
    (calibrated by the prompt's letter-position prior over the dataset), and per trajectory the plan."""
    prior = temporal.position_prior(cand, letters)
    high = np.zeros(len(cand), dtype=bool)
    plans = []
    k = 0
    for j, t in enumerate(trajs):
        plan = []
        for i, s in enumerate(t.steps):
            ranked = ranked_candidates(texts[j][1][i], letters)
            best = s.candidates[ranked[temporal.high_value_index(cand[k], prior)]]
            plan.append(best)
            high[k] = best == s.action
            k += 1
        plans.append(plan)
    return high, plans


def contextual_votes(
    rate: np.ndarray, values: Sequence[int], vote: str = "mean"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scale positions (prompts, steps), prompt votes (prompts, steps) and the contextual reward (steps,).

    ``vote="majority"``: the votes are the quintiles of the positions and the reward their majority;
    ``"mean"``: the votes are the calibrated scores on the scale and the reward their mean
    (:mod:`labeler.coren.voting`)."""
    if vote not in voting.VOTES:
        raise ValueError(f"vote {vote!r}: expected one of {', '.join(voting.VOTES)}")
    scores = np.stack([voting.prompt_scores(rate[n], values) for n in range(rate.shape[0])])
    u = np.stack([voting.positions(sc) for sc in scores])
    pos = voting.to_scale(u)  # (prompts, steps) continuous positions on -2..2
    if vote == "mean":
        votes = voting.score_scale(scores, values)
        return pos, votes, votes.mean(axis=0)
    votes = voting.quintile_votes(u)
    contextual = np.array(
        [voting.majority_vote(votes[:, s].tolist(), float(pos[:, s].mean())) for s in range(votes.shape[1])]
    )
    return pos, votes, contextual


def _filtered(
    votes: np.ndarray, pos: np.ndarray, s: int, passed: np.ndarray, fallback: float, vote: str
) -> tuple[float, bool]:
    if vote == "mean":
        return voting.filtered_mean(votes[:, s].tolist(), passed.tolist(), float(fallback))
    return voting.filtered_vote(votes[:, s].tolist(), passed.tolist(), int(fallback), pos[:, s])


def qa_passes(
    answers: Sequence[dict[int, str]],
    qa: Sequence[structural.QAEntry],
    used: Sequence[int],
    embed: Callable[[list[str]], np.ndarray],
    report: Report,
) -> np.ndarray:
    """(prompts, QA entries) pass flags: a prompt's answer is similar enough to the entry's reference."""
    n_p = len(answers)
    passed = np.ones((n_p, max(len(qa), 1)), dtype=bool)
    if used:
        ref = embed([qa[q].answer for q in used])
        for n in range(n_p):
            ans = embed([answers[n][q] or "(no answer)" for q in used])
            sims = (ans * ref).sum(axis=1)
            for q, sim in zip(used, sims, strict=True):
                passed[n, q] = structural.answer_passes(float(sim))
        report.qa_pass_rate = [float(passed[n, list(used)].mean()) for n in range(n_p)]
    return passed


def structural_channel(
    votes: np.ndarray,
    pos: np.ndarray,
    contextual: np.ndarray,
    qa_pass: np.ndarray,
    retrieved: np.ndarray | None,
    report: Report,
    vote: str = "mean",
) -> np.ndarray:
    n_p, n_s = votes.shape
    out = np.zeros(n_s)
    for s in range(n_s):
        passed = qa_pass[:, retrieved[s]] if retrieved is not None else np.zeros(n_p, dtype=bool)
        out[s], fb = _filtered(votes, pos, s, passed, contextual[s], vote)
        report.structural_fallbacks += fb
    return out


def temporal_channel(
    votes: np.ndarray,
    pos: np.ndarray,
    contextual: np.ndarray,
    high: np.ndarray,
    p_yes: np.ndarray,
    traj_of_step: np.ndarray,
    report: Report,
    vote: str = "mean",
) -> np.ndarray:
    n_p, n_s = votes.shape
    back_pass = np.stack([temporal.backward_passes(p_yes[n]) for n in range(n_p)])
    report.backward_pass_rate = [float(back_pass[n].mean()) for n in range(n_p)]
    violated = high & ~back_pass[:, traj_of_step]
    report.temporal_violations = int(violated.sum())
    out = np.zeros(n_s)
    for s in range(n_s):
        out[s], fb = _filtered(votes, pos, s, ~violated[:, s], contextual[s], vote)
        report.temporal_fallbacks += fb
    return out


def step_features(labeler: Any, result: LabelResult) -> np.ndarray:
    """Orchestrator input per step: [emb(observation), emb(action), emb(instruction)] (``labeler.embed``)."""
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


def labeled(
    result: LabelResult, weights: np.ndarray, provenance: dict[str, Any], keep_dists: bool
) -> Iterator[tuple[Trajectory, list[dict[str, Any]], dict[str, Any]]]:
    """Every trajectory with its steps' ``labels["coren"]`` (the channels, the ensemble and the weights) and
    its provenance, for :func:`labeler.label_writer.write_labeled`."""
    ens = (weights * result.channels).sum(axis=1)
    k = 0
    for t in result.trajectories:
        steps = []
        for _ in t.steps:
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
            steps.append(lab)
            k += 1
        yield t, steps, provenance
