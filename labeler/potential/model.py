"""The success-model potential: Φ = a small model's log-odds that the episode so far ends in success; a step's
reward is ΔΦ, what the step moved them.

The model is a logistic regression over episode prefixes. A prefix is the set of step features
(:mod:`labeler.potential.features`) seen up to its last step, so its log-odds is
``Φ = b + sum(w_f for f seen so far)`` and a step's ``ΔΦ`` is the weight of the features it shows for the
first time in its episode: a step that repeats what the episode already did earns nothing, and a
take-and-undo loop earns its net evidence once. Every prefix of a trajectory is a sample labelled with its
success flag, the empty prefix included (so the bias is the log's base rate and a feature every episode
shows weighs nothing); each trajectory weighs the same in total, and the two classes weigh the same.

**Cross-fitted**: trajectories are dealt into folds (stratified by the success flag); each fold is labeled
by the model fit on the others, so no trajectory's labels come from a model that saw its flag. With fewer
than two successes or two failures there is nothing to fit: :class:`PotentialError`.

Potential-based shaping (Ng, Harada and Russell, 1999) keeps the optimal policy of the success reward; the
model's quality decides how much it helps.

**Support**, a second step score from the same features and folds: the best, among the features a step shows
for the first time in its episode, of the share of the fit's successful trajectories that show the feature
minus half the share of its failed ones. It credits what the successes also did even where failed episodes
did it too (picking up the right thing before failing later), which ΔΦ weighs near zero; it is not
potential-based (a learner is paid for doing a supported step, not for the change it makes).

numpy only; fitting a few thousand steps takes about a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from labeler.folds import crossfit_splits
from labeler.potential.features import counted_once, step_features
from models.trajectory import Trajectory


class PotentialError(ValueError):
    """A log the potential cannot be fit on."""


@dataclass(frozen=True)
class PotentialConfig:
    folds: int = 5
    l2: float = 30.0
    """L2 penalty on the weights, in units of one trajectory's total sample weight. Strong: on logs of
    30-90 episodes a weight that only a few episodes support stays near zero, and the fit is close to a
    feature's success-weighted frequency (per-step AUROC on ScienceWorld response-only logs: 0.74 at 1,
    0.81 at 10, 0.83 at 30-100, 0.78 at 1,000)."""
    iterations: int = 400
    seed: int = 0
    support_failure_weight: float = 0.5
    """:func:`support_table`: what the failed trajectories' showing a feature takes off (the successful
    ones' adds). Chosen, with counting a feature once per episode, on find-living-thing, find-plant and
    find-non-living-thing logs of the label-check benchmark (per-step AUROC 0.73-0.87 at 0.5 counting every
    occurrence, 0.74-0.88 at 1.0, 0.61-0.71 at 0; 0.76-0.90 at 0.5 counted once)."""

    def validate(self) -> None:
        if self.folds < 2:
            raise PotentialError(f"folds must be >= 2, got {self.folds}")
        if not self.l2 > 0:
            raise PotentialError(f"l2 must be > 0, got {self.l2}")


@dataclass
class Fitted:
    bias: float
    weights: dict[str, float]

    def delta(self, increment: dict[str, float]) -> float:
        return float(sum(self.weights.get(n, 0.0) * v for n, v in increment.items()))


def increments(features: Sequence[frozenset[str]]) -> list[dict[str, float]]:
    """Per step, what it adds to its prefix's features: a feature counted once
    (:func:`labeler.potential.features.counted_once`) the first time the episode shows it, any other
    feature each time."""
    seen: set[str] = set()
    out = []
    for f in features:
        out.append({n: 1.0 for n in f if not (counted_once(n) and n in seen)})
        seen |= f
    return out


def class_sizes(success: Sequence[bool]) -> tuple[int, int]:
    """(successful, failed) trajectories, each at least 1 (a share over an empty class is 0, not an error)."""
    wins = sum(1 for s in success if s)
    return max(wins, 1), max(len(success) - wins, 1)


def fit(
    episodes: Sequence[Sequence[dict[str, float]]], success: Sequence[bool], cfg: PotentialConfig
) -> Fitted:
    """The logistic model over the prefixes of ``episodes`` (each a list of step :func:`increments`)."""
    vocab: dict[str, int] = {}
    for ep in episodes:
        for inc in ep:
            for name in inc:
                vocab.setdefault(name, len(vocab))
    # Samples are the prefixes (the empty one, then after each step); a prefix's log-odds is the bias plus
    # the running sum of its steps' contributions, so only the steps' increments are stored (sparse) and
    # the gradient of a step's weights is its increment times the summed errors of the prefixes holding it.
    n_pos, n_neg = class_sizes(success)
    cols, vals, labels, weights = [], [], [], []
    for ep, ok in zip(episodes, success, strict=True):
        if not ep:
            continue
        labels.append(1.0 if ok else 0.0)
        weights.append(0.5 / (n_pos if ok else n_neg) / (len(ep) + 1))
        for inc in ep:
            for name, v in inc.items():
                cols.append(vocab[name])
                vals.append(v)
    steps = [len(ep) for ep in episodes if ep]
    step_of = np.repeat(np.arange(sum(steps)), [len(inc) for ep in episodes if ep for inc in ep])
    col, val = np.asarray(cols, dtype=np.int64), np.asarray(vals)
    n_steps = int(sum(steps))
    ep_of_step = np.repeat(np.arange(len(steps)), steps)
    start = np.concatenate([[0], np.cumsum(steps)[:-1]]).astype(np.int64)
    y_ep, w_ep = np.asarray(labels), np.asarray(weights)
    y_step, w_step = y_ep[ep_of_step], w_ep[ep_of_step]
    lam = cfg.l2 / len(success)  # the loss sums to 1 over trajectories: one trajectory weighs 1/len(success)
    w, b = np.zeros(len(vocab)), 0.0
    m_w, v_w = np.zeros_like(w), np.zeros_like(w)
    m_b = v_b = 0.0
    lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
    for step in range(1, cfg.iterations + 1):
        contrib = np.bincount(step_of, weights=val * w[col], minlength=n_steps)
        run = np.cumsum(contrib)
        z = b + run - np.repeat(run[start] - contrib[start], steps)  # each episode's running sum, from 0
        g_step = w_step * (1.0 / (1.0 + np.exp(-z)) - y_step)  # the prefixes after each step
        g_empty = w_ep * (1.0 / (1.0 + np.exp(-b)) - y_ep)  # the empty prefixes
        tail = np.cumsum(g_step[::-1])[::-1]  # errors of the prefixes at or after each step ...
        ends = np.concatenate([start[1:], [n_steps]])
        after_end = np.append(tail, 0.0)[ends]
        held = tail - np.repeat(after_end, steps)  # ... within its episode
        gw = np.bincount(col, weights=val * held[step_of], minlength=len(vocab)) + lam * w
        gb = float(g_step.sum() + g_empty.sum())
        m_w = b1 * m_w + (1 - b1) * gw
        v_w = b2 * v_w + (1 - b2) * gw * gw
        m_b = b1 * m_b + (1 - b1) * gb
        v_b = b2 * v_b + (1 - b2) * gb * gb
        corr = np.sqrt(1 - b2**step) / (1 - b1**step)
        w -= lr * corr * m_w / (np.sqrt(v_w) + eps)
        b -= lr * corr * m_b / (np.sqrt(v_b) + eps)
    names = list(vocab)
    return Fitted(float(b), {names[i]: float(w[i]) for i in np.flatnonzero(w)})


@dataclass
class StepPotential:
    phi: float  # log-odds of success after the step
    delta: float  # phi minus the log-odds before the step
    support: float = 0.0  # :func:`support`


def support_table(
    episodes: Sequence[Sequence[dict[str, float]]], success: Sequence[bool], failure_weight: float
) -> dict[str, float]:
    """Per shared feature (``*|``), the share of the successful trajectories that show it minus
    ``failure_weight`` times the share of the failed ones that show it."""
    n_pos, n_neg = class_sizes(success)
    table: dict[str, float] = {}
    for ep, ok in zip(episodes, success, strict=True):
        for name in {n for inc in ep for n in inc if n.startswith("*|")}:
            table[name] = table.get(name, 0.0) + (1.0 / n_pos if ok else -failure_weight / n_neg)
    return table


def support(table: dict[str, float], new: frozenset[str] | set[str]) -> float:
    """A step's **support**: the best :func:`support_table` value among the features it shows for the first
    time in its episode (what the successful trajectories, more than the failed ones, also did); 0 if it
    shows none. Each feature is paid once per episode, so repeating a step earns nothing again."""
    return max((table.get(n, 0.0) for n in new if n.startswith("*|")), default=0.0)


def crossfit(
    trajectories: Sequence[Trajectory], cfg: PotentialConfig | None = None
) -> list[list[StepPotential]]:
    """Every step's potential, each trajectory's from the model fit without its fold (see the module
    docstring)."""
    cfg = cfg or PotentialConfig()
    cfg.validate()
    y = [bool(t.success) for t in trajectories]
    wins, losses = sum(y), len(y) - sum(y)
    if min(wins, losses) < 2:
        raise PotentialError(
            f"the potential is fit on the success flags: it needs at least 2 successful and 2 failed "
            f"trajectories, this log has {wins} and {losses}"
        )
    features = [increments(list(step_features(t))) for t in trajectories]
    out: list[list[StepPotential]] = [[] for _ in trajectories]
    for fit_on, fold in crossfit_splits(y, min(cfg.folds, wins, losses), cfg.seed):
        train = [features[i] for i in fit_on]
        train_y = [y[i] for i in fit_on]
        model = fit(train, train_y, cfg)
        table = support_table(train, train_y, cfg.support_failure_weight)
        for i in fold:
            phi, seen = model.bias, set()
            for inc in features[i]:
                d = model.delta(inc)
                phi += d
                out[i].append(StepPotential(phi, d, support(table, inc.keys() - seen)))
                seen |= inc.keys()
    return out
