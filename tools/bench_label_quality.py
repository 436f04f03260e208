"""Label-quality table on the held-out TWC dev set (CookingWorld's too, TRCA rows): unreviewed TRCA rubrics
(the judge alone, and grounded on the success flags), the reviewed rubric, COREN's channels and ensembles,
and the sparse reward.

    python tools/bench_label_quality.py --work runs/lq --coren runs/dev.coren.jsonl.gz \\
        --json-out tools/results/label_quality_twc.json

Rows (per-step AUROC vs score progress and vs the gold path from ``info``, which only this benchmark reads;
the label check from the success flags alone: AUROC of the mean reward per step vs success):

* ``TRCA unreviewed, judge only``: ``rubrics build --no-grounding`` on the dev set (the judge's tags and
  places);
* ``TRCA unreviewed, grounded``: ``rubrics build`` (default) on the dev set, in-sample (the rubric read these
  episodes' success flags, as it does on a user's training data);
* ``TRCA unreviewed, grounded, cross-fit``: each half of the dev set labeled by a rubric grounded on the other
  half (2 folds, stratified): labels of episodes the rubric never saw;
* ``TRCA reviewed``: the shipped ``labeler/rubrics/twc.toml`` extended with the judge's places for the dev
  objects (``rubrics build --base --no-grounding``), and with the dev objects placed where successful dev
  episodes left them (``rubrics build --base``);
* COREN channels as labeled in ``--coren`` (``edgejudge label coren`` on the dev set), and the ensemble refit
  from those channels twice: the paper's orchestrator (three channels, weights sum to 1) and the grounded one
  (null channel, trust scale, held-out gate; :mod:`labeler.coren.orchestrator`);
* the environment's sparse reward.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

import click
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchlib import HELDOUT_DEV_COLLECT, edgejudge, portable_paths  # noqa: E402  (tools/ is sys.path[0])

from labeler.dataset import Trajectory, read_trajectories  # noqa: E402
from labeler.label_check import bootstrap_auroc, folds_of  # noqa: E402
from labeler.quality import auroc  # noqa: E402


def step_truth(trajs: list[Trajectory]) -> tuple[list[bool], list[bool]]:
    steps = [s for t in trajs for s in t.steps]
    return [float(s.info.get("progress", 0)) > 0 for s in steps], [bool(s.info.get("gold")) for s in steps]


def row(
    name: str, trajs: list[Trajectory], per_traj: list[list[float]], heldout: bool, note: str = ""
) -> dict:
    """AUROCs of one labeling: per-step values (one list per trajectory, in ``trajs`` order)."""
    prog, gold = step_truth(trajs)
    flat = [v for vs in per_traj for v in vs]
    mean = [sum(vs) / max(len(vs), 1) for vs in per_traj]
    a, lo, hi = bootstrap_auroc(mean, [t.success for t in trajs])
    return {
        "row": name,
        "auroc_progress": auroc(flat, prog),
        "auroc_gold": auroc(flat, gold),
        "check_auroc_success": a,
        "check_interval": [lo, hi],
        "check_heldout": heldout,
        "note": note,
    }


def trca_values(trajs: list[Trajectory], rubric_path: str | None = None, rubric=None) -> list[list[float]]:
    from labeler.trca.checks import CompiledRubric
    from labeler.trca.pipeline import TRCAConfig, label_trajectory_rewards
    from labeler.trca.rubric import load_rubric

    cr = CompiledRubric(rubric if rubric is not None else load_rubric(rubric_path))
    return [[r.total for r in label_trajectory_rewards(t, cr, TRCAConfig())[0]] for t in trajs]


def cw_collect() -> list[str]:
    return [("twx:cookingworld" if a == "twx:twc" else a) for a in HELDOUT_DEV_COLLECT]


def rubric_rows(w: Path, world: str, cache: Path) -> tuple[list[dict], dict, list[Trajectory]]:
    """The TRCA rows of one world's dev set (made in ``w`` if missing)."""
    dev_path = w / f"{world}-dev30.jsonl.gz"
    if not dev_path.exists():
        cmd = HELDOUT_DEV_COLLECT if world == "twc" else cw_collect()
        edgejudge(*cmd, "--out", str(dev_path), "--no-progress")
    dev = read_trajectories(dev_path)
    shipped = str(ROOT / f"labeler/rubrics/{world}.toml")
    variants = [("judge-only", ["--no-grounding"]), ("grounded", [])]
    if world == "twc":  # dev objects are unseen in training: the reviewed file gets their places
        variants += [
            ("reviewed", ["--base", shipped, "--no-grounding"]),
            ("reviewed-grounded", ["--base", shipped]),
        ]
    builds = {}
    for name, extra in variants:
        out = w / f"rubric-{world}-{name}.toml"
        t0 = time.perf_counter()
        edgejudge(
            "rubrics", "build", "--dataset", str(dev_path), "--task-type", world, "--out", str(out),
            "--cache", str(cache), "--no-progress", "--check-folds", "0", *extra,
        )  # fmt: skip
        builds[f"{world} {name}"] = (str(out), time.perf_counter() - t0)

    def rubric_row(name: str, path: str) -> dict:
        return row(f"{world}: {name}", dev, trca_values(dev, path), False)

    rows = [
        rubric_row("TRCA unreviewed, judge only (before)", builds[f"{world} judge-only"][0]),
        rubric_row("TRCA unreviewed, grounded on the success flags", builds[f"{world} grounded"][0]),
        row(
            f"{world}: TRCA unreviewed, grounded, 2-fold cross-fit",
            dev,
            crossfit_values(dev, cache, world),
            True,
        ),
    ]
    if world == "twc":
        rows += [
            rubric_row(
                "TRCA reviewed (shipped + the judge's places for dev objects)", builds["twc reviewed"][0]
            ),
            rubric_row(
                "TRCA reviewed + dev objects placed from successes", builds["twc reviewed-grounded"][0]
            ),
        ]
    else:
        rows.append(rubric_row("TRCA reviewed (shipped)", shipped))
        rows.append(
            row(f"{world}: sparse (env reward)", dev, [[s.env_reward for s in t.steps] for t in dev], False)
        )
    return rows, builds, dev


def crossfit_values(trajs: list[Trajectory], cache: Path, world: str, folds: int = 2) -> list[list[float]]:
    from labeler.judge import open_judge
    from labeler.trca.build import BuildConfig, build_rubric

    out: list[list[float]] = [[] for _ in trajs]
    with open_judge("gemma3-270m", n_threads=1, cache=str(cache)) as judge:
        for fold in folds_of([t.success for t in trajs], folds, 0):
            held = set(fold)
            rub = build_rubric(
                [t for i, t in enumerate(trajs) if i not in held], judge, BuildConfig(world)
            ).rubric
            vals = trca_values([trajs[i] for i in fold], rubric=rub)
            for i, v in zip(fold, vals, strict=True):
                out[i] = v
    return out


def coren_rows(path: Path, dev: list[Trajectory], epochs: int) -> tuple[list[dict], dict]:
    from labeler.coren import orchestrator as orch
    from models.encoder import load_sentence_encoder, resolve_encoder

    trajs = read_trajectories(path)
    assert [t.id for t in trajs] == [t.id for t in dev], "--coren must label the same dev set"
    rows = []
    for ch in ("contextual", "structural", "temporal", "contextual_soft", "ensemble"):
        vals = [[s.labels["coren"][ch] for s in t.steps] for t in trajs]
        rows.append(row(f"twc: COREN {ch} (as labeled)", trajs, vals, False))
    enc = load_sentence_encoder(resolve_encoder())

    def emb(texts: list[str]) -> np.ndarray:
        return np.asarray(
            enc.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        )

    obs = emb([s.observation for t in trajs for s in t.steps])
    act = emb([s.action for t in trajs for s in t.steps])
    ins = emb([t.instruction for t in trajs for s in t.steps])
    feats = np.concatenate([obs, act, ins], axis=1).astype(np.float32)
    chans = np.array([[s.labels["coren"][c] for c in orch.CHANNELS] for t in trajs for s in t.steps])
    bounds = np.cumsum([0] + [len(t.steps) for t in trajs])
    split = [slice(bounds[i], bounds[i + 1]) for i in range(len(trajs))]
    batch = orch.make_batch([feats[s] for s in split], [chans[s] for s in split], [t.success for t in trajs])
    fits = {}
    for name, extra in (
        ("paper", {"null_channel": False, "learn_scale": False, "learn_bias": False}),
        ("grounded", {}),
    ):
        cfg = orch.OrchestratorConfig(input_dim=feats.shape[1], epochs=epochs, **extra)
        res = orch.fit(batch, cfg)
        w = orch.weights_for(res.model, feats)
        ens = (w * chans).sum(axis=1)
        chk = res.check
        rows.append(
            row(
                f"twc: COREN ensemble, {name} orchestrator (refit)",
                trajs,
                [ens[s].tolist() for s in split],
                False,
                f"mean effective weights C/S/T {'/'.join(f'{x:.2f}' for x in w.mean(axis=0))}; held-out gain "
                f"{chk.gain:+.3f}, held-out AUROC {chk.auroc:.3f}, gate {chk.gate:.0f}",
            )
        )
        fits[name] = chk.to_dict()
    return rows, fits


@click.command()
@click.option(
    "--work", required=True, type=click.Path(file_okay=False), help="Folder for inputs and outputs."
)
@click.option("--coren", default=None, type=click.Path(dir_okay=False), help="COREN-labeled dev set.")
@click.option("--epochs", default=300, show_default=True, help="Orchestrator training steps.")
@click.option("--json-out", default=None, type=click.Path(dir_okay=False))
def main(work: str, coren: str | None, epochs: int, json_out: str | None) -> None:
    """Write the label-quality table (Markdown on stdout, JSON with --json-out)."""
    w = Path(work)
    w.mkdir(parents=True, exist_ok=True)
    cache = w / "judge.sqlite"
    rows: list[dict] = []
    builds = {}
    dev = []
    for world in ("twc", "cookingworld"):
        world_rows, world_builds, world_dev = rubric_rows(w, world, cache)
        rows += world_rows
        builds.update(world_builds)
        if world == "twc":
            dev = world_dev
    fits = {}
    if coren:
        crows, fits = coren_rows(Path(coren), dev, epochs)
        rows += crows
    rows.append(
        row(
            "twc: sparse (env reward)",
            dev,
            [[s.env_reward for s in t.steps] for t in dev],
            False,
            "is the flag",
        )
    )
    result = {
        "machine": f"{platform.machine()} {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
        "dev_command": "edgejudge " + " ".join(HELDOUT_DEV_COLLECT),
        "build_seconds": {k: round(v[1], 1) for k, v in builds.items()},
        "cookingworld_dev_command": "edgejudge " + " ".join(cw_collect()),
        "orchestrator_checks": fits,
        "rows": rows,
    }
    if json_out:
        Path(json_out).write_text(json.dumps(portable_paths(result), indent=2, default=float) + "\n")

    def f(v):
        return "" if v is None else f"{v:.3f}"

    click.echo(
        "| labels | per-step AUROC vs progress | vs gold path | mean reward vs success (check) | note |"
    )
    click.echo("|---|---|---|---|---|")
    for r in rows:
        lo, hi = r["check_interval"]
        ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None else ""
        click.echo(
            f"| {r['row']} | {f(r['auroc_progress'])} | {f(r['auroc_gold'])} | "
            f"{f(r['check_auroc_success'])}{ci}{' held-out' if r['check_heldout'] else ''} | {r['note']} |"
        )


if __name__ == "__main__":
    main()
