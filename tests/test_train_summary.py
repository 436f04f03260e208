"""Training says what it trained on: the transitions and episodes after the algorithm's filters, beside the
dataset's size when they differ (BC on successful episodes trains on far fewer than the dataset holds)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from labeler.dataset import write_trajectories
from policy.train import train_from_file
from tests.test_policy_units import DATA, HashEmbedder

SUCCESSFUL = [t for t in DATA if t.success]


class Embedder(HashEmbedder):  # train_from_file records the encoder's identity
    encoder = SimpleNamespace(name="hash", sha256="0" * 64)


def _train(tmp_path, algo: str, **overrides):
    write_trajectories(tmp_path / "d.jsonl", DATA)
    return train_from_file(
        tmp_path / "d.jsonl",
        algo=algo,
        reward="sparse",
        out=tmp_path / f"ck-{algo}-{len(overrides)}",
        overrides={"steps": 10, "hidden": 8, "log_every": 5, **overrides},
        embedder=Embedder(),
        progress=False,
    )


def test_bc_on_successful_episodes_counts_what_it_trained_on(tmp_path):
    run = _train(tmp_path, "bc", filter="success")
    assert (run.episodes, run.transitions) == (len(SUCCESSFUL), sum(len(t.steps) for t in SUCCESSFUL))
    assert (run.dataset_episodes, run.dataset_steps) == (len(DATA), sum(len(t.steps) for t in DATA))
    assert run.trained_on() == (
        f"{run.transitions} transitions of {len(SUCCESSFUL)} episodes "
        f"(filter=success of {len(DATA)} episodes, {run.dataset_steps} steps in the dataset)"
    )
    prov = json.loads((run.checkpoint / "checkpoint.json").read_text())["provenance"]
    assert prov["trained_episodes"] == len(SUCCESSFUL) and prov["trained_transitions"] == run.transitions
    assert prov["dataset_trajectories"] == len(DATA)


@pytest.mark.parametrize("algo, overrides", [("bc", {}), ("iql", {})])
def test_unfiltered_training_counts_the_whole_dataset(tmp_path, algo, overrides):
    run = _train(tmp_path, algo, **overrides)
    assert (run.episodes, run.transitions) == (len(DATA), sum(len(t.steps) for t in DATA))
    assert run.selection is None
    assert run.trained_on() == f"{run.transitions} transitions of {len(DATA)} episodes"


@pytest.mark.real
def test_train_cli_summary_names_the_filtered_episodes(tmp_path, cli):
    write_trajectories(tmp_path / "d.jsonl", DATA)
    out = tmp_path / "bc"
    args = ["train", str(tmp_path / "d.jsonl"), "--algo", "bc", "--set", "filter=success", "--steps", "5"]
    proc = cli(*args, "--set", "hidden=8", "--out", str(out), "--no-progress", check=True)
    steps = sum(len(t.steps) for t in SUCCESSFUL)
    assert (
        f"bc on {steps} transitions of {len(SUCCESSFUL)} episodes (filter=success of {len(DATA)}"
        in proc.stdout
    )
    summary = json.loads(
        cli(*args, "--out", str(tmp_path / "bc2"), "--json", "--no-progress", check=True).stdout
    )
    assert summary["episodes"] == len(SUCCESSFUL) and summary["transitions"] == steps
    assert summary["dataset_episodes"] == len(DATA) and summary["selection"] == "filter=success"
