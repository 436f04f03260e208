"""Training (policy.training.train) on hand-made data: every algorithm learns a toy task, deterministically,
config errors, and the summary of what it trained on (embeddings here are a deterministic test double)."""

from __future__ import annotations

import json

import pytest
import torch

from models.trajectory import write_trajectories
from policy.training.buffer import TOKEN_LENGTH, build_table
from policy.training.learners import awr, bc, cql, iql
from policy.training.rewards import parse_reward
from policy.training.train import ConfigError, make_config, parse_overrides, train_from_file
from tests.support.toy_task import DATA, D, HashEmbedder

torch.set_num_threads(1)


SUCCESSFUL = [t for t in DATA if t.success]


def _train(tmp_path, algo: str, **overrides):
    write_trajectories(tmp_path / "d.jsonl", DATA)
    return train_from_file(
        tmp_path / "d.jsonl",
        algo=algo,
        reward="sparse",
        out=tmp_path / f"ck-{algo}-{len(overrides)}",
        overrides={"steps": 10, "hidden": 8, "log_every": 5, **overrides},
        embedder=HashEmbedder(),
        progress=False,
    )


@pytest.mark.parametrize("features", ["action", "action+arguments"])
@pytest.mark.parametrize("algo", ["iql", "cql", "bc", "awr"])
def test_each_algorithm_learns_the_toy_task(algo, features):
    reward = parse_reward("coren") if algo in ("iql", "cql") else parse_reward("sparse")
    emb = HashEmbedder()
    table = build_table(
        DATA,
        emb,
        reward,
        weight_channel=("trca", "advantage"),
        candidate_features=features,
        token_source=emb.token_source(TOKEN_LENGTH),
    )
    cfg = make_config(
        algo,
        {
            "steps": 150,
            "batch_size": 32,
            "hidden": 32,
            "log_every": 10,
            "lr": 1e-3,
            "candidate_features": features,
            **({"filter": "success"} if algo == "bc" else {}),
        },
    )
    module = {"iql": iql, "cql": cql, "bc": bc, "awr": awr}[algo]
    result = module.train(table if algo == "bc" else table.to_torch(), cfg, dim=D, progress=False)
    assert result.curves[0]["step"] == 10 and result.curves[-1]["step"] == 150
    first, last = result.curves[0][result.loss_key], result.curves[-1][result.loss_key]
    assert last < first, (algo, first, last)
    # greedy action on both decision points of a successful episode (rows 0 and 1) is the good one
    b = table.to_torch().batch(torch.arange(2))
    with torch.no_grad():
        scores = result.model(b.instruction, b.state, b.cands, b.mask)
    for s, row in zip(DATA[0].steps, scores, strict=True):
        assert s.candidates[int(row.argmax())] in ("take key", "open door"), (algo, s.candidates, row)


@pytest.mark.parametrize("reader", ["tokens", "vectors"])
def test_training_is_deterministic(reader):
    emb = HashEmbedder()
    table = build_table(DATA, emb, parse_reward("sparse"), token_source=emb.token_source(TOKEN_LENGTH))
    cfg = make_config("iql", {"steps": 20, "batch_size": 16, "hidden": 16, "reader": reader})
    a = iql.train(table.to_torch(), cfg, dim=D, progress=False)
    b = iql.train(table.to_torch(), cfg, dim=D, progress=False)
    assert a.model.cfg.reader == reader
    for (ka, va), (kb, vb) in zip(a.model.state_dict().items(), b.model.state_dict().items(), strict=True):
        assert ka == kb and torch.equal(va, vb)
    assert a.curves == b.curves


def test_config_errors():
    with pytest.raises(ConfigError, match="unknown iql config key 'betta'"):
        make_config("iql", {"betta": 1})
    with pytest.raises(ConfigError, match="expected float"):
        make_config("iql", {"beta": "high"})
    with pytest.raises(ConfigError, match="bc filter"):
        make_config("bc", {"filter": "best"})
    with pytest.raises(ConfigError, match="unknown algorithm"):
        make_config("ppo", {})
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_overrides(["beta"])
    cfg = make_config("iql", {})
    assert (cfg.expectile, cfg.beta, cfg.gamma, cfg.weight_clip) == (0.7, 3.0, 0.99, 100.0)


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


def test_several_logs_train_as_one_set(tmp_path):
    half = len(DATA) // 2
    write_trajectories(tmp_path / "round-0.jsonl", DATA[:half])
    (tmp_path / "fleet").mkdir()
    write_trajectories(tmp_path / "fleet" / "round-1.jsonl.gz", DATA[half:])
    run = train_from_file(
        [tmp_path / "round-0.jsonl", tmp_path / "fleet"],
        algo="bc",
        reward="sparse",
        out=tmp_path / "ck",
        overrides={"steps": 5, "hidden": 8},
        embedder=HashEmbedder(),
        progress=False,
    )
    assert (run.dataset_episodes, run.episodes) == (len(DATA), len(DATA))
    prov = json.loads((run.checkpoint / "checkpoint.json").read_text())["provenance"]
    assert prov["dataset"] == f"{tmp_path / 'round-0.jsonl'}, {tmp_path / 'fleet'}"


@pytest.mark.parametrize("algo", ["bc", "iql"])
def test_a_warm_start_begins_at_the_checkpoint(tmp_path, algo):
    from policy.training.common import load_checkpoint

    first = _train(tmp_path, algo)
    # With a zero learning rate nothing moves: the policy is the checkpoint's, bit for bit.
    again = _train(tmp_path, algo, init=str(first.checkpoint), lr=0.0)
    a, _ = load_checkpoint(first.checkpoint)
    b, meta = load_checkpoint(again.checkpoint)
    assert meta["algo_config"]["init"] == str(first.checkpoint)
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    fresh = _train(tmp_path, algo, lr=0.0, seed=1, steps=1)  # without it, a fresh initialisation
    c, _ = load_checkpoint(fresh.checkpoint)
    pairs = zip(a.state_dict().values(), c.state_dict().values(), strict=True)
    assert not all(torch.equal(x, y) for x, y in pairs)


def test_a_warm_start_from_another_scorer_says_what_differs(tmp_path):
    from policy.training.common import CheckpointError

    first = _train(tmp_path, "bc")
    with pytest.raises(CheckpointError, match="hidden 8 there, 16 here"):
        _train(tmp_path, "bc", init=str(first.checkpoint), hidden=16)
    with pytest.raises(CheckpointError, match="does not exist"):
        _train(tmp_path, "bc", init=str(tmp_path / "nowhere"))
