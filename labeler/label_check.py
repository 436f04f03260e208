"""A label check that needs no ground truth: do a channel's rewards separate successful from failed
trajectories, and are the labels likely to help a policy?

A verdict is about whole episodes: ``separates`` says that a channel's mean reward per episode tells
successful from failed episodes apart, not that it credits the right steps, which is what a learner reads.
Only an audit of the steps says that (:mod:`labeler.audit`); :func:`step_credit`, printed after the table,
names the channel an audit supports or says the step credit is unverified.

Only the success flag of each trajectory is used (a robot log has it; ``info`` is not read). Per channel:

* **AUROC of the mean reward per step vs success** — the trajectory's rewards averaged over its steps (the
  length normalisation of COREN's objective; a plain sum favours long failures), ranked against the success
  flags, with a 90 % bootstrap interval over trajectories.
* **fitted** — whether the labeler fit the channel on these same success flags (a success-grounded rubric
  built from this data, an orchestrator trained on it, a QA set built from its successes): then the AUROC is
  in-sample and optimistic, and only a held-out figure (a rubric or orchestrator fit on other episodes, or
  the labelers' own cross-fitted checks) says whether it generalises.
* **AUROC without the last step** — the same with each trajectory's last step left out (trajectories of one
  step drop out). A channel whose separation lives in the last step alone (a large reward where the episode
  ends, the steps before it ranked no better than chance) says nothing about which earlier steps helped,
  which is what a learner reads it for.
* **AUROC over the first steps** — the mean reward over each trajectory's first k steps, k the median length
  of the successful ones: every trajectory compared on the same number of steps. Failed episodes often run
  to the step limit while successes stop early, and a channel can separate whole episodes by their length
  while ranking their steps badly (measured: the potential on a TWC easy log ranked progress steps at 0.42,
  its mean reward separated at 0.79, its first 8 steps at 0.64 [0.42, 0.84]).
* **moves vs idle steps** — the per-step facts a log without ground truth holds: a successful episode's
  steps that changed the world (the same world state after them, or on partial states a response the
  episode had drawn before, counts as no change: :attr:`models.trajectory_view.TrajectoryView.changed`)
  hold the steps that made the success, and a failed episode's steps that changed nothing made no progress.
  The AUROC of the channel's rewards on those two kinds of step, with a 90 % bootstrap interval over
  trajectories (:func:`moves_vs_idle`). A
  channel can separate episodes by crediting steps that tell successful episodes apart without being the
  ones that matter (measured: the potential on a response-only TWC easy log of a mixed behaviour separated
  episodes at 0.81, over their first steps at 0.72, ranked progress steps at 0.37; this AUROC was 0.45).
  The successes' last steps alone against every idle step was the earlier test: it called 15 of 44
  benchmark logs ``misplaced`` whose step credit was good, where the potential credits the steps before a
  last step that the failed episodes also take often (``move X to the box``).
* **verdict** — ``separates`` (AUROC >= 0.6 and the interval's low end above 0.5, over whole trajectories,
  without the last step, over the first steps and on moves vs idle steps), ``last step`` (it separates only
  with the last step), ``length`` (only over whole trajectories of different lengths), ``misplaced`` (it
  separates episodes, but does not rank the successes' moves above the failures' idle steps), ``in-sample``
  (it would separate, but the labeler fit it on these flags: measured, built-rubric TRCA labels of two
  ScienceWorld logs separated in-sample at 0.81 while they ranked steps at 0.625; that the labels fail even
  in-sample is still told as ``weak`` or ``inverted``), ``weak`` (neither clearly better nor worse than
  chance), ``inverted`` (the interval's high end below 0.5: the labels rank failures
  above successes and are likely to hurt), ``too few`` (fewer than :data:`MIN_PER_CLASS` successes or
  failures: measured, a permutation of a log's rewards over its steps, labels that rank nothing, was
  called ``separates`` in 9 of 20 permutations of a log with one success, against 0-3 of 20 with 5-10), or
  ``n/a`` (one class only). An audit of the steps adds two (:func:`with_audit`): ``audit disagrees`` (the
  marks contradict the channel's step credit) and ``audit prefers`` (it would separate, but the audit
  supports another channel and not this one, or this one clearly less).

:func:`format_checks` prints the table and a warning line for every channel whose labels are not likely to
help, so the user sees it before training on them.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from labeler.auroc import auroc
from models.channel_choice import choice_path, how_to_choose, read_choice
from models.trajectory import Trajectory

SEPARATES_AUROC = 0.6
MIN_PER_CLASS = 3
"""Fewer successes (or failures) than this give no verdict: a bootstrap over one or two successes calls chance
labels separating as often as not."""
READS_FLAGS = ("return", "adv_episode", "adv_step", "advantage")
"""Channels computed from the success flag itself (returns with the terminal reward, advantages): not
checked, they would separate successes trivially."""


@dataclass(frozen=True)
class Figure:
    """An AUROC and its 90 % bootstrap interval over trajectories (all None where it cannot be computed)."""

    value: float | None = None
    low: float | None = None
    high: float | None = None

    @property
    def separates(self) -> bool:
        """An AUROC of at least :data:`SEPARATES_AUROC` whose interval's low end is above chance."""
        return separates(self.value, self.low)


NO_FIGURE = Figure()


@dataclass
class ChannelCheck:
    """One channel's check: its figures (see the module docstring), whether the labeler fit it on these
    flags, and the verdict with its message."""

    channel: str
    trajectories: int
    successes: int
    mean_reward: Figure
    """The AUROC of each trajectory's mean reward per step against its success flag."""
    fitted: bool
    verdict: str
    message: str
    without_last_step: Figure = NO_FIGURE
    """The same without each trajectory's last step."""
    first_steps: Figure = NO_FIGURE
    """The same over each trajectory's first ``first_steps_k`` steps."""
    first_steps_k: int | None = None
    moves_vs_idle: Figure = NO_FIGURE
    """The AUROC of the successes' steps that changed the world against the failures' steps that changed
    nothing."""

    def to_dict(self) -> dict:
        """The flat JSON record ``label quality --json`` prints and benchmark files store, in its keys since
        before the figures were named (``body_*``: without the last step; ``prefix_*``: the first steps;
        ``anchor_*``: moves vs idle)."""
        flat = {
            "channel": self.channel,
            "trajectories": self.trajectories,
            "successes": self.successes,
            "auroc": self.mean_reward.value,
            "low": self.mean_reward.low,
            "high": self.mean_reward.high,
            "fitted": self.fitted,
            "verdict": self.verdict,
            "message": self.message,
            "body_auroc": self.without_last_step.value,
            "body_low": self.without_last_step.low,
            "prefix_auroc": self.first_steps.value,
            "prefix_low": self.first_steps.low,
            "prefix_steps": self.first_steps_k,
            "anchor_auroc": self.moves_vs_idle.value,
            "anchor_low": self.moves_vs_idle.low,
        }
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in flat.items()}


def mean_rewards(
    trajectories: Sequence[Trajectory], channel: str, drop_last: bool = False, first: int | None = None
) -> list[float | None] | None:
    """Each trajectory's mean reward per step on ``method.channel`` (None if a step lacks it); ``drop_last``:
    over all its steps but the last (None for a trajectory of one step); ``first``: over its first steps."""
    method, _, name = channel.partition(".")
    out: list[float | None] = []
    for t in trajectories:
        vals = [s.labels.get(method, {}).get(name) for s in t.steps]
        if not vals or any(v is None or isinstance(v, list) for v in vals):
            return None
        if drop_last:
            vals = vals[:-1]
        vals = vals[:first]
        out.append(sum(float(v) for v in vals) / len(vals) if vals else None)
    return out


def prefix_steps(trajectories: Sequence[Trajectory]) -> int:
    """The median length of the successful trajectories (at least 2; all of them with no success)."""
    lengths = [len(t.steps) for t in trajectories if t.success] or [len(t.steps) for t in trajectories]
    return max(2, int(np.median(lengths))) if lengths else 2


def cut_auroc(
    trajectories: Sequence[Trajectory], channel: str, boots: int = 400, seed: int = 0, **cut: Any
) -> Figure:
    """:func:`bootstrap_auroc` of the mean rewards over part of each trajectory (``cut``:
    :func:`mean_rewards`'s ``drop_last`` or ``first``); trajectories with no step left drop out."""
    m = mean_rewards(trajectories, channel, **cut) or []
    kept = [(v, bool(t.success)) for v, t in zip(m, trajectories, strict=False) if v is not None]
    return Figure(*bootstrap_auroc([v for v, _ in kept], [y for _, y in kept], boots, seed))


def moves_vs_idle(
    trajectories: Sequence[Trajectory], channel: str, boots: int = 400, seed: int = 0, level: float = 0.9
) -> Figure:
    """The AUROC of the channel's rewards on the successful trajectories' steps that changed the world
    (positive) against the failed trajectories' steps that changed nothing (negative), with its interval
    bootstrapped over trajectories; no figure without both kinds of step."""
    method, _, name = channel.partition(".")
    per: list[tuple[list[float], list[bool]]] = []
    for t in trajectories:
        changed = t.view.changed
        scores, kinds = [], []
        for i, s in enumerate(t.steps):
            v = s.labels.get(method, {}).get(name)
            if isinstance(v, int | float) and bool(changed[i]) == bool(t.success):
                scores.append(float(v))
                kinds.append(bool(t.success))
        per.append((scores, kinds))

    def pooled(idx: Sequence[int] | range) -> float | None:
        return auroc([x for i in idx for x in per[i][0]], [y for i in idx for y in per[i][1]])

    point = pooled(range(len(per)))
    if point is None:
        return NO_FIGURE
    rng = np.random.default_rng(seed)
    stats = [a for _ in range(boots) if (a := pooled(rng.integers(0, len(per), len(per)))) is not None]
    q = (1 - level) / 2
    return Figure(point, float(np.quantile(stats, q)), float(np.quantile(stats, 1 - q)))


def bootstrap_auroc(
    scores: Sequence[float], positives: Sequence[bool], n: int = 400, seed: int = 0, level: float = 0.9
) -> tuple[float | None, float | None, float | None]:
    """(AUROC, low, high): the point estimate and a percentile bootstrap interval over trajectories."""
    point = auroc(scores, positives)
    if point is None:
        return None, None, None
    rng = np.random.default_rng(seed)
    s, y = np.asarray(scores, dtype=float), np.asarray(positives, dtype=bool)
    stats = []
    for _ in range(n):
        i = rng.integers(0, len(s), len(s))
        a = auroc(s[i].tolist(), y[i].tolist())
        if a is not None:
            stats.append(a)
    q = (1 - level) / 2
    return point, float(np.quantile(stats, q)), float(np.quantile(stats, 1 - q))


def fitted_on_flags(trajectories: Sequence[Trajectory], channel: str) -> bool:
    """Whether the labeler that wrote ``channel`` fit it on these trajectories' success flags."""
    method, _, name = channel.partition(".")
    prov = trajectories[0].provenance.get(method, {}) if trajectories else {}
    if method == "coren":
        trained_here = str(prov.get("orchestrator", "")).startswith("trained on this dataset")
        qa_built = prov.get("qa_source") == "built"  # the QA set comes from this data's successes
        return (name == "ensemble" and trained_here) or (name == "structural" and qa_built)
    if method == "trca":
        built_from = prov.get("rubric_dataset")
        return bool(prov.get("rubric_grounded")) and built_from == prov.get("labeled_from")
    return False


def verdict(
    a: float | None,
    low: float | None,
    high: float | None,
    smaller_class: int = MIN_PER_CLASS,
    fitted: bool = False,
) -> str:
    """The verdict of an AUROC and its interval; ``smaller_class``: the episodes of the rarer outcome;
    ``fitted``: the labeler fit the channel on these success flags (a separation is then in-sample)."""
    if a is None:
        return "n/a"
    if smaller_class < MIN_PER_CLASS:
        return "too few"
    if separates(a, low):
        return "in-sample" if fitted else "separates"
    if high is not None and high < 0.5:
        return "inverted"
    return "weak"


def separates(a: float | None, low: float | None) -> bool:
    """An AUROC of at least :data:`SEPARATES_AUROC` whose interval's low end is above chance."""
    return a is not None and a >= SEPARATES_AUROC and low is not None and low > 0.5


MESSAGES = {
    "separates": "its mean reward separates successes from failures",
    "length": "its mean reward separates whole successes from failures, but not over the same number of "
    "first steps: the separation may come from the failures being longer, not from the step credit (which "
    "a learner reads from it)",
    "last step": "its mean reward separates successes from failures only with each episode's last step: the "
    "steps before it are not ranked by the outcome, so the labels say nothing about which steps helped "
    "(a learner would read a sparse reward from them)",
    "misplaced": "its mean reward separates successes from failures, but it does not rank the successful "
    "episodes' steps that changed the world above the failed episodes' steps that changed nothing: the "
    "credit may sit on steps that tell the episodes apart without being the ones that made the difference "
    "(a learner reads the step credit)",
    "in-sample": "its mean reward separates successes from failures, but the labeler fit it on these success "
    "flags, so this cannot tell whether the labels generalise: check them on episodes the labeler did not "
    "see (the rubric builder's --check-folds, or a rubric built from another log)",
    "weak": "its mean reward does not clearly separate successes from failures: no evidence the labels help",
    "inverted": "its mean reward ranks failures above successes: these labels are likely to make a policy "
    "worse than the sparse reward",
    "n/a": "only one class of episode (all successes or all failures): nothing to check against",
    "too few": f"fewer than {MIN_PER_CLASS} successes or failures: too few to tell labels from chance",
    "audit disagrees": "the steps an audit marked as progress are not the ones this channel credits: "
    "whatever the success flags say, its step credit is not what the auditor sees (edgejudge label audit)",
    "audit prefers": "its mean reward separates successes from failures, but an audit of the steps supports "
    "another channel's step credit better than this one's: train on the channel the audit names",
}


CAUTIONS = ("weak", "inverted", "last step", "length", "misplaced", "audit disagrees")
"""Verdicts that say the labels may not help even where the labeler did not fit them on the flags."""
WARNED = (*CAUTIONS, "too few", "in-sample", "audit prefers")
"""Verdicts that print a warning line."""


def check_channels(
    trajectories: Sequence[Trajectory], channels: Sequence[str], boots: int = 400, seed: int = 0
) -> list[ChannelCheck]:
    """The check for every channel that every step carries (see the module docstring)."""
    out = []
    for ch in channels:
        if ch.partition(".")[2] in READS_FLAGS:
            continue
        m = mean_rewards(trajectories, ch)
        if m is not None:
            out.append(_check_channel(trajectories, ch, m, boots, seed))
    return out


def _check_channel(
    trajectories: Sequence[Trajectory], channel: str, means: list[float | None], boots: int, seed: int
) -> ChannelCheck:
    y = [bool(t.success) for t in trajectories]
    check = _episode_check(channel, means, y, boots, seed, fitted_on_flags(trajectories, channel))
    check.first_steps_k = prefix_steps(trajectories)
    check.without_last_step = cut_auroc(trajectories, channel, boots, seed, drop_last=True)
    check.first_steps = cut_auroc(trajectories, channel, boots, seed, first=check.first_steps_k)
    check.moves_vs_idle = moves_vs_idle(trajectories, channel, boots, seed)
    if check.verdict in ("separates", "in-sample"):
        if not check.without_last_step.separates:
            check.verdict = "last step"
        elif not check.first_steps.separates:
            check.verdict = "length"
        elif check.moves_vs_idle.value is not None and not check.moves_vs_idle.separates:
            check.verdict = "misplaced"
    check.message = MESSAGES[check.verdict]
    if check.fitted and check.verdict in CAUTIONS:
        check.message += " (even in-sample, fit on these success flags)"
    return check


def _episode_check(
    channel: str, means: Sequence[float | None], y: list[bool], boots: int, seed: int, fitted: bool
) -> ChannelCheck:
    """The check of whole episodes' mean rewards alone (the other figures are left empty)."""
    whole = Figure(*bootstrap_auroc(list(means), y, boots, seed))
    v = verdict(whole.value, whole.low, whole.high, min(sum(y), len(y) - sum(y)), fitted)
    return ChannelCheck(
        channel=channel,
        trajectories=len(y),
        successes=sum(y),
        mean_reward=whole,
        fitted=fitted,
        verdict=v,
        message=MESSAGES[v],
    )


def heldout_check(
    channel: str, mean_reward: Sequence[float], success: Sequence[bool], boots: int = 400, seed: int = 0
) -> ChannelCheck:
    """The check of held-out mean rewards (each trajectory labeled by a labeler fit without it)."""
    check = _episode_check(channel, mean_reward, [bool(x) for x in success], boots, seed, fitted=False)
    check.message += " (held-out episodes)"
    return check


def with_audit(
    checks: Sequence[ChannelCheck],
    contradicted: set[str],
    preferred: str | None = None,
    vouched: Collection[str] = (),
) -> list[ChannelCheck]:
    """``checks`` with the verdict ``audit disagrees`` for every channel an audit contradicts
    (:mod:`labeler.audit.agreement`): the success flags cannot vouch for step credit a person's marks
    refute; and, where the audit names a channel (``preferred``), ``audit prefers`` instead of
    ``separates`` for a channel it does not vouch for (not in ``vouched``: supported, with an interval that
    reaches the named channel's agreement, :func:`labeler.audit.agreement.vouched`): the flags cannot vouch
    for it beside a channel whose step credit the marks confirm better."""
    out = []
    for c in checks:
        if c.channel in contradicted:
            c = replace(c, verdict="audit disagrees", message=MESSAGES["audit disagrees"])
        elif preferred and c.verdict == "separates" and c.channel != preferred and c.channel not in vouched:
            c = replace(c, verdict="audit prefers", message=MESSAGES["audit prefers"])
        out.append(c)
    return out


def format_checks(checks: Sequence[ChannelCheck], path: str = "") -> str:
    def f(v: float | None) -> str:
        return "  n/a" if v is None else f"{v:.3f}"

    head = checks[0] if checks else None
    lines = [
        f"{os.path.basename(path) or 'labels'}: label check from the success flags alone"
        + (f" ({head.trajectories} trajectories, {head.successes} successful)" if head else ""),
        f"{'channel':<28} {'AUROC mean reward vs success':>29} {'90% interval':>15} {'w/o last step':>14}"
        f" {'first steps':>12} {'moves vs idle':>14} {'fitted here':>12}  verdict",
    ]
    for c in checks:
        whole = c.mean_reward
        ci = "" if whole.low is None else f"[{whole.low:.2f}, {whole.high:.2f}]"
        first = "" if c.first_steps_k is None else f"{f(c.first_steps.value)} ({c.first_steps_k})"
        lines.append(
            f"{c.channel:<28} {f(whole.value):>29} {ci:>15} {f(c.without_last_step.value):>14} {first:>12}"
            f" {f(c.moves_vs_idle.value):>14} {('yes' if c.fitted else 'no'):>12}  {c.verdict}"
        )
    for c in checks:
        if c.verdict in WARNED:
            lines.append(f"warning: {c.channel}: {c.message}")
    return "\n".join(lines)


def step_credit(path: str | os.PathLike[str]) -> str:
    """What the check's table leaves open, said after it: the verdicts read the success flags alone, so they
    name no channel to train on. The channel an audit of the steps supports (recorded beside ``path`` by
    ``label quality --audit``, :mod:`models.channel_choice`) is named with its evidence; without one, two
    lines say the step credit is unverified and how to verify it."""
    try:
        choice = read_choice(path)
    except ValueError as e:
        choice, why = None, str(e)
    else:
        why = (
            "the verdicts say only whether a channel's mean reward per episode separates successful from "
            "failed episodes, not whether its steps are credited right"
        )
    if choice is not None:
        return (
            f"train on {choice['channel']}: {choice.get('evidence') or 'an audit supports it'} "
            f"({choice_path(path).name}: 'edgejudge train --reward auto' trains on it)"
        )
    return f"step credit unverified: {why}\nverify it: {how_to_choose(path)}"
