"""``edgejudge label quality``: how well each label channel tracks the environment's ground truth.

For every numeric label channel found in a dataset (any method: ``coren.contextual``, ``trca.total``, ...):

* **per-step AUROC vs progress** — does the channel rank steps with real score progress
  (``info["progress"] > 0``) above the others?
* **per-step AUROC vs gold** — does it rank steps on the gold path (``info["gold"]``) above off-path
  steps?
* **return AUROC vs success** — does the trajectory's return (the channel summed over its steps) rank
  successful trajectories above failed ones?

The environment's own sparse reward is reported beside them as the baseline row ``env.reward``. Ground truth
under ``info`` is read here, and only here: labeling never sees it. A file without ground truth (a robot's
log) gets the check of :mod:`labeler.label_check` instead: from the success flags alone, whether each
channel's rewards separate successes from failures (``--check`` adds it to any file), closed by the channel a
step audit supports or the word that step credit is unverified. AUROC is computed by
ranks (Mann-Whitney U, :mod:`labeler.auroc`), ties get the average rank, and a comparison with only one class
present is reported as ``null``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import click

from labeler.auroc import auroc
from labeler.label_check import check_channels, format_checks, step_credit, with_audit
from models.settings import AtomicFile
from models.trajectory import DatasetError, Trajectory, read_trajectories

BASELINE = "env.reward"


@dataclass
class ChannelQuality:
    channel: str
    steps: int = 0
    auroc_progress: float | None = None
    auroc_gold: float | None = None
    auroc_success: float | None = None
    mean: float = 0.0
    std: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


@dataclass
class QualityReport:
    path: str
    trajectories: int
    steps: int
    progress_steps: int
    gold_steps: int
    successes: int
    channels: list[ChannelQuality] = field(default_factory=list)
    missing_ground_truth: int = 0  # steps without info["progress"] / info["gold"]

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "channels"}
        d["channels"] = [c.to_dict() for c in self.channels]
        return d


def channel_names(trajectories: Sequence[Trajectory]) -> list[str]:
    """All ``method.channel`` names with a numeric (scalar) value on at least one step."""
    names: set[str] = set()
    for t in trajectories:
        for s in t.steps:
            for method, chans in s.labels.items():
                names.update(f"{method}.{c}" for c, v in chans.items() if not isinstance(v, list))
    return sorted(names)


def _value(step: Any, channel: str) -> float | None:
    if channel == BASELINE:
        return float(step.env_reward)
    method, _, name = channel.partition(".")
    v = step.labels.get(method, {}).get(name)
    return None if v is None or isinstance(v, list) else float(v)


def _truth(step: Any) -> tuple[bool | None, bool | None]:
    prog = step.info.get("progress")
    gold = step.info.get("gold")
    p = float(prog) > 0 if isinstance(prog, (int, float)) and not isinstance(prog, bool) else None
    g = bool(gold) if isinstance(gold, bool) else None
    return p, g


def measure(trajectories: Sequence[Trajectory], path: str = "") -> QualityReport:
    """AUROCs of every channel (plus the env-reward baseline) against the ground truth under ``info``."""
    all_steps = [s for t in trajectories for s in t.steps]
    truths = [_truth(s) for s in all_steps]
    report = QualityReport(
        path=path,
        trajectories=len(trajectories),
        steps=len(all_steps),
        progress_steps=sum(1 for p, _ in truths if p),
        gold_steps=sum(1 for _, g in truths if g),
        successes=sum(1 for t in trajectories if t.success),
        missing_ground_truth=sum(1 for p, g in truths if p is None or g is None),
    )
    for channel in [*channel_names(trajectories), BASELINE]:
        q = ChannelQuality(channel)
        vals, prog_s, prog_y, gold_s, gold_y = [], [], [], [], []
        for s, (p, g) in zip(all_steps, truths, strict=True):
            v = _value(s, channel)
            if v is None:
                continue
            vals.append(v)
            if p is not None:
                prog_s.append(v)
                prog_y.append(p)
            if g is not None:
                gold_s.append(v)
                gold_y.append(g)
        returns, success = [], []
        for t in trajectories:
            tv = [_value(s, channel) for s in t.steps]
            if tv and all(v is not None for v in tv):
                returns.append(sum(tv))  # type: ignore[arg-type]
                success.append(t.success)
        q.steps = len(vals)
        if vals:
            q.mean = sum(vals) / len(vals)
            q.std = math.sqrt(sum((v - q.mean) ** 2 for v in vals) / len(vals))
        q.auroc_progress = auroc(prog_s, prog_y)
        q.auroc_gold = auroc(gold_s, gold_y)
        q.auroc_success = auroc(returns, success)
        report.channels.append(q)
    return report


def format_report(r: QualityReport) -> str:
    def f(v: float | None) -> str:
        return "   n/a" if v is None else f"{v:6.3f}"

    lines = [
        f"{r.path}: {r.trajectories} trajectories ({r.successes} successful), {r.steps} steps "
        f"({r.progress_steps} with score progress, {r.gold_steps} on the gold path)",
        f"{'channel':<28} {'steps':>6} {'AUROC progress':>15} {'AUROC gold':>11} {'AUROC success':>14} "
        f"{'mean':>7} {'std':>6}",
    ]
    for c in r.channels:
        lines.append(
            f"{c.channel:<28} {c.steps:>6} {f(c.auroc_progress):>15} {f(c.auroc_gold):>11} "
            f"{f(c.auroc_success):>14} {c.mean:7.3f} {c.std:6.3f}"
        )
    if r.missing_ground_truth:
        lines.append(
            f"note: {r.missing_ground_truth} steps lack info.progress or info.gold (left out of those AUROCs)"
        )
    return "\n".join(lines)


def plot_channels(
    trajectories: Sequence[Trajectory], channels: Sequence[str], png: str, max_trajectories: int = 4
) -> int:
    """PNG of each channel along a few trajectories (successful and failed), progress steps marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    picked = [t for t in trajectories if t.success][: (max_trajectories + 1) // 2]
    picked += [t for t in trajectories if not t.success][: max_trajectories - len(picked)]
    picked += [t for t in trajectories if t not in picked][: max_trajectories - len(picked)]
    fig, axes = plt.subplots(len(picked), 1, figsize=(11, 2.4 * len(picked)), squeeze=False)
    for ax, t in zip(axes[:, 0], picked, strict=True):
        xs = list(range(len(t.steps)))
        for ch in channels:
            ys = [_value(s, ch) for s in t.steps]
            if all(y is None for y in ys):
                continue
            ax.plot(xs, [float("nan") if y is None else y for y in ys], marker=".", label=ch)
        for x, s in enumerate(t.steps):
            p, _ = _truth(s)
            if p:
                ax.axvline(x, color="green", alpha=0.15, linewidth=6)
        ax.set_title(f"{t.id} ({'success' if t.success else 'failure'}); green: score progress", fontsize=9)
        ax.set_xlabel("step")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    try:
        with AtomicFile(png, suffix=".png") as tmp:
            fig.savefig(tmp, dpi=90, format="png")
    finally:
        plt.close(fig)
    return len(picked)


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option(
    "--plot",
    "png",
    default=None,
    type=click.Path(dir_okay=False),
    help="Write a PNG of the channels along a few trajectories.",
)
@click.option(
    "--plot-trajectories",
    default=4,
    show_default=True,
    type=click.IntRange(1, 20),
    help="How many trajectories the PNG shows.",
)
@click.option(
    "--check/--no-check",
    "with_check",
    default=None,
    help="The label check from the success flags alone (default: only when FILE has no ground truth).",
)
@click.option(
    "--audit",
    "audit_path",
    type=click.Path(dir_okay=False, exists=True),
    help="A marks file of 'edgejudge label audit': every channel's step credit against the marked steps "
    "(per auditor), the channel the marks support, and no 'separates' for a channel they contradict.",
)
def quality(
    file: str,
    as_json: bool,
    png: str | None,
    plot_trajectories: int,
    with_check: bool | None,
    audit_path: str | None,
) -> None:
    """AUROC of every label channel in FILE against the environment's ground truth.

    Per step: channel vs score progress (info.progress > 0) and vs gold-path membership (info.gold).
    Per trajectory: the channel's return (sum over steps) vs the success flag. The env's sparse reward is the
    baseline row. Ground truth is used only here, never for labeling.

    Without ground truth in FILE (no info.progress / info.gold), the label check from the success flags
    alone: per channel, the AUROC of its mean reward per step against success, with a 90 % bootstrap interval,
    whether the labeler fit it on these flags, and a warning for labels not likely to help. Its verdicts say
    whether episodes separate, not whether steps are credited right: a last line names the channel a step
    audit supports (--audit records it), or says step credit is unverified.
    """
    try:
        trajs = read_trajectories(file)
    except DatasetError as e:
        raise click.ClickException(str(e)) from None
    report = measure(trajs, path=file)
    if not any(c.channel != BASELINE for c in report.channels):
        click.echo(f"{file}: no label channels found (label it first: edgejudge label coren ...)", err=True)
    no_truth = report.steps > 0 and report.missing_ground_truth == report.steps
    checks = None
    if with_check or (with_check is None and no_truth):
        names = [c.channel for c in report.channels if c.channel != BASELINE]
        checks = check_channels(
            trajs, [n for n in names if not n.partition(".")[2].startswith(("w_", "adv"))]
        )
    audits = _audits(trajs, audit_path) if audit_path else []
    named = _named(audits) if audits else None
    if checks is not None and audits:
        from labeler.audit.agreement import vouched

        checks = with_audit(
            checks,
            {f.channel for fs in audits for f in fs if f.contradicted},
            named.channel if named else None,
            set().union(*(vouched(fs) for fs in audits)),
        )
    if audits:  # before the check is printed: the channel it names is this audit's
        _record_choice(file, named)
    if as_json:
        d = report.to_dict()
        if checks is not None:
            d["label_check"] = [c.to_dict() for c in checks]
        if audit_path:
            d["audit"] = [f.to_dict() for fs in audits for f in fs]
        click.echo(json.dumps(d, indent=2))
    else:
        if not no_truth or checks is None:
            click.echo(format_report(report))
        if checks is not None:
            click.echo(format_checks(checks, file))
            click.echo(step_credit(file))
        if audits:
            from labeler.audit.agreement import format_audit

            for figures in audits:
                click.echo(format_audit(figures))
    if png:
        # rewards only: ensemble weights (w_*) are in the table but would flatten the plot
        rewards = [c.channel for c in report.channels if not c.channel.partition(".")[2].startswith("w_")]
        n = plot_channels(trajs, rewards, png, plot_trajectories)
        click.echo(f"wrote {png} ({n} trajectories)", err=as_json)


def _audits(trajs: Sequence[Trajectory], path: str) -> list[list[Any]]:
    """Per auditor in the marks file ``path``, every audited channel against the auditor's marks."""
    from labeler.audit.agreement import audit_figures
    from labeler.audit.marks import MarksError, current, read_marks
    from labeler.audit.sample import audited_channels

    try:
        marks = read_marks(path)
    except MarksError as e:
        raise click.ClickException(str(e)) from None
    channels = audited_channels(trajs)
    return [
        audit_figures(trajs, current(marks, by), channels, by) for by in dict.fromkeys(m.by for m in marks)
    ]


def _named(audits: list[list[Any]]) -> Any:
    """The channel figure the audits name: the one a person's audit supports best, else a judge's; None when
    no audit supports one."""
    from labeler.audit.agreement import best_supported
    from labeler.audit.marks import by_judge

    for figures in sorted(audits, key=lambda figs: by_judge(figs[0].by) if figs else True):
        if (best := best_supported(figures)) is not None:
            return best
    return None


def _record_choice(file: str, best: Any) -> None:
    """The channel the audits name (:func:`_named`) recorded beside FILE for ``edgejudge train --reward
    auto``; a choice recorded before is removed when no audit supports one now."""
    from models.channel_choice import choice_path, write_choice

    if best is None:
        choice_path(file).unlink(missing_ok=True)
        return
    f = best.figure
    evidence = (
        f"the audit by {best.by} supports it: AUROC {f.value:.3f} [{f.low:.2f}, {f.high:.2f}] on "
        f"{best.marked} marked steps ({best.progress} progress)"
    )
    path = write_choice(file, best.channel, best.by, evidence)
    click.echo(f"recorded in {path}: 'edgejudge train {file} --reward auto' trains on {best.channel}",
               err=True)  # fmt: skip
