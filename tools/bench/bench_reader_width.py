"""The token reader's tables: their width and their precision against bundle size and gold-path decisions.

The reader's two baked token tables ([vocab, width + 1] quantised rows each) are most of ``policy.onnx``,
and its per-(candidate, item) work scales with its width. For each world and width, BC on ``--expert``
expert episodes (the imitation ceiling of that data); each checkpoint exported by ``edgejudge export``
(parity checked) with its tables at each of ``--bits`` (the same trained weights: the precision is chosen at
export, ``token_bits`` in the checkpoint's scorer config), and each bundle asked with ``edgejudge decisions``
on the gold paths of ``--test`` held-out games: the size of ``policy.onnx``, the decisions overall and per
verb. A checkpoint already trained in ``--work-dir`` is reused. Serving latency is measured by
:mod:`tools.bench.bench_text` on the training default.

    python -m tools.bench.bench_reader_width --out tools/results/bench_reader_width.json
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from tools.bench.bench_train_speed import collect, decisions, train
from tools.bench.benchlib import edgejudge, publish


def with_bits(ckpt: Path, bits: int) -> Path:
    """A copy of checkpoint ``ckpt`` whose scorer stores its token tables at ``bits``."""
    out = ckpt.with_name(f"{ckpt.name}-b{bits}")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(ckpt, out)
    meta = json.loads((out / "checkpoint.json").read_text())
    meta["scorer"]["token_bits"] = bits
    (out / "checkpoint.json").write_text(json.dumps(meta))
    return out


def markdown(rows: list[dict]) -> str:
    lines = [
        "| world | reader width | table bits | `policy.onnx` MB | gold-path decisions | per verb "
        "| training s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        d = r["decisions"]
        verbs = ", ".join(f"{v} {a:.2f}" for v, a in sorted(d["per_verb"].items()))
        lines.append(
            f"| {r['env']} | {r['width']} | {r['bits']} | {r['policy_mb']:.2f} "
            f"| {d['accuracy']:.3f} of {d['decisions']} | {verbs} | {r['update_seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


@click.command()
@click.option("--env", "envs", multiple=True, default=("twx:twc", "twx:cookingworld"), show_default=True)
@click.option("--width", "widths", multiple=True, type=int, default=(64, 32), show_default=True)
@click.option("--bits", "bits_list", multiple=True, type=int, default=(8, 4), show_default=True)
@click.option("--expert", default=200, show_default=True, help="Expert episodes BC trains on.")
@click.option("--test", "test_episodes", default=40, show_default=True, help="Held-out gold paths.")
@click.option(
    "--work-dir", type=click.Path(path_type=Path), default=Path("runs/reader_width"), show_default=True
)
@click.option("--out", type=click.Path(path_type=Path), help="Results JSON (and .md beside it).")
def main(envs, widths, bits_list, expert, test_episodes, work_dir, out) -> None:
    """BC at each token-reader width: bundle size and decisions on held-out gold paths."""
    rows: list[dict] = []
    for env_name in envs:
        wd = work_dir / env_name.replace(":", "-")
        wd.mkdir(parents=True, exist_ok=True)
        world = ("--env", env_name)
        experts = collect(wd, world, f"expert{expert}", "train", expert, "gold-noise")
        test = collect(wd, world, f"test{test_episodes}", "test", test_episodes, "gold-noise")
        for width in widths:
            ckpt = wd / f"bc-w{width}"
            done = ckpt / "bench_summary.json"
            if not done.exists():
                summary = train(experts, ckpt, "fast", "bc", f"reader_width={width}")
                done.write_text(json.dumps(summary))
            summary = json.loads(done.read_text())
            for bits in bits_list:
                bundle = wd / f"bundle-w{width}-b{bits}"
                edgejudge("export", str(with_bits(ckpt, bits)), "--out", str(bundle))
                rows.append({
                    "env": env_name,
                    "width": width,
                    "bits": bits,
                    "policy_mb": (bundle / "policy.onnx").stat().st_size / 1e6,
                    "update_seconds": summary["update_seconds"],
                    "decisions": decisions(str(bundle), test),
                })  # fmt: skip
                click.echo(
                    f"{env_name} width {width} bits {bits}: {rows[-1]['decisions']['accuracy']:.3f}", err=True
                )
    publish({"rows": rows}, markdown(rows), out, out.with_suffix(".md") if out else None)


if __name__ == "__main__":
    main()
