"""Label-quality table on the held-out TWC dev set (CookingWorld's too, TRCA rows): unreviewed TRCA rubrics
(the judge alone, and grounded on the success flags), the reviewed rubric, COREN's channels and ensembles,
and the sparse reward.

    python -m tools.bench.bench_label_quality --work runs/lq --coren runs/dev.coren.jsonl.gz \\
        --json-out tools/results/label_quality_twc.json
    # the COREN rows only (the others kept from the JSON), for labels made with each vote:
    python -m tools.bench.bench_label_quality --work runs/lq --coren-only --coren runs/dev.coren.jsonl.gz \\
        --coren runs/dev.coren-majority.jsonl.gz --json-out tools/results/label_quality_twc.json

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
  (null channel, trust scale, held-out gate; :mod:`labeler.coren.orchestrator`), each in-sample (fit on
  these success flags, as ``label coren`` does) and 2-fold cross-fitted (each half weighted by an
  orchestrator that never saw it);
* the environment's sparse reward.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
import numpy as np

from labeler.auroc import auroc
from labeler.folds import folds_of
from labeler.label_check import bootstrap_auroc
from models.trajectory import Trajectory, read_trajectories
from tools.bench.benchlib import HELDOUT_DEV_COLLECT, ROOT, edgejudge, write_results


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


def coren_rows(path: Path, dev: list[Trajectory], epochs: int, seeds: int = 4) -> tuple[list[dict], dict]:
    """COREN's rows from one labeled dev set: each channel as labeled, and the ensemble refit from the
    stored channels by the paper's orchestrator and by the grounded one, in-sample (fit on all 30 episodes'
    success flags, as ``label coren`` does) and 2-fold cross-fitted (each half weighted by an orchestrator
    fit on the other half only, its own held-out gate included; ``seeds`` stratified splits, mean and
    range)."""
    from labeler.coren import orchestrator as orch
    from models.encoder import load_sentence_encoder, resolve_encoder

    trajs = read_trajectories(path)
    assert [t.id for t in trajs] == [t.id for t in dev], "--coren must label the same dev set"
    prov = trajs[0].provenance.get("coren", {})
    vote = prov.get("vote", "majority")  # files labeled before the vote option used the majority vote
    n_prompts = len(prov.get("prompts", []))
    tag = f"twc: COREN {n_prompts} prompts, {vote} vote"
    rows = []
    for ch in ("contextual", "structural", "temporal", "contextual_soft", "ensemble"):
        vals = [[s.labels["coren"][ch] for s in t.steps] for t in trajs]
        note = {
            "structural": "QA set built from these successes",
            "ensemble": "as labeled: orchestrator trained on these success flags (in-sample); "
            + str(prov.get("orchestrator_check", {}).get("reason", "")),
            "contextual_soft": "mean scale position of the prompts, unvoted",
        }.get(ch, "")
        rows.append(row(f"{tag}: {ch} (as labeled)", trajs, vals, False, note))
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
    success = [t.success for t in trajs]

    def batch_of(idx: list[int]) -> orch.Batch:
        return orch.make_batch(
            [feats[split[i]] for i in idx], [chans[split[i]] for i in idx], [success[i] for i in idx]
        )

    def ensembled(model, idx: list[int], gated: bool = True) -> list[list[float]]:
        m = model if gated else _ungated(model)
        return [(orch.weights_for(m, feats[split[i]]) * chans[split[i]]).sum(axis=1).tolist() for i in idx]

    fits = {}
    for name, extra in (
        ("paper", {"null_channel": False, "learn_scale": False, "learn_bias": False, "folds": 0}),
        ("grounded", {}),
    ):  # the paper's orchestrator has no gate (and without a bias it could not match the base rate)
        cfg = orch.OrchestratorConfig(input_dim=feats.shape[1], epochs=epochs, **extra)
        everyone = list(range(len(trajs)))
        res = orch.fit(batch_of(everyone), cfg)
        w = orch.weights_for(res.model, feats)
        chk = res.check
        rows.append(
            row(
                f"{tag}: ensemble, {name} orchestrator, in-sample",
                trajs,
                ensembled(res.model, everyone),
                False,
                f"mean effective weights C/S/T {'/'.join(f'{x:.2f}' for x in w.mean(axis=0))}; "
                + (
                    f"held-out gain {chk.gain:+.3f}, held-out AUROC of returns vs success {chk.auroc:.3f}, "
                    f"gate {chk.gate:.0f}"
                    if chk.gain is not None
                    else "no gate"
                ),
            )
        )
        if chk.gate == 0.0:
            rows.append(
                row(
                    f"{tag}: ensemble, {name} orchestrator, in-sample, before the gate",
                    trajs,
                    ensembled(res.model, everyone, gated=False),
                    False,
                    "the gate closed (the ensemble is the sparse reward); these are the weights it closed on",
                )
            )
        per_seed, per_seed_open, gates = [], [], []
        for seed in range(seeds):
            vals: list[list[float]] = [[] for _ in trajs]
            vals_open: list[list[float]] = [[] for _ in trajs]
            for fold in folds_of(success, 2, seed):
                held = set(fold)
                fit_on = [i for i in everyone if i not in held]
                m = orch.fit(batch_of(fit_on), cfg).model
                gates.append(float(m.gate))
                for i, v, vo in zip(fold, ensembled(m, fold), ensembled(m, fold, False), strict=True):
                    vals[i], vals_open[i] = v, vo
            label = f"{tag}: ensemble, {name} orchestrator, 2-fold cross-fit"
            per_seed.append(row(label, trajs, vals, True))
            per_seed_open.append(row(label + ", before the gate", trajs, vals_open, True))
        for runs, gated in ((per_seed, True), (per_seed_open, False)):
            if not gated and cfg.folds < 2:
                continue  # no gate: the same figures
            r = dict(runs[0])
            for k in ("auroc_progress", "auroc_gold", "check_auroc_success"):
                xs = [p[k] for p in runs]
                r[k] = float(np.mean(xs))
                r[f"{k}_range"] = [float(min(xs)), float(max(xs))]
            lo, hi = r["auroc_progress_range"]
            r["note"] = f"mean of {seeds} stratified splits (per-step AUROC range {lo:.3f}-{hi:.3f})" + (
                f"; gates open in {int(sum(gates))} of {len(gates)} half-fits" if cfg.folds >= 2 else ""
            )
            rows.append(r)
        fits[name] = chk.to_dict()
    return rows, fits


def _ungated(model):
    """A copy of ``model`` with its gate open (what the weights were before the held-out check closed it)."""
    import copy

    m = copy.deepcopy(model)
    m.gate.fill_(1.0)
    return m


@click.command()
@click.option(
    "--work", required=True, type=click.Path(file_okay=False), help="Folder for inputs and outputs."
)
@click.option(
    "--coren",
    "corens",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="COREN-labeled dev set (repeatable: e.g. one per --vote).",
)
@click.option(
    "--coren-only",
    is_flag=True,
    help="Only the COREN rows: the other rows are kept from --json-out as they are (no judge calls).",
)
@click.option("--epochs", default=300, show_default=True, help="Orchestrator training steps.")
@click.option("--json-out", default=None, type=click.Path(dir_okay=False))
def main(work: str, corens: tuple[str, ...], coren_only: bool, epochs: int, json_out: str | None) -> None:
    """Write the label-quality table (Markdown on stdout, JSON with --json-out)."""
    w = Path(work)
    w.mkdir(parents=True, exist_ok=True)
    cache = w / "judge.sqlite"
    rows: list[dict] = []
    builds = {}
    dev = []
    kept: dict = {}
    if coren_only:
        if not json_out or not Path(json_out).exists():
            raise click.UsageError("--coren-only keeps the other rows of an existing --json-out")
        kept = json.loads(Path(json_out).read_text())
        dev_path = w / "twc-dev30.jsonl.gz"
        if not dev_path.exists():
            edgejudge(*HELDOUT_DEV_COLLECT, "--out", str(dev_path), "--no-progress")
        dev = read_trajectories(dev_path)
        rows = [r for r in kept["rows"] if "COREN" not in r["row"] and r["row"] != "twc: sparse (env reward)"]
        builds = {k: (None, v) for k, v in kept.get("build_seconds", {}).items()}
    else:
        for world in ("twc", "cookingworld"):
            world_rows, world_builds, world_dev = rubric_rows(w, world, cache)
            rows += world_rows
            builds.update(world_builds)
            if world == "twc":
                dev = world_dev
    fits = {}
    for coren in corens:
        crows, cfits = coren_rows(Path(coren), dev, epochs)
        rows += crows
        fits[Path(coren).name] = cfits
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
        "date": time.strftime("%Y-%m-%d"),
        "dev_command": "edgejudge " + " ".join(HELDOUT_DEV_COLLECT),
        "build_seconds": {k: round(v[1], 1) for k, v in builds.items()},
        "cookingworld_dev_command": "edgejudge " + " ".join(cw_collect()),
        "orchestrator_checks": fits,
        "rows": rows,
    }
    if json_out:
        write_results(json_out, result)

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
