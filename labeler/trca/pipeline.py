"""Label a trajectory dataset with TRCA rewards and advantages: two streaming passes, one atomic output.

Pass 1 applies the rubric checks to every transition (no model call, unless judge-only items are asked for
with ``item_judge="llm"``) and computes the step rewards and completion-aware returns. Advantages need every
episode of a group and every step of a decision context, so pass 2 computes them and writes each trajectory
with ``step.labels["trca"]`` and ``traj.provenance["trca"]``. Other methods' labels (e.g. COREN's) are kept.
A failure anywhere leaves no output file; judge answers are cached by the judge, so a rerun resumes at cache
speed.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from labeler.label_writer import LabelWriter
from labeler.trca.advantages import check_gamma, completion_aware_returns, group_standardise
from labeler.trca.checks import CompiledRubric, Transition, context_key, transitions_of
from labeler.trca.rewards import check_lambda, trajectory_rewards
from labeler.trca.rubric import Rubric, RubricError, embedded_rubric_path, load_rubric
from models.trajectory import iter_trajectories

METHOD = "trca"
EPISODE_GROUPS = ("instruction", "task-type")
ITEM_JUDGE_TEMPLATE = "trca.item"
ITEM_JUDGE_VERSION = 1


class Judge(Protocol):  # the part of labeler.judge's judge that TRCA uses
    model_sha256: str

    def score(self, prefix: str, choices: list[str], *, template: str, version: int) -> Any: ...


@dataclass(frozen=True)
class TRCAConfig:
    lam: float = 0.8
    """Weight of the breakthrough reward: r = (1 - lam) r^F + lam r^B."""
    gamma: float = 0.95
    """Discount of the completion-aware return."""
    success_reward: float = 1.0
    """Terminal reward added at the last step of a successful episode."""
    episode_group: str = "instruction"
    """Episodes compared for the episode-relative advantage: same 'instruction' or same 'task-type'."""
    item_judge: str = "none"
    """'llm': ask the judge per transition for judge-only items (no deterministic check); 'none': skip
    them."""

    def validate(self) -> None:
        check_lambda(self.lam)
        check_gamma(self.gamma)
        if self.episode_group not in EPISODE_GROUPS:
            raise ValueError(
                f"episode_group must be one of {', '.join(EPISODE_GROUPS)}, got {self.episode_group!r}"
            )
        if self.item_judge not in ("none", "llm"):
            raise ValueError(f"item_judge must be 'none' or 'llm', got {self.item_judge!r}")


class RubricSet:
    """Rubrics by task type: the files given (one per task type, '*' matches any), else the embedded ones."""

    def __init__(self, paths: Iterable[str | os.PathLike[str]] = (), use_embedded: bool = True):
        self._by_type: dict[str, CompiledRubric] = {}
        self.use_embedded = use_embedded
        for p in paths:
            r = load_rubric(p)
            if r.task_type in self._by_type:
                raise RubricError(
                    str(p),
                    None,
                    "task_type",
                    f"a second rubric for task type {r.task_type!r} "
                    f"(first: {self._by_type[r.task_type].rubric.path})",
                )
            self._by_type[r.task_type] = CompiledRubric(r)

    def get(self, task_type: str) -> CompiledRubric:
        cr = self._by_type.get(task_type)
        if cr is None and self.use_embedded:
            path = embedded_rubric_path(task_type)
            if path is not None:
                cr = self._by_type[task_type] = CompiledRubric(load_rubric(path))
        if cr is None:
            cr = self._by_type.get("*")
        if cr is None:
            raise RubricError(
                "<rubrics>",
                None,
                "task_type",
                f"no rubric for task type {task_type!r}: pass --rubrics FILE, or build one with "
                f"'edgejudge rubrics build --task-type {task_type}'",
            )
        return cr

    def used(self) -> list[Rubric]:
        return [cr.rubric for cr in self._by_type.values()]


def default_cache() -> str:
    """The judge cache shared by the labelers: ``$EDGEJUDGE_CACHE/labels.sqlite`` (``~/.cache/edgejudge``)."""
    from models.registry import cache_dir

    return str(cache_dir() / "labels.sqlite")


def rubric_provenance(rubric: Rubric) -> dict[str, Any]:
    return {
        "rubric_sha256": rubric.sha256,
        "rubric_version": rubric.version,
        "rubric_task_type": rubric.task_type,
        "rubric_file": Path(rubric.path).name if rubric.path else None,
    }


def _key_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


ITEM_PROMPT = (
    "You check one step of an agent in a text game.\n"
    "Task: {instruction}\n"
    "Action: {action}\n"
    "Game response: {feedback}\n"
    "Statement: {statement}\n"
    "Is the statement true for this step? Answer yes or no.\nAnswer:"
)
ITEM_ANCHOR = ITEM_PROMPT.split("{instruction}")[0]  # what every item query starts with (judge.prime)
PASS1_WINDOW = 64  # trajectories handed to a runner at a time (streaming)


def judge_item(judge: Judge, tr: Transition, statement: str, threshold: float = 0.5) -> bool:
    """One judge-only item on one transition: P(yes) over {yes, no} >= threshold."""
    prefix = ITEM_PROMPT.format(
        instruction=tr.instruction,
        action=tr.action,
        feedback=tr.response or "(nothing new)",
        statement=statement,
    )
    s = judge.score(prefix, [" yes", " no"], template=ITEM_JUDGE_TEMPLATE, version=ITEM_JUDGE_VERSION)
    return float(s.probs[0]) >= threshold


@dataclass
class LabelSummary:
    trajectories: int = 0
    steps: int = 0
    seconds: float = 0.0
    judge_queries: int = 0
    item_hits: dict[str, Counter] = field(default_factory=dict)  # rubric file -> item id -> steps it held
    rubrics: list[dict[str, Any]] = field(default_factory=list)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else float("inf")


@dataclass
class _Pass1:
    ids: list[str] = field(default_factory=list)
    rewards: list[list[tuple[float, float, float]]] = field(default_factory=list)
    returns: list[list[float]] = field(default_factory=list)
    episode_keys: list[str] = field(default_factory=list)
    step_keys: list[int] = field(default_factory=list)


def label_trajectory_rewards(
    traj, cr: CompiledRubric, cfg: TRCAConfig, judge: Judge | None = None, hit_counter: Counter | None = None
) -> tuple[list, list[float], int]:
    """Rewards (r^F, r^B, r) and completion-aware returns of one trajectory; also the judge queries made."""
    categories = [c.item.category for c in cr.items]
    active = cr.active(traj.instruction)
    judge_items = [i for i in active if cr.items[i].item.judge] if cfg.item_judge == "llm" else []
    if judge_items and judge is None:
        raise ValueError("item_judge='llm' needs a judge")
    queries = 0
    hits_per_step = []
    for tr in transitions_of(traj):
        hits = cr.hits(tr)
        for i in judge_items:
            queries += 1
            if judge_item(judge, tr, cr.items[i].item.text):  # type: ignore[arg-type]
                hits.append((i, frozenset({""})))
        if hit_counter is not None:
            hit_counter.update(cr.items[i].item.id for i, _ in hits)
        hits_per_step.append(hits)
    rewards = trajectory_rewards(hits_per_step, categories, active, cfg.lam)
    returns = completion_aware_returns(
        [r.total for r in rewards], traj.success, cfg.gamma, cfg.success_reward
    )
    return rewards, returns, queries


def _pass1(trajs: Iterable, rubrics: RubricSet, cfg: TRCAConfig, judge: Judge | None, runner: Any) -> Any:
    """``(traj, rewards, returns, judge queries, item hits)`` per trajectory, in order. With judge-only items
    each trajectory is one unit of judge work from ``judge.prime(ITEM_ANCHOR)``; ``runner(anchor, method,
    calls)`` (``labeler.cluster``) runs windows of them on judge actors instead."""
    asks = cfg.item_judge == "llm"
    if runner is None or not asks:
        for traj in trajs:
            cr = rubrics.get(traj.task_type)
            if asks and judge is not None and hasattr(judge, "prime"):
                judge.prime(ITEM_ANCHOR)
            hits: Counter = Counter()
            rewards, returns, q = label_trajectory_rewards(traj, cr, cfg, judge, hits)
            yield traj, rewards, returns, q, hits
        return
    window: list = []
    for traj in itertools.chain(trajs, [None]):
        if traj is not None:
            rubrics.get(traj.task_type)  # a missing rubric fails here, before any judge work
            window.append(traj)
        if window and (traj is None or len(window) >= PASS1_WINDOW):
            done = runner(ITEM_ANCHOR, "rewards", [(t,) for t in window])
            for t, (rewards, returns, q, hits) in zip(window, done, strict=True):
                yield t, rewards, returns, q, Counter(hits)
            window = []


def label_file(
    in_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str] | None,
    rubrics: RubricSet,
    cfg: TRCAConfig = TRCAConfig(),
    judge: Judge | None = None,
    on_progress: Callable[[str, int], None] | None = None,
    runner: Callable[[str, str, list[tuple]], list[Any]] | None = None,
) -> LabelSummary:
    """Label IN into OUT (``out_path=None``: compute only, write nothing).

    ``on_progress(phase, steps)`` after each trajectory; phase "rewards" (pass 1) or "write" (pass 2).
    ``runner``: where the judge-only items' units run (see :func:`_pass1`)."""
    cfg.validate()
    t0 = time.perf_counter()
    summary = LabelSummary()
    p1 = _Pass1()
    for traj, rewards, returns, q, hits in _pass1(iter_trajectories(in_path), rubrics, cfg, judge, runner):
        cr = rubrics.get(traj.task_type)
        summary.item_hits.setdefault(Path(cr.rubric.path or "?").name, Counter()).update(hits)
        summary.judge_queries += q
        p1.ids.append(traj.id)
        p1.rewards.append([(r.foundational, r.breakthrough, r.total) for r in rewards])
        p1.returns.append(returns)
        p1.episode_keys.append(
            traj.task_type + ("\n" + traj.instruction if cfg.episode_group == "instruction" else "")
        )
        layout = traj.view.layout
        p1.step_keys.extend(
            _key_hash(context_key(traj.instruction, s.observation, layout)) for s in traj.steps
        )
        summary.trajectories += 1
        summary.steps += len(traj.steps)
        if on_progress:
            on_progress("rewards", len(traj.steps))

    adv_episode = group_standardise([g[0] for g in p1.returns], p1.episode_keys)
    adv_step = group_standardise([g for gs in p1.returns for g in gs], p1.step_keys)
    summary.rubrics = [rubric_provenance(r) for r in rubrics.used()]

    if out_path is not None:
        _write(in_path, out_path, rubrics, cfg, p1, (adv_episode, adv_step), judge, on_progress)
    summary.seconds = time.perf_counter() - t0
    return summary


def _write(
    in_path: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    rubrics: RubricSet,
    cfg: TRCAConfig,
    p1: _Pass1,
    advantages: tuple[list[float], list[float]],
    judge: Judge | None,
    on_progress: Callable[[str, int], None] | None,
) -> None:
    """Pass 2: read IN again and write every trajectory with its labels and provenance."""
    adv_episode, adv_step = advantages
    k = 0
    with LabelWriter(out_path, METHOD) as writer:
        for n, traj in enumerate(iter_trajectories(in_path)):
            if n >= len(p1.ids) or traj.id != p1.ids[n]:
                raise RuntimeError(f"{in_path} changed while it was being labeled (trajectory {n})")
            channels = []
            for (r_f, r_b, r), ret in zip(p1.rewards[n], p1.returns[n], strict=True):
                channels.append(
                    {
                        "foundational": r_f,
                        "breakthrough": r_b,
                        "total": r,
                        "return": ret,
                        "adv_episode": adv_episode[n],
                        "adv_step": adv_step[k],
                        "advantage": adv_episode[n] + adv_step[k],
                    }
                )
                k += 1
            writer.write(
                traj, channels, label_provenance(rubrics.get(traj.task_type).rubric, cfg, in_path, judge)
            )
            if on_progress:
                on_progress("write", len(traj.steps))
        if n + 1 != len(p1.ids):
            raise RuntimeError(f"{in_path} changed while it was being labeled ({n + 1} vs {len(p1.ids)})")


def label_provenance(
    rubric: Rubric, cfg: TRCAConfig, in_path: str | os.PathLike[str], judge: Judge | None
) -> dict[str, Any]:
    """``provenance["trca"]`` of a trajectory labeled with ``rubric``."""
    prov: dict[str, Any] = {
        **rubric_provenance(rubric),
        "lambda": cfg.lam,
        "gamma": cfg.gamma,
        "success_reward": cfg.success_reward,
        "episode_group": cfg.episode_group,
        "item_judge": cfg.item_judge,
        "rubric_dataset": rubric.build.get("dataset", ""),
        "rubric_grounded": bool(rubric.build.get("grounded", False)),
        "labeled_from": os.path.basename(str(in_path)),
    }
    if judge is not None and cfg.item_judge == "llm":
        prov["judge_sha256"] = judge.model_sha256
    return prov
