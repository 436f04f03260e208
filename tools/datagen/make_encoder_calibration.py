"""Write policy/encoders/encoder_calibration.json: the texts the int8 encoder is calibrated on
(policy.encoders.int8).

Real TextWorldExpress texts from the *train* splits (the parity and benchmark texts come from dev/test):
composed state texts, candidate actions and instructions of TWC and CookingWorld episodes, collected with
``edgejudge collect`` (gold-path-with-noise and random behaviours, fixed seeds).

    python -m tools.datagen.make_encoder_calibration [--out policy/encoders/encoder_calibration.json]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from tools.bench.benchlib import ROOT

SOURCES = (  # env, episodes, states kept, candidates kept
    ("twx:twc", 30, 150, 60),
    ("twx:cookingworld", 15, 50, 30),
)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=ROOT / "policy" / "encoders" / "encoder_calibration.json",
    show_default=True,
    help="JSON file to write.",
)
@click.option("--seed", default=11, show_default=True, help="Collection and sampling seed.")
def main(out: Path, seed: int) -> None:
    """Collect train-split TWX episodes and write the encoder calibration texts."""
    from models.trajectory import read_trajectories

    rng = random.Random(seed)
    texts: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for env, episodes, n_states, n_cands in SOURCES:
            path = Path(tmp) / f"{env.replace(':', '_')}.jsonl.gz"
            cmd = [
                sys.executable,
                "-m",
                "models.cli",
                "collect",
                "--env",
                env,
                "--split",
                "train",
                "--episodes",
                str(episodes),
                "--behaviour",
                "gold-noise=0.5,random=0.5",
                "--noise",
                "0.3",
                "--seed",
                str(seed),
                "--out",
                str(path),
            ]
            subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, timeout=600)
            states, cands, instructions = set(), set(), set()
            for t in read_trajectories(path):
                instructions.add(t.instruction)
                for s in t.steps:
                    states.add(s.observation)
                    cands.update(s.candidates or [])
            texts += sorted(instructions)
            texts += rng.sample(sorted(states), min(n_states, len(states)))
            texts += rng.sample(sorted(cands), min(n_cands, len(cands)))
    payload = {
        "about": "int8 encoder calibration texts (policy.encoders.int8), "
        "by python -m tools.datagen.make_encoder_calibration",
        "seed": seed,
        "sources": [list(s) for s in SOURCES],
        "texts": texts,
    }
    from models.settings import atomic_write

    atomic_write(out, json.dumps(payload, indent=0, ensure_ascii=False) + "\n")
    click.echo(f"wrote {out}: {len(texts)} texts")


if __name__ == "__main__":
    main()
