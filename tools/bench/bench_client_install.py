"""What a robot that only queries a daemon installs: ``pip install '.[client]'`` into a fresh venv, the size
of every distribution it brought besides edgejudge and the installer's own, whether numpy, onnxruntime,
tokenizers or torch came along (they must not), and the client side's import time in fresh interpreters.

    python -m tools.bench.bench_client_install --out tools/results/bench_client_install.json
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from tools.bench.benchlib import ROOT, write_results

CLIENT = "edge.client, edge.edge_policy, edge.policies, edge.loop_guard, edge.episode_log"
ABSENT = ("numpy", "onnxruntime", "tokenizers", "torch")
SIZES = """import importlib.metadata as md, json, os
print(json.dumps({d.metadata["Name"].lower(): sum(os.path.getsize(p) for f in d.files or []
                  if os.path.isfile(p := d.locate_file(f))) for d in md.distributions()}))"""
IMPORT = f"import time; t = time.perf_counter(); import {CLIENT}; print(time.perf_counter() - t)"


def _out(python: Path, *args: str, cwd: Path = ROOT) -> str:
    p = subprocess.run([str(python), *args], capture_output=True, text=True, timeout=600, cwd=cwd)
    if p.returncode != 0:
        raise click.ClickException(p.stderr.strip()[-2000:])
    return p.stdout


@click.command()
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="Results JSON.")
@click.option("--runs", default=9, show_default=True, help="Fresh interpreters the import is timed in.")
def main(out: str, runs: int) -> None:
    """Install the client-only extra in a fresh venv; its dependencies' size and the client's import time."""
    with tempfile.TemporaryDirectory() as tmp:
        python = Path(tmp) / "venv" / "bin" / "python"
        subprocess.run([sys.executable, "-m", "venv", str(python.parents[1])], check=True, timeout=300)
        _out(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"{ROOT}[client]")
        sizes = json.loads(_out(python, "-c", SIZES))
        seconds = [float(_out(python, "-c", IMPORT, cwd=Path(tmp))) for _ in range(runs)]  # not the checkout
    deps = {k: v for k, v in sorted(sizes.items()) if k not in {"pip", "setuptools", "wheel", "edgejudge"}}
    present = [m for m in ABSENT if m in sizes]
    record = write_results(
        out,
        {
            "benchmark": "client-only install",
            "command": " ".join(["python -m tools.bench.bench_client_install", *sys.argv[1:]]),
            "dependencies_bytes": deps,
            "dependencies_mb": round(sum(deps.values()) / 1e6, 2),
            "absent": {m: m not in present for m in ABSENT},
            "import_seconds": [round(s, 4) for s in seconds],
            "import_seconds_median": round(statistics.median(seconds), 4),
        },
    )
    click.echo(
        f"{record['dependencies_mb']} MB of dependencies ({', '.join(deps)}), import "
        f"{record['import_seconds_median'] * 1000:.0f} ms (median of {runs}); present: {present or 'none'}"
    )
    if present:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
