"""Pieces every trainer shares: seeding, threads, checkpoints (state_dict + JSON, never pickle), curves.

A checkpoint is a directory::

    CKPT/
      checkpoint.json   format/version, scorer config, algorithm + its config, reward source, provenance
      policy.pt         the scorer's state_dict (tensors only: loaded with torch.load(weights_only=True))
      curves.csv        training curves (one row per logged update)
      curves.png        the same, plotted

It is written to a temporary folder beside ``CKPT`` and renamed into place: an interrupted run leaves nothing.
"""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import torch

from models import settings
from models.bundle import read_format_json
from policy.scorer.model import CandidateScorer, ScorerConfig

if TYPE_CHECKING:
    from policy.training.buffer import Batch, TorchTable

CHECKPOINT_FORMAT = "edgejudge.checkpoint"
CHECKPOINT_VERSION = 2
"""2: the structured, memoryful scorer (policy.scorer.model). Version-1 checkpoints (the flat scorer) are
refused: retrain them."""
CHECKPOINT_JSON = "checkpoint.json"
WEIGHTS = "policy.pt"


class CheckpointError(ValueError):
    """A checkpoint path that cannot be loaded: missing, not a checkpoint, wrong version, bad weights."""


def set_threads() -> int:
    """Use ``EDGEJUDGE_THREADS`` torch threads (default 1: the CI box has 2 shared cores)."""
    n = settings.threads()
    torch.set_num_threads(n)
    return n


def seed_everything(seed: int) -> torch.Generator:
    """Seed python, numpy and torch; deterministic kernels on CPU. Returns a torch generator for sampling."""
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    g = torch.Generator()
    g.manual_seed(seed)
    return g


# ------------------------------------------------------------------------------------------------ training


@dataclass
class TrainResult:
    model: CandidateScorer  # the network that is exported and evaluated
    curves: list[dict[str, float]]
    config: dict[str, Any]
    loss_key: str  # the curve that a test checks goes down
    extra: dict[str, Any] = field(default_factory=dict)


class LoopConfig(Protocol):
    """What :func:`train_loop` reads of a trainer's config (every ``*Config`` of ``policy``)."""

    steps: int
    batch_size: int
    seed: int
    log_every: int


def train_loop(
    table: TorchTable,
    update: Callable[[Batch, int], dict[str, float]],
    cfg: LoopConfig,
    *,
    desc: str,
    progress: bool | None,
    modules: list[torch.nn.Module],
    prepare: Callable[[Batch], object] | None = None,
) -> list[dict[str, float]]:
    """The loop every trainer shares: ``cfg.steps`` updates on seeded batches of ``cfg.batch_size``, train
    mode, curve points averaged over ``cfg.log_every`` updates, a progress bar (or, without one, a line on
    stderr at every tenth of the run with the rate and the time left)."""
    import sys
    import time

    from models.progress import progress as progress_bar

    steps, batch_size, seed, log_every = cfg.steps, cfg.batch_size, cfg.seed, cfg.log_every
    if steps < 1 or batch_size < 1 or log_every < 1:
        raise ValueError("steps, batch_size and log_every must be >= 1")
    gen = seed_everything(seed)
    for m in modules:
        m.train()
    curves: list[dict[str, float]] = []
    acc: dict[str, float] = {}
    n = 0
    t0 = time.perf_counter()
    tenth = max(1, steps // 10)

    # Batches are drawn in order on one worker thread, each ``prepare``d (what depends on its rows alone:
    # distinct rows, match features, the token reader's pairs) while the previous one trains: the same
    # batches, in the same order, as drawn inline.
    def draw() -> Batch:
        b = table.sample(batch_size, gen)
        if prepare is not None:
            prepare(b)
        return b

    with ThreadPoolExecutor(1) as pool, progress_bar(steps, enabled=progress, unit="upd", desc=desc) as bar:
        ahead = pool.submit(draw)
        for step in range(1, steps + 1):
            batch = ahead.result()
            if step < steps:
                ahead = pool.submit(draw)
            logs = update(batch, step)
            for k, v in logs.items():
                acc[k] = acc.get(k, 0.0) + v
            n += 1
            if step % log_every == 0 or step == steps:
                point = {"step": float(step), **{k: v / n for k, v in acc.items()}}
                curves.append(point)
                bar.set_postfix({k: f"{v:.3g}" for k, v in list(point.items())[1:4]})
                acc, n = {}, 0
            bar.update(1)
            if bar.disable and (step % tenth == 0 or step == steps) and curves:
                rate = step / max(time.perf_counter() - t0, 1e-9)
                shown = ", ".join(f"{k} {v:.3g}" for k, v in list(curves[-1].items())[1:3])
                print(
                    f"[{desc}] {step}/{steps} updates, {rate:.1f}/s, "
                    f"{(steps - step) / rate:.0f} s left; {shown}",
                    file=sys.stderr,
                    flush=True,
                )
    for m in modules:
        m.eval()
    return curves


def adam(params, lr: float, *, fused: bool = True) -> torch.optim.Adam:
    """Adam as every trainer uses it: ``fused`` (the scorer's ``fast``), the fused kernel (one call per step
    for all parameters instead of ~30 small ops per parameter; the same update up to float rounding) where
    torch has it for the device."""
    params = list(params)
    if fused:
        try:
            return torch.optim.Adam(params, lr=lr, fused=True)
        except (RuntimeError, TypeError, ValueError):  # an older torch or a device without the fused kernel
            pass
    return torch.optim.Adam(params, lr=lr)


def optimize(opt: torch.optim.Optimizer, loss: torch.Tensor) -> None:
    """One gradient step of ``opt`` on ``loss``."""
    opt.zero_grad()
    loss.backward()
    opt.step()


@torch.no_grad()
def soft_update(target: torch.nn.Module, source: torch.nn.Module, tau: float, *, fused: bool = True) -> None:
    """Polyak averaging: ``target <- (1 - tau) * target + tau * source``, parameter by parameter (``fused``:
    one multi-tensor call for all of them)."""
    src, dst = list(source.parameters()), list(target.parameters())
    if len(src) != len(dst):
        raise ValueError("soft_update: the two networks differ")
    if fused:  # one call for all parameters; lerp is the same average
        torch._foreach_lerp_(dst, src, tau)
        return
    for p, pt in zip(src, dst, strict=True):
        pt.mul_(1 - tau).add_(p, alpha=tau)


# ------------------------------------------------------------------------------------------------ checkpoints


@contextmanager
def atomic_dir(out: str | os.PathLike[str], *, overwrite: bool = True) -> Iterator[Path]:
    """Yield a temp folder beside ``out``; on success it replaces ``out``, on error it is removed."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"{out}: exists and is not a directory")
    if out.exists() and not overwrite:
        raise FileExistsError(f"{out}: exists (pass --overwrite to replace it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        yield tmp
        tmp.chmod(0o755)  # mkdtemp makes 0700; the folder is read by services running as other users
        for p in tmp.iterdir():
            if p.is_file():
                p.chmod(0o644)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.old.{os.getpid()}"
        os.replace(out, old)
    os.replace(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def save_checkpoint(
    out: str | os.PathLike[str],
    model: CandidateScorer,
    *,
    algo: str,
    algo_config: dict[str, Any],
    reward: str,
    provenance: dict[str, Any],
    curves: list[dict[str, float]] | None = None,
) -> Path:
    meta = {
        "format": CHECKPOINT_FORMAT,
        "format_version": CHECKPOINT_VERSION,
        "scorer": model.cfg.to_dict(),
        "algo": algo,
        "algo_config": algo_config,
        "reward": reward,
        "provenance": provenance,
    }
    with atomic_dir(out) as tmp:
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, tmp / WEIGHTS)
        (tmp / CHECKPOINT_JSON).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        if curves:
            write_curves(tmp, curves, title=f"{algo} ({reward})")
    return Path(out)


def is_checkpoint(path: str | os.PathLike[str]) -> bool:
    return (Path(path) / CHECKPOINT_JSON).is_file()


def load_checkpoint(path: str | os.PathLike[str]) -> tuple[CandidateScorer, dict[str, Any]]:
    """Load a checkpoint directory; raises :class:`CheckpointError` with the reason."""
    d = Path(path)
    if not d.exists():
        raise CheckpointError(f"{d}: does not exist (train one with 'edgejudge train')")
    if not d.is_dir():
        raise CheckpointError(f"{d}: not a checkpoint directory (expected a folder with {CHECKPOINT_JSON})")
    mpath = d / CHECKPOINT_JSON
    meta = read_format_json(
        mpath,
        CHECKPOINT_FORMAT,
        CHECKPOINT_VERSION,
        CheckpointError,
        what="checkpoint",
        missing=f"{d}: no {CHECKPOINT_JSON} (not an edgejudge checkpoint)",
    )
    try:
        cfg = ScorerConfig.from_dict(dict(meta["scorer"]))
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{mpath}: bad scorer config ({e})") from None
    wpath = d / WEIGHTS
    if not wpath.is_file():
        raise CheckpointError(f"{d}: {WEIGHTS} is missing")
    try:
        state = torch.load(wpath, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - corrupt or unsafe files of any kind
        raise CheckpointError(
            f"{wpath}: cannot load weights ({type(e).__name__}: {str(e).splitlines()[0]})"
        ) from None
    model = CandidateScorer(cfg)
    try:
        model.load_state_dict(state)
    except (RuntimeError, TypeError, AttributeError) as e:
        raise CheckpointError(
            f"{wpath}: weights do not match the scorer config ({str(e).splitlines()[0]})"
        ) from None
    return model.eval(), meta


def warm_start(model: CandidateScorer, init: str | os.PathLike[str] | None) -> CandidateScorer:
    """``model`` starting from the policy of the checkpoint ``init`` (a warm start: ``edgejudge train
    --init``), or as it is when ``init`` is empty. The checkpoint's scorer must be the one being trained
    (same encoder, width, reader, token table): :class:`CheckpointError` names what differs."""
    if not init:
        return model
    loaded, _meta = load_checkpoint(init)
    theirs, mine = loaded.cfg.to_dict(), model.cfg.to_dict()
    differ = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
    if differ:
        shown = ", ".join(f"{k} {theirs.get(k)!r} there, {mine.get(k)!r} here" for k in differ[:4])
        raise CheckpointError(f"{init}: cannot warm-start from it, its scorer differs ({shown})")
    state = loaded.state_dict()
    for name, tensor in model.state_dict().items():  # the frozen token table: the same encoder's rows
        if name.endswith("reader.table") and not torch.equal(tensor, state[name]):
            raise CheckpointError(f"{init}: cannot warm-start from it, its token table is another encoder's")
    model.load_state_dict(state)
    return model


# ------------------------------------------------------------------------------------------------ curves


def write_curves(out_dir: Path, rows: list[dict[str, float]], title: str = "") -> None:
    """``curves.csv`` and ``curves.png`` (one panel per logged quantity, against the update step)."""
    keys = sorted({k for r in rows for k in r} - {"step"})
    with open(out_dir / "curves.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["step", *keys])
        w.writeheader()
        for r in rows:
            w.writerow(r)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - matplotlib is in the train extra
        return
    fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * max(1, len(keys)), 2.8), squeeze=False)
    steps = [r["step"] for r in rows]
    for ax, k in zip(axes[0], keys, strict=False):
        ax.plot(steps, [r.get(k, float("nan")) for r in rows], lw=1)
        ax.set_title(k, fontsize=9)
        ax.set_xlabel("update", fontsize=8)
        ax.tick_params(labelsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out_dir / "curves.png", dpi=80)
    plt.close(fig)
