"""Each channel's step credit against an audit's marks: does the channel rank the steps the auditor called
progress above the others?

Per channel and auditor, the AUROC of the channel's value on the marked steps, ``progress`` positive against
``harmful`` and ``neither``, with a 90 % bootstrap interval over the marked steps. The audit *supports* a
channel whose interval's low end is above chance and whose AUROC is at least
:data:`labeler.label_check.SEPARATES_AUROC`, and *contradicts* one whose interval's high end is below chance
or whose AUROC is under :data:`CONTRADICTED_BELOW` with enough marks. Fewer than :data:`MIN_PER_CLASS`
progress marks or other marks give no figure. Steps a judge left ``unsure`` are not marks; a judge unsure of
too many (:data:`MIN_JUDGE_AGREEMENT`), or whose marks what the steps did cannot predict on held-out episodes
(:data:`MIN_JUDGE_CONSISTENCY`, :mod:`labeler.audit.spread`), neither supports nor contradicts any channel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from labeler.audit.marks import UNSURE, Mark, by_judge
from labeler.audit.sample import step_value
from labeler.audit.spread import CHANNEL as SPREAD
from labeler.audit.spread import spread
from labeler.label_check import MIN_PER_CLASS, NO_FIGURE, Figure, bootstrap_auroc
from models.trajectory import Trajectory

CONTRADICTED_BELOW = 0.55
"""An AUROC under this against a person's marks: the channel's step credit is not what the person sees."""
MIN_JUDGE_AGREEMENT = 0.75
"""The share of asked steps a judge auditor's two prompts must agree on before its marks support or contradict
a channel. Chosen on the label protocol's design logs (docs/benchmarks/label-logs.md): it halves the audits
that refute a channel whose steps are right (16 to 8) and keeps their catches. The embedded judge's prompts
agree on 76-81 % of TextWorld steps, where its marks track progress, and on 53-84 % of ScienceWorld's,
where they barely do: the gate stops part of the false refutations, not all."""
MIN_JUDGE_CONSISTENCY = 0.90
"""The AUROC a judge auditor's marks, spread from other episodes' marked steps by what the steps did
(:mod:`labeler.audit.spread`), must reach against its own marks before they support or contradict a channel: a
judge that marks the same kind of step differently from one episode to the next rates something else than
what the steps did. Chosen on the label protocol's design logs (docs/benchmarks/label-logs.md): the embedded
judge's consistency is 0.93-0.98 on its six TextWorld logs, where its marks track progress (0.81-0.87), and
0.75-0.89 on its twelve ScienceWorld logs, where they barely do (0.50-0.75); consistency is necessary, not
sufficient: a judge can be consistently wrong."""


@dataclass(frozen=True)
class AuditFigure:
    channel: str
    by: str
    marked: int
    """Steps with a mark of this auditor that the log holds."""
    progress: int
    """Of them, marked progress."""
    figure: Figure
    """The AUROC of the channel's value, progress against the other marks, and its interval."""
    asked: int = 0
    """Steps the auditor was asked, ``unsure`` ones included (a person's: the marked ones)."""
    consistency: float | None = None
    """The auditor's marks spread from other episodes against its own (:mod:`labeler.audit.spread`)."""

    @property
    def agreeing(self) -> bool:
        """A person always; a judge whose prompts agreed on at least :data:`MIN_JUDGE_AGREEMENT` of the steps
        it was asked."""
        return not by_judge(self.by) or self.marked >= MIN_JUDGE_AGREEMENT * self.asked

    @property
    def consistent(self) -> bool:
        """A person always; a judge whose prompts agree (:attr:`agreeing`) and whose marks are consistent
        across episodes (:data:`MIN_JUDGE_CONSISTENCY`; no figure: too few marks to say)."""
        if not by_judge(self.by):
            return True
        return self.agreeing and (self.consistency is None or self.consistency >= MIN_JUDGE_CONSISTENCY)

    @property
    def supported(self) -> bool:
        return self.consistent and self.figure.separates

    @property
    def contradicted(self) -> bool:
        f = self.figure
        if f.value is None or not self.consistent:
            return False
        return (f.high is not None and f.high < 0.5) or f.value < CONTRADICTED_BELOW

    @property
    def verdict(self) -> str:
        if self.figure.value is None:
            return "too few marks"
        if not self.agreeing:
            return "judge unsure"
        if not self.consistent:
            return "judge inconsistent"
        if self.supported:
            return "supported"
        return "contradicted" if self.contradicted else "unclear"

    def to_dict(self) -> dict:
        f = self.figure
        return {
            "channel": self.channel,
            "by": self.by,
            "marked": self.marked,
            "progress": self.progress,
            "asked": self.asked,
            "consistency": None if self.consistency is None else round(self.consistency, 4),
            "auroc": None if f.value is None else round(f.value, 4),
            "low": None if f.low is None else round(f.low, 4),
            "high": None if f.high is None else round(f.high, 4),
            "verdict": self.verdict,
        }


def audit_figures(
    trajectories: Sequence[Trajectory],
    marks: Mapping[tuple[str, int], Mark],
    channels: Sequence[str],
    by: str = "person",
    boots: int = 400,
    seed: int = 0,
) -> list[AuditFigure]:
    """One :class:`AuditFigure` per channel for the standing ``marks`` (:func:`labeler.audit.marks.current`)
    of auditor ``by`` on the steps of ``trajectories``."""
    by_id = {t.id: t for t in trajectories}
    asked = [
        m for m in marks.values() if m.by == by and m.id in by_id and 0 <= m.step < len(by_id[m.id].steps)
    ]
    marked = [(by_id[m.id], m.step, m.mark == "progress") for m in asked if m.mark != UNSURE]
    n_pos = sum(1 for *_, p in marked if p)
    consistency = spread(trajectories, {(t.id, i): p for t, i, p in marked}).consistency if marked else None
    out = []
    for ch in channels:
        fig = NO_FIGURE
        if min(n_pos, len(marked) - n_pos) >= MIN_PER_CLASS:
            scores = [step_value(t, i, ch) for t, i, _ in marked]
            fig = Figure(*bootstrap_auroc(scores, [p for *_, p in marked], boots, seed))
        out.append(AuditFigure(ch, by, len(marked), n_pos, fig, len(asked), consistency))
    return out


def best_supported(figures: Sequence[AuditFigure]) -> AuditFigure | None:
    """The channel the audit supports with the highest AUROC (None when it supports none)."""
    return max((f for f in figures if f.supported), key=lambda f: f.figure.value or 0.0, default=None)


def vouched(figures: Sequence[AuditFigure]) -> set[str]:
    """The channels the audit vouches for: those it supports whose interval reaches the AUROC of the channel
    it supports best. Beside that channel, one the marks rank clearly lower keeps no ``separates`` either."""
    best = best_supported(figures)
    if best is None or best.figure.value is None:
        return set()
    return {f.channel for f in figures if f.supported and (f.figure.high or 0.0) >= best.figure.value}


def format_audit(figures: Sequence[AuditFigure]) -> str:
    """The audit's table and the channel it points to."""
    if not figures:
        return "audit: no channel to compare with the marks"
    first = figures[0]
    unsure = f" ({first.asked - first.marked} more asked, unsure)" if first.asked > first.marked else ""
    c = first.consistency
    steady = "" if c is None else f", consistency {c:.2f} (its marks predicted from other episodes')"
    lines = [
        f"audit by {first.by}: {first.marked} marked steps{unsure}, {first.progress} progress{steady}; "
        "per channel, the AUROC of its credit on progress steps against the other marked steps "
        "[90 % bootstrap]",
    ]
    for f in figures:
        fig = f.figure
        value = "  n/a " if fig.value is None else f"{fig.value:.3f} [{fig.low:.2f}, {fig.high:.2f}]"
        lines.append(f"  {f.channel:28s} {value:22s} {f.verdict}")
    best = best_supported(figures)
    if best is not None:
        lines.append(f"train on {best.channel}: the audit supports its step credit ({best.figure.value:.3f})")
    elif not first.agreeing:
        lines.append(
            f"step credit unverified: the judge's two prompts agreed on {first.marked} of the {first.asked} "
            f"steps asked (under {MIN_JUDGE_AGREEMENT:.0%}): its marks neither support nor contradict a "
            "channel; a person's audit would tell"
        )
    elif not first.consistent:
        lines.append(
            f"step credit unverified: the judge marks the same kind of step differently across episodes (its "
            f"marks predicted from other episodes' at {first.consistency:.2f}, under "
            f"{MIN_JUDGE_CONSISTENCY:.2f}): its marks neither support nor contradict a channel; a person's "
            "audit would tell"
        )
    elif all(f.figure.value is None for f in figures):
        lines.append(
            f"step credit unverified: mark at least {MIN_PER_CLASS} progress and {MIN_PER_CLASS} other steps"
        )
    else:
        lines.append("step credit unverified: the audit supports no channel (mark more steps, or relabel)")
    beats = best is None or (best.figure.value is not None and c is not None and c > best.figure.value)
    if first.consistent and c is not None and beats and all(f.channel != SPREAD for f in figures):
        lines.append(
            f"the marks spread to every step by what the steps did agree with them at {c:.3f} on held-out "
            "episodes: 'edgejudge label spread FILE --out OUT' writes that channel (audit.spread)"
        )
    return "\n".join(lines)
