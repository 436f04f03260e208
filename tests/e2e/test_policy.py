"""End to end on real components: a tiny real TextWorldExpress dataset, real MiniLM features, training,
export, evaluation by real rollouts (checkpoint through torch, bundle through onnxruntime without torch),
CLI errors."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap

import pytest
import torch

from models.bundle import load_manifest
from models.trajectory import write_trajectories
from policy.evaluation.evaluate import RandomPolicy, evaluate
from policy.evaluation.torch_policy import TorchPolicy
from policy.export.assemble import export_bundle
from policy.training.train import train_from_file
from policy.worlds.adapters import open_env, parse_env
from policy.worlds.collect import run_episode
from policy.worlds.twx_placement import PlacementSearchPolicy
from tests.support.paths import ROOT

torch.set_num_threads(1)


# An easy fixed configuration: one room, one object to put away, few steps allowed.
EASY = "numLocations=1,numItemsToPutAway=1,includeDoors=0,limitInventorySize=0"


MAX_STEPS = 6


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """32 real episodes on 4 fixed games (the first 4 train seeds): 6 gold-with-noise, 2 random per game."""
    d = tmp_path_factory.mktemp("policy")
    spec = parse_env("twx:twc", EASY)
    rng = random.Random(0)
    trajs = []
    with open_env(spec, step_limit=MAX_STEPS) as env:
        seeds = env.episodes("train")[:4]
        for rep in range(8):
            for seed in seeds:
                t = run_episode(env, seed, "train", "gold-noise" if rep % 4 else "random", 0.2, rng)
                t.id += f"-{rep}"
                trajs.append(t)
    path = d / "tiny.jsonl"
    write_trajectories(path, trajs)
    return {"dir": d, "data": path, "spec": spec, "seeds": seeds, "trajs": trajs}


@pytest.fixture(scope="module")
def trained(tiny):
    run = train_from_file(
        tiny["data"],
        algo="iql",
        reward="sparse",
        out=tiny["dir"] / "ckpt",
        progress=False,
        overrides={"steps": 700, "batch_size": 64, "hidden": 64, "lr": 1e-3, "log_every": 50},
    )
    return run


@pytest.mark.real
def test_training_lowers_the_loss_and_beats_random(tiny, trained):
    curves = trained.result.curves
    # the TD loss falls; the actor's plain NLL of the data need not (it learns to avoid the random actions)
    assert curves[-1]["loss_q"] < 0.5 * curves[0]["loss_q"]
    assert (trained.checkpoint / "curves.png").is_file() and (trained.checkpoint / "curves.csv").is_file()
    with TorchPolicy(trained.checkpoint) as agent:  # deterministic: one episode per game
        ours = evaluate(
            agent, tiny["spec"], split="train", episodes=4, max_steps=MAX_STEPS, seeds=tiny["seeds"]
        )
    rand = evaluate(
        RandomPolicy(0), tiny["spec"], split="train", episodes=40, max_steps=MAX_STEPS, seeds=tiny["seeds"]
    )
    print(ours.summary(), rand.summary(), sep="\n")
    assert ours.success_rate >= 0.75, ours.summary()
    assert ours.success_rate > rand.success_rate + 0.25, (ours.summary(), rand.summary())
    assert ours.invalid_action_rate == 0.0
    with TorchPolicy(trained.checkpoint) as agent:  # the same policy ranking places for the client's search
        searched = evaluate(
            PlacementSearchPolicy(agent),
            tiny["spec"],
            split="train",
            episodes=4,
            max_steps=MAX_STEPS,
            seeds=tiny["seeds"],
        )
    print(searched.summary())
    assert searched.success_rate >= 0.5 and searched.invalid_action_rate == 0.0


@pytest.mark.real
def test_bundle_eval_runs_without_torch(tiny, trained, tmp_path):
    bundle = tmp_path / "bundle"
    export_bundle(trained.checkpoint, bundle)
    world = load_manifest(bundle).world  # the world of the training data, recorded for the clients
    assert world["env"] == "twx:twc" and world["state_format"] == "twx/2" and world["state_layout"]
    # The real CLI, in a fresh interpreter; afterwards torch (and the LLM stack) must not have been imported.
    code = textwrap.dedent(f"""
        import json, sys
        from models.cli import main
        sys.argv = ["edgejudge", "eval", {str(bundle)!r}, "--env", "twx:twc", "--params", {EASY!r},
                    "--split", "train", "--episodes", "3", "--max-steps", "{MAX_STEPS}", "--json"]
        try:
            main()
        except SystemExit as e:
            assert not e.code, e.code
        heavy = [m for m in ("torch", "sentence_transformers", "transformers", "llama_cpp")
                 if m in sys.modules]
        print("HEAVY=" + json.dumps(heavy))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out, _, heavy = proc.stdout.rpartition("HEAVY=")
    assert json.loads(heavy) == []
    result = json.loads(out)
    assert result["episodes"] == 3 and 0.0 <= result["success_rate"] <= 1.0
    assert result["ci95"][0] <= result["success_rate"] <= result["ci95"][1]
    assert result["latency_ms_mean"] > 0 and len(result["per_episode"]) == 3


@pytest.mark.real
def test_train_cli_and_checkpoint_eval(cli, tiny, tmp_path):
    out = tmp_path / "bc"
    proc = cli(
        "train",
        str(tiny["data"]),
        "--algo",
        "bc",
        "--set",
        "filter=success",
        "--steps",
        "60",
        "--set",
        "hidden=32",
        "--out",
        str(out),
        "--json",
        check=True,
    )
    summary = json.loads(proc.stdout)
    assert summary["loss_last"] < summary["loss_first"]
    meta = json.loads((out / "checkpoint.json").read_text())
    assert meta["algo"] == "bc-success" and meta["provenance"]["dataset"] == str(tiny["data"])
    proc = cli(
        "eval",
        str(out),
        "--params",
        EASY,
        "--split",
        "train",
        "--episodes",
        "2",
        "--max-steps",
        "4",
        check=True,
    )
    assert "success" in proc.stdout and "bc-success:sparse" in proc.stdout
    # the real default two-object game; the client ranks places by the policy's scores of hypothetical puts
    proc = cli(
        "eval",
        str(out),
        "--split",
        "test",
        "--episodes",
        "2",
        "--max-steps",
        "8",
        "--strategy",
        "placement-search",
        "--json",
        check=True,
    )
    result = json.loads(proc.stdout)
    assert result["policy"] == "bc-success:sparse+search" and result["invalid_action_rate"] == 0.0


def test_cli_errors(cli, tiny, tmp_path):
    # bad checkpoint / bundle paths: one clear line, exit 1, no traceback
    proc = cli("eval", str(tmp_path / "missing"), "--episodes", "1")
    assert proc.returncode == 1 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = cli("eval", str(tmp_path / "empty"), "--episodes", "1")
    assert proc.returncode == 1 and "neither a bundle" in proc.stderr
    bad = tmp_path / "badbundle"
    bad.mkdir()
    (bad / "manifest.json").write_text("{not json")
    proc = cli("eval", str(bad), "--episodes", "1")
    assert proc.returncode == 1 and "not valid JSON" in proc.stderr and "Traceback" not in proc.stderr
    ck = tmp_path / "badckpt"
    ck.mkdir()
    (ck / "checkpoint.json").write_text(json.dumps({"format": "edgejudge.checkpoint", "format_version": 99}))
    proc = cli("eval", str(ck), "--episodes", "1")
    assert proc.returncode == 1 and "format_version 99" in proc.stderr
    # usage errors
    proc = cli("train", str(tiny["data"]), "--algo", "iql", "--reward", "coren", "--out", str(tmp_path / "x"))
    assert proc.returncode == 1 and "no label coren.ensemble" in proc.stderr
    proc = cli("train", str(tiny["data"]), "--algo", "iql", "--set", "betta=2", "--out", str(tmp_path / "x"))
    assert proc.returncode == 2 and "unknown iql config key" in proc.stderr
    proc = cli("train", str(tmp_path / "nope.jsonl"), "--algo", "bc", "--out", str(tmp_path / "x"))
    assert proc.returncode == 1 and "does not exist" in proc.stderr
    proc = cli("eval", "--baseline", "random", "--episodes", "1", "--env", "twx:nope")
    assert proc.returncode == 2 and "unknown twx task" in proc.stderr
    proc = cli(
        "eval", "--baseline", "llm", "--strategy", "placement-search", "--sample", "1.0", "--episodes", "1"
    )
    assert proc.returncode == 2 and "does not go with --sample" in proc.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.real
def test_llm_baseline_cli(cli):
    # the real embedded GGUF judge picks among the admissible actions; same metrics as the policy
    proc = cli(
        "eval",
        "--baseline",
        "llm",
        "--judge",
        "gemma3-270m",
        "--params",
        EASY,
        "--split",
        "test",
        "--episodes",
        "1",
        "--max-steps",
        "2",
        "--json",
        check=True,
    )
    result = json.loads(proc.stdout)
    assert result["policy"] == "llm:gemma3-270m+guard" and result["loop_guard"] is True  # the default
    assert result["actions"] == 2 and result["invalid_action_rate"] == 0.0
    assert result["latency_ms_mean"] > 0
    proc = cli("eval", "--baseline", "llm", "--judge", "/nope/model.gguf", "--episodes", "1")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
