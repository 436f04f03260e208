#!/usr/bin/env python3
"""How well do MiniLM embeddings know where an *unseen* TWC object belongs? (argument features)

For every gold ``put X in/on Y`` of the first N games of each split, the candidates are the admissible
``put X ...`` actions at that moment. Reports top-1 accuracy of
- random choice (1 / number of places),
- the raw cosine of the object and place embeddings (zero-shot: what ``action+arguments`` features give the
  scorer's affinity term before training),
- a bilinear affinity ``a<o,p> + <Uo,Vp> + <b,p>`` (rank 8) fit on the *train* split's placements only, with
  150 and with all train placements, evaluated on the dev and test splits (objects never seen in training).

Gold placements are used here as labels to measure the prior, never in training a policy.

    python -m tools.probes.probe_placement_prior --out tools/results/probe_placement_prior.json
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

import click
import numpy as np

from tools.bench.benchlib import write_results

PUT = re.compile(r"^put (.+?) (in|on) (.+)$")


def placements(split: str, games: int) -> list[tuple[str, list[str], int]]:
    """(object, candidate places, index of the gold place) for every gold put with 2+ places."""
    from policy.envs import open_env, parse_env

    rows = []
    with open_env(parse_env("twx:twc"), step_limit=60) as env:
        for seed in env.episodes(split)[:games]:
            state = env.reset(seed, split, gold=True)
            for action in env.gold_path():
                m = PUT.match(action)
                if m:
                    puts = [c for c in state.candidates if (p := PUT.match(c)) and p.group(1) == m.group(1)]
                    if len(puts) > 1:
                        rows.append((m.group(1), [PUT.match(c).group(3) for c in puts], puts.index(action)))
                state = env.step(action)
    return rows


def fit_bilinear(train, rank: int, epochs: int, seed: int = 0):
    import torch

    torch.manual_seed(seed)
    d = train[0][0].shape[0]
    u = torch.nn.Parameter(torch.randn(d, rank) * 0.01)
    v = torch.nn.Parameter(torch.randn(d, rank) * 0.01)
    a = torch.nn.Parameter(torch.tensor(10.0))
    b = torch.nn.Parameter(torch.zeros(d))
    opt = torch.optim.Adam([u, v, a, b], lr=3e-3, weight_decay=1e-3)

    def score(o, places):
        return a * (places @ o) + (places @ v) @ (u.T @ o) + places @ b

    for _ in range(epochs):
        for o, places, gold in train:
            loss = torch.nn.functional.cross_entropy(score(o, places)[None], torch.tensor([gold]))
            opt.zero_grad()
            loss.backward()
            opt.step()
    return score


@click.command()
@click.option("--games", default=400, show_default=True, help="Train-split games (dev/test: a quarter).")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the results as JSON.")
def main(games: int, out: str | None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from policy.features import TextEmbedder

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    data = {"train": placements("train", games)}
    for split in ("dev", "test"):
        data[split] = placements(split, max(1, games // 4))
    emb = TextEmbedder(progress=False)
    enc = {
        k: [(torch.from_numpy(emb.embed([o])[0]), torch.from_numpy(emb.embed(p)), g) for o, p, g in rows]
        for k, rows in data.items()
    }

    def accuracy(score, rows) -> float:
        with torch.no_grad():
            return float(np.mean([int(torch.argmax(score(o, p))) == g for o, p, g in rows]))

    result: dict = {
        "placements": {k: len(v) for k, v in data.items()},
        "objects": {k: len({r[0] for r in v}) for k, v in data.items()},
        "objects_shared_train_test": len({r[0] for r in data["train"]} & {r[0] for r in data["test"]}),
        "random": {k: float(np.mean([1 / len(p) for _o, p, _g in v])) for k, v in data.items()},
        "cosine": {k: accuracy(lambda o, p: p @ o, v) for k, v in enc.items()},
    }
    for n in (150, len(enc["train"])):
        score = fit_bilinear(enc["train"][:n], rank=8, epochs=max(60, 60 * 800 // n))
        result[f"bilinear_rank8_train{n}"] = {k: accuracy(score, v) for k, v in enc.items()}
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["command"] = "python -m tools.probes.probe_placement_prior " + " ".join(sys.argv[1:])
    if out:
        result = write_results(out, result)
    click.echo(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
