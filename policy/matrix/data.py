"""The matrix's training data per world: one collected pool, nested success-scarce cuts of it, and their
labels, all made with the command line and reused from the work folder when present.

The pool is collected with ``edgejudge collect``'s behaviour mixture, large enough that the largest size
has its share of failed episodes; each size's file holds the first successful and the first failed episodes
of the pool (:func:`labeler.subset.scarce_subset`, the rule of ``edgejudge data subset``), so smaller files
are inside larger ones. The rubrics of ``trca-built`` are built per file, one per task type (``edgejudge
rubrics build`` without ``--task-type``); TRCA labels the largest file, COREN the largest of the COREN
sizes; a smaller labeled file is the labeled episodes of its plain one.

Each file also comes in the other log shapes of :data:`SHAPES` (the label grid's), made from the full-state
file: ``plain`` (flattened into text without a layout) and ``response`` (the last response and the inventory
line); each shape is labeled on its own (its own rubrics, its own potential fit).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from labeler.response_only import flattened, response_only
from labeler.rubrics_cli import per_task_type_path
from labeler.subset import pool_is_enough, scarce_subset
from models.channel_choice import AUTO, ChoiceError, chosen_channel
from models.cli_run import edgejudge
from policy.matrix.plan import Sizes, World, episode_source
from policy.matrix.recipes import EXPERT, SOURCES
from policy.matrix.store import row_key

SHAPES: dict[str, Callable[[Any], Any] | None] = {
    "full": None,
    "plain": flattened,
    "response": response_only,
}
"""Log shapes: the adapter's full states with their layout; ``plain``, the same states flattened into text
with no layout (:func:`labeler.response_only.flattened`); ``response``, each state the last response and the
inventory line (:func:`labeler.response_only.response_only`)."""


def short_hash(cfg: dict[str, Any]) -> str:
    return hashlib.sha256(row_key(cfg).encode()).hexdigest()[:8]


class WorldData:
    def __init__(self, work: Path, world: World, sizes: Sizes, log: Callable[[str], None]):
        self.w, self.s, self.log = world, sizes, log
        cfg = {
            "env": world.env,
            "params": world.key_params,
            "max_steps": world.max_steps,
            **episode_source(world, sizes, "seed"),
            "max_success_rate": sizes.max_success_rate,
        }
        if sizes.split != "train":  # new keys only where set: the folders of earlier runs keep their names
            cfg["split"] = sizes.split
        self.dir = work / f"{world.label}-{short_hash(cfg)}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._pool: list[Any] | None = None

    def pool(self) -> list[Any]:
        """A collected pool with enough failed and successful episodes for the largest size (doubled until
        it has, up to 8x the largest size; with fewer successes the files hold fewer)."""
        from models.trajectory import read_trajectories

        if self._pool is not None:
            return self._pool
        need = max(self.s.sizes)
        if self.w.pool is not None:
            self._pool = read_trajectories(self.w.pool)
            ok = pool_is_enough(self._pool, need, self.s.max_success_rate)
            self.log(
                f"{self.w.label}: the given log {self.w.pool} ({len(self._pool)} episodes, "
                f"{sum(t.success for t in self._pool)} successful)"
                + ("" if ok else f": fewer episodes than a {need}-episode cut wants, the files hold fewer")
            )
            return self._pool
        n = max(20, int(need * 1.25))
        while True:
            path = self.dir / f"pool-{n}.jsonl.gz"
            if not path.exists():
                self.log(f"{self.w.label}: collect {n} episodes ({self.s.behaviour})")
                t0 = time.perf_counter()
                edgejudge(
                    "collect", *self.w.spec_args(), "--split", self.s.split, "--episodes", str(n),
                    "--behaviour", self.s.behaviour, "--noise", str(self.s.noise),
                    "--seed", str(self.s.collect_seed), "--max-steps", str(self.w.max_steps),
                    "--out", str(path),
                )  # fmt: skip
                self.log(f"{self.w.label}: collected in {time.perf_counter() - t0:.0f} s")
            trajs = read_trajectories(path)
            if pool_is_enough(trajs, need, self.s.max_success_rate) or n >= 8 * need:
                self._pool = trajs
                return trajs
            n *= 2

    def plain(self, n: int, shape: str = "full") -> Path:
        """The unlabeled ``n``-episode file in log shape ``shape``."""
        from models.trajectory import read_trajectories, write_trajectories

        path = self.dir / f"data-n{n}{_shape_tag(shape)}.jsonl.gz"
        if not path.exists():
            convert = SHAPES[shape]
            if convert is None:
                write_trajectories(path, scarce_subset(self.pool(), n, self.s.max_success_rate))
            else:
                write_trajectories(path, [convert(t) for t in read_trajectories(self.plain(n))])
        return path

    def expert(self, n: int) -> Path:
        """``n`` pure expert episodes of the train split (gold paths, no noise): the imitation ceiling."""
        return self._gold_paths("train", n, f"expert-n{n}.jsonl.gz")

    def test_gold(self, n: int) -> Path:
        """``n`` expert episodes of the test split (its gold paths), which the per-decision diagnostic
        replays."""
        return self._gold_paths("test", n, f"test-gold-n{n}.jsonl.gz")

    def _gold_paths(self, split: str, n: int, name: str) -> Path:
        path = self.dir / name
        if not path.exists():
            self.log(f"{self.w.label}: collect {n} expert episodes of the {split} split")
            edgejudge(
                "collect", *self.w.spec_args(), "--split", split, "--episodes", str(n),
                "--behaviour", "gold-noise", "--noise", "0", "--seed", str(self.s.collect_seed),
                "--max-steps", str(self.w.max_steps), "--out", str(path),
            )  # fmt: skip
        return path

    def _label_tag(self, source: str) -> str:
        if SOURCES[source].per_step_judge:  # its labels depend on the prompts and the judge
            return f"{source}-{short_hash({'prompts': self.s.coren_prompts, 'judge': self.s.judge})}"
        return source

    def _built_trca(self, n: int, shape: str = "full") -> Path:
        """TRCA labels of the ``n``-episode file from rubrics the judge builds from that file alone (one per
        task type found in it; success-grounded, no hand edit): what a user with ``n`` episodes gets."""

        path = self.label_path("trca-built", n, shape)
        if path.exists():
            return path
        edgejudge(
            "label", "trca", str(self.plain(n, shape)), *self.built_rubrics(n, shape), "--out", str(path)
        )
        return path

    def built_rubrics(self, n: int, shape: str = "full") -> list[str]:
        """``--rubrics`` arguments of the rubrics the judge builds from the ``n``-episode file alone (one per
        task type found in it), built once."""
        from models.trajectory import read_trajectories

        plain = self.plain(n, shape)
        task_types = sorted({t.task_type for t in read_trajectories(plain)})
        prefix = self.dir / f"rubric-n{n}{_shape_tag(shape)}.toml"
        rubrics = [Path(per_task_type_path(str(prefix), t)) for t in task_types]
        if not all(r.exists() for r in rubrics):
            self.log(f"{self.w.label}: build the rubrics of {', '.join(task_types)} from {n} episodes")
            edgejudge(
                "rubrics", "build", "--dataset", str(plain), "--judge", self.s.judge,
                "--max-trajectories", str(n), "--check-folds", "0", "--no-progress", "--out", str(prefix),
            )  # fmt: skip
        return [a for r in rubrics for a in ("--rubrics", str(r))]

    def extended_rubrics(self, n: int, logs: list[Path], folder: Path) -> list[str]:
        """``--rubrics`` arguments of the ``n``-episode file's built rubrics extended by each of ``logs`` in
        turn: round ``k``'s rubric (``folder/rubric-K.TASK_TYPE.toml``) is round ``k - 1``'s with the judge's
        places for the objects of ``log-k`` it does not place yet (``edgejudge rubrics build --base``: no
        judge query when there are none); a task type the log lacks keeps its rubric. Each made once."""
        from labeler.trca.rubric import load_rubric
        from models.trajectory import read_trajectories

        rubrics = [Path(a) for a in self.built_rubrics(n)[1::2]]
        for k, log in enumerate(logs, 1):
            in_log: set[str] | None = None  # the log's task types, read only when a rubric is to be made
            extended = []
            for base in rubrics:
                task_type = load_rubric(base).task_type
                path = Path(per_task_type_path(str(folder / f"rubric-{k}.toml"), task_type))
                if not path.exists():
                    partial = path.with_name(f"{path.stem}.partial.toml")
                    if in_log is None:
                        in_log = {t.task_type for t in read_trajectories(log)}
                    if task_type in in_log:
                        self.log(f"{self.w.label}: extend the rubric of {task_type} by {log.name}")
                        edgejudge(
                            "rubrics", "build", "--dataset", str(log), "--base", str(base),
                            "--judge", self.s.judge, "--check-folds", "0", "--no-progress",
                            "--out", str(partial),
                        )  # fmt: skip
                    else:
                        partial.write_text(base.read_text(encoding="utf-8"), encoding="utf-8")
                    partial.replace(path)  # complete or absent: a run cut short builds it again
                extended.append(path)
            rubrics = extended
        return [a for r in rubrics for a in ("--rubrics", str(r))]

    def label_path(self, source: str, n: int, shape: str = "full") -> Path:
        """Where the ``n``-episode training file of log shape ``shape`` labeled for ``source`` is kept (made
        or not); the success flag and the sparse reward need no labels: the unlabeled file; a source that
        reads another's labels (``trca-auto``): that one's file."""
        source = SOURCES[source].label_source
        labeling = SOURCES[source].labeling
        if labeling == "expert":
            return self.dir / f"expert-n{n}.jsonl.gz"
        if labeling == "none":
            return self.dir / f"data-n{n}{_shape_tag(shape)}.jsonl.gz"
        return self.dir / f"data-n{n}{_shape_tag(shape)}.{self._label_tag(source)}.jsonl.gz"

    def label_quality(self, source: str, n: int) -> dict[str, Any] | None:
        """The labels behind a row: per-step AUROC of the reward channel of ``source`` against score progress
        and the gold path (``label quality``), and its success separation (``label quality --check``); None
        for the success flag and expert episodes, or when the labeled file is not there. Cached beside it."""
        path = self.label_path(source, n)
        if source in ("sparse", EXPERT) or not path.exists():
            return None
        return file_label_quality(path, source)

    def _cut_from_largest(self, source: str, n: int, shape: str) -> Path:
        """The ``n``-episode file's labels cut from those of the largest file ``source`` labels (labeled once:
        the labels of an episode do not depend on the others)."""
        from models.trajectory import read_trajectories, write_trajectories

        src = SOURCES[source]
        sizes = [m for m in self.s.sizes if not src.per_step_judge or m <= self.s.coren_max_episodes]
        big_n = max(sizes)
        big = self.label_path(source, big_n, shape)
        if not big.exists():
            self.log(f"{self.w.label}: label {source} on {big_n} episodes")
            t0 = time.perf_counter()
            extra = (
                ["--prompts", str(self.s.coren_prompts), "--judge", self.s.judge]
                if src.per_step_judge
                else []
            )
            edgejudge("label", src.reward, str(self.plain(big_n, shape)), "--out", str(big), *extra)
            self.log(f"{self.w.label}: labeled in {time.perf_counter() - t0:.0f} s")
        path = self.label_path(source, n, shape)
        if not path.exists():
            ids = {t.id for t in read_trajectories(self.plain(n, shape))}
            write_trajectories(path, [t for t in read_trajectories(big) if t.id in ids])
        return path

    def training_file(self, source: str, n: int, shape: str = "full") -> tuple[Path, dict[str, Any]]:
        """The success-scarce training file of ``n`` episodes in log shape ``shape`` labeled for ``source``,
        and its statistics; for an ``auto`` source, a file without a recorded choice is a
        :class:`click.ClickException` (:func:`train_reward`) before anything trains on it."""
        row_source, source = source, SOURCES[source].label_source
        labeling = SOURCES[source].labeling
        if labeling == "expert":
            path = self.expert(n)
        elif labeling == "built":
            path = self._built_trca(n, shape)
        elif labeling == "none":
            path = self.plain(n, shape)
        elif labeling == "per-file":  # e.g. cross-fitted on the file itself: each size is labeled on its own
            path = self.label_path(source, n, shape)
            if not path.exists():
                edgejudge("label", SOURCES[source].reward, str(self.plain(n, shape)), "--out", str(path))
        else:
            path = self._cut_from_largest(source, n, shape)
        train_reward(row_source, [path])
        return path, file_stats(path)

    def round_training_file(
        self, source: str, n: int, logs: list[Path], out: Path, *, extend: bool = False
    ) -> tuple[Path, dict[str, Any]]:
        """The training file of a loop's round: the ``n``-episode training file's episodes and those of
        ``logs`` (what the deployed policies played, in round order) in one file ``out``, labeled for
        ``source`` on the whole set as the first round's file was (TRCA's episode-relative advantages and the
        potential's fit read every episode; a built rubric is the first file's, reused, or with ``extend``
        extended by each log in turn: :meth:`extended_rubrics`), and its statistics."""
        from models.log_set import read_logs
        from models.trajectory import write_trajectories

        src = SOURCES[SOURCES[source].label_source]
        if not out.exists():
            merged = out.with_name(out.name.replace(".jsonl.gz", ".plain.jsonl.gz"))
            write_trajectories(merged, read_logs([self.plain(n), *logs]))
            if src.labeling == "none":
                merged.replace(out)
            else:
                extra: list[str] = []
                if src.per_step_judge:
                    extra = ["--prompts", str(self.s.coren_prompts), "--judge", self.s.judge]
                elif src.labeling == "built":  # the first file's rubrics, or those extended by the logs
                    extra = self.extended_rubrics(n, logs, out.parent) if extend else self.built_rubrics(n)
                self.log(f"{self.w.label}: label {source} on {out.name}")
                edgejudge("label", src.reward, str(merged), "--out", str(out), *extra)
                merged.unlink()
        train_reward(source, [out])
        return out, file_stats(out)


def file_label_quality(path: Path, source: str) -> dict[str, Any] | None:
    """The labels of ``source`` in the file ``path`` as a row records them (:func:`label_summary`'s channel,
    per-step AUROCs and check), cached beside the file; None for an ``auto`` source whose file has no usable
    recorded choice."""
    from models.trajectory import read_trajectories

    channel = channel_of(source)
    if channel == AUTO:
        try:
            channel = chosen_channel(path)[0]
        except ChoiceError:
            return None
    cache = path.with_name(path.name.removesuffix(".jsonl.gz") + ".quality.json")
    if cache.exists() and (cached := json.loads(cache.read_text()))["channel"] == channel:
        return cached  # sources that share a file may measure different channels
    full = label_summary(read_trajectories(path), channel)
    out = {k: full[k] for k in ("channel", "auroc_progress", "auroc_gold", "check", "check_auroc")}
    cache.write_text(json.dumps(out))
    return out


def file_stats(path: Path) -> dict[str, Any]:
    """What a row records of its training file: episodes, successes, their share, steps."""
    from models.trajectory import read_trajectories

    trajs = read_trajectories(path)
    succ = sum(t.success for t in trajs)
    return {
        "train_successes": succ,
        "train_success_rate": succ / len(trajs),
        "train_steps": sum(len(t.steps) for t in trajs),
        "train_actual_episodes": len(trajs),
    }


def _shape_tag(shape: str) -> str:
    if shape not in SHAPES:
        raise ValueError(f"unknown log shape {shape!r}: expected one of {', '.join(SHAPES)}")
    return "" if shape == "full" else f".{shape}"


def train_reward(source: str, files: Sequence[Path]) -> str:
    """The ``edgejudge train --reward`` of a row of ``source`` trained on ``files``: the source's own, or for
    an ``auto`` source the channel recorded beside its one labeled file
    (:func:`models.channel_choice.chosen_channel`, the resolution of ``edgejudge train --reward auto``), so
    the checkpoint names the channel it trained on. No recorded choice is a :class:`click.ClickException`
    naming the file and the commands that record one: no default channel stands in."""
    reward = SOURCES[source].reward
    if reward != AUTO:
        return reward
    if len(files) != 1:
        raise click.ClickException(f"{source}: auto reads the choice recorded for one labeled file")
    try:
        return chosen_channel(files[0])[0]
    except ChoiceError as e:
        raise click.ClickException(f"{source}: {e}") from None


def channel_of(source: str) -> str:
    """The label channel a reward source is measured on (``trca`` -> ``trca.total``)."""
    from policy.training.rewards import parse_reward

    if source in SOURCES:
        return SOURCES[source].channel
    spec = parse_reward(source)
    return f"{spec.method}.{spec.channel}"


def label_summary(trajs: list[Any], channel: str) -> dict[str, Any]:
    """What the labels of ``channel`` in ``trajs`` are worth: the file's counts, per-step AUROC against score
    progress and the gold path (``label quality``; ``success``: the episode's flag on every step), every
    channel of the same method beside it, and the label check's verdict from the success flags alone
    (``label quality --check``; none for the flag itself)."""
    from labeler.auroc import auroc
    from labeler.label_check import check_channels
    from labeler.quality import measure

    rep = measure(trajs)
    out: dict[str, Any] = {
        "channel": channel,
        "trajectories": rep.trajectories,
        "steps": rep.steps,
        "progress_steps": rep.progress_steps,
        "gold_steps": rep.gold_steps,
        "successes": rep.successes,
    }
    if channel == "success":
        flags = [(float(t.success), s.info) for t in trajs for s in t.steps]
        prog = [(v, float(i["progress"]) > 0) for v, i in flags if i.get("progress") is not None]
        gold = [(v, bool(i["gold"])) for v, i in flags if i.get("gold") is not None]
        return {
            **out,
            "auroc_progress": auroc([v for v, _ in prog], [y for _, y in prog]) if prog else None,
            "auroc_gold": auroc([v for v, _ in gold], [y for _, y in gold]) if gold else None,
            "channels": {},
            "check": None,
            "check_auroc": None,
            "check_body_auroc": None,
            "check_prefix_auroc": None,
            "check_anchor_auroc": None,
        }
    method = channel.split(".")[0]
    by = {c.channel: c for c in rep.channels}
    q = by.get(channel)
    checks = check_channels(trajs, [channel]) if q is not None and method != "env" else []
    return {
        **out,
        "auroc_progress": q.auroc_progress if q else None,
        "auroc_gold": q.auroc_gold if q else None,
        "channels": {
            name: {"auroc_progress": c.auroc_progress, "auroc_gold": c.auroc_gold}
            for name, c in by.items()
            if name.split(".")[0] == method
        },
        "check": checks[0].verdict if checks else None,
        "check_auroc": checks[0].mean_reward.value if checks else None,
        "check_body_auroc": checks[0].without_last_step.value if checks else None,
        "check_prefix_auroc": checks[0].first_steps.value if checks else None,
        "check_anchor_auroc": checks[0].moves_vs_idle.value if checks else None,
    }
