"""What a robot that only queries a daemon installs: ``pip install '.[client]'`` into a fresh virtual
environment, the size of every distribution it brought besides edgejudge itself and the installer's own
(pip, setuptools, wheel), and how long the client side takes to import there (median of fresh interpreters).
Also checks that numpy, onnxruntime, tokenizers and torch are absent from it.

    python -m tools.bench.bench_client_install --out tools/results/bench_client_install.json

Needs the package registry (pip downloads pyzmq, msgpack and click); about a minute.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

from tools.bench.benchlib import ROOT, write_results

CLIENT_MODULES = ("edge.client", "edge.edge_policy", "edge.policies", "edge.loop_guard", "edge.episode_log")
INSTALLER = {"pip", "setuptools", "wheel", "edgejudge"}
ABSENT = ("numpy", "onnxruntime", "tokenizers", "torch")

SIZES = """
import importlib.metadata as md, json, os
out = {}
for d in md.distributions():
    files = [d.locate_file(f) for f in (d.files or [])]
    out[d.metadata["Name"].lower()] = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
print(json.dumps(out))
"""


def _run(python: Path, *args: str, timeout: float = 600) -> str:
    p = subprocess.run([str(python), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    if p.returncode != 0:
        raise click.ClickException(f"{' '.join(args[:3])}: {p.stderr.strip()[-2000:]}")
    return p.stdout


def _import_seconds(python: Path, runs: int, cwd: Path) -> list[float]:
    """The client modules' import time in ``runs`` fresh interpreters (outside the checkout: the installed
    package is imported, not the working tree)."""
    code = (
        "import time; t = time.perf_counter()\n"
        f"import {', '.join(CLIENT_MODULES)}\n"
        "print(time.perf_counter() - t)"
    )
    out = []
    for _ in range(runs):
        p = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60, cwd=cwd)
        if p.returncode != 0:
            raise click.ClickException(f"import failed: {p.stderr.strip()[-2000:]}")
        out.append(float(p.stdout))
    return out


@click.command()
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="Results JSON.")
@click.option("--runs", default=9, show_default=True, help="Fresh interpreters the import is timed in.")
def main(out: str, runs: int) -> None:
    """Install the client-only extra in a fresh venv; its dependencies' size and the client's import time."""
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        python = venv / "bin" / "python"
        t0 = time.perf_counter()
        _run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"{ROOT}[client]")
        install_s = time.perf_counter() - t0
        sizes = json.loads(_run(python, "-c", SIZES))
        deps = {name: size for name, size in sorted(sizes.items()) if name not in INSTALLER}
        present = [m for m in ABSENT if m in sizes]
        seconds = _import_seconds(python, runs, Path(tmp))
    record = write_results(
        out,
        {
            "benchmark": "client-only install",
            "command": " ".join(["python -m tools.bench.bench_client_install", *sys.argv[1:]]),
            "dependencies_bytes": deps,
            "dependencies_mb": round(sum(deps.values()) / 1e6, 2),
            "edgejudge_mb": round(sizes.get("edgejudge", 0) / 1e6, 2),
            "absent": {m: m not in present for m in ABSENT},
            "install_seconds": round(install_s, 1),
            "import_seconds": [round(s, 4) for s in seconds],
            "import_seconds_median": round(statistics.median(seconds), 4),
        },
    )
    click.echo(
        f"client-only install: {record['dependencies_mb']} MB of dependencies ({', '.join(deps)}), "
        f"import {record['import_seconds_median'] * 1000:.0f} ms (median of {runs}); "
        f"absent: {', '.join(m for m in ABSENT if m not in present)}"
        + (f"; PRESENT: {', '.join(present)}" if present else "")
    )
    if present:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
