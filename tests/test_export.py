"""Bundle export: manifest, ONNX parity (policy vs torch, encoder vs sentence-transformers), errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from models.bundle import POLICY_INPUTS_V2, load_manifest
from policy.common import CheckpointError, save_checkpoint
from policy.export import (
    POLICY_TOL,
    ExportError,
    cached_encoder_onnx,
    check_policy_parity,
    encoder_parity,
    export_bundle,
    export_policy_onnx,
    export_random_bundle,
    random_policy_inputs,
)
from policy.export_common import ort_session
from policy.model import ScorerConfig, build_scorer

torch.set_num_threads(1)

REAL_TEXTS = [
    "Your task is to pick up objects, then place them in their usual locations in the environment.",
    "Inventory: empty\nRecent actions: none\nRoom: You are in the kitchen. In one part of the room you see a "
    "fridge that is closed. There is also a dining table, that has a dirty plate on it.",
    "put dirty plate in dishwasher",
    "take dirty plate from dining table",
    "open fridge",
]


@pytest.mark.real
def test_random_init_bundle_loads_and_has_provenance(tmp_path):
    out = tmp_path / "bundle"
    report = export_random_bundle(out, seed=3, skills=["open fridge", "look around"])
    m = load_manifest(out)  # verifies every sha256
    assert set(m.files) == {"policy.onnx", "encoder.onnx", "tokenizer.json", "skills.npy"}
    assert m.embedding_dim == 384 and m.max_length == 256
    assert m.skills == ["open fridge", "look around"]
    assert m.provenance["algo"] == "random-init"
    assert m.provenance["encoder_sha256"]
    assert "dynamo=False" in m.provenance["exporter"]
    skills = np.load(out / "skills.npy")
    assert skills.shape == (2, 384) and skills.dtype == np.float32
    assert report.policy_max_abs_diff_random <= POLICY_TOL and report.policy_max_abs_diff_real <= POLICY_TOL


@pytest.mark.real
@pytest.mark.parametrize("hidden", [32, 256])
def test_policy_onnx_parity_random_and_real(tmp_path, hidden):
    model = build_scorer(ScorerConfig(hidden=hidden), seed=hidden)
    path = tmp_path / "policy.onnx"
    export_policy_onnx(model, path)
    enc_onnx, tok_json, _cos, _cached = cached_encoder_onnx(
        __import__("models.encoder").encoder.resolve_encoder()
    )
    from tokenizers import Tokenizer

    from policy.export import tokenize

    real = ort_session(enc_onnx).run(
        ["embeddings"], tokenize(Tokenizer.from_file(str(tok_json)), REAL_TEXTS)
    )[0]
    diff_random, diff_real = check_policy_parity(model, path, real, seed=1)
    assert diff_random <= 1e-4 and diff_real <= 1e-4
    # dynamic batch and candidate counts, including K=1 and heavy padding
    sess = ort_session(path)
    rng = np.random.default_rng(0)
    for b, k, t, m in [(1, 1, 1, 1), (7, 3, 5, 2), (2, 64, 48, 32)]:
        inputs = random_policy_inputs(rng, b, k, 384, t=t, m=m, kinds=model.cfg.kinds)
        scores = sess.run(["scores"], dict(zip(POLICY_INPUTS_V2, inputs, strict=True)))[0]
        assert scores.shape == (b, k)
        assert np.all(scores[~inputs[-1]] <= -1e8)  # padding never wins


@pytest.mark.real
def test_encoder_onnx_matches_sentence_transformers(tmp_path):
    from models.encoder import load_sentence_encoder, resolve_encoder

    enc = resolve_encoder()
    st = load_sentence_encoder(enc)
    enc_onnx, tok_json, cos_at_build, _ = cached_encoder_onnx(enc, st_model=st)
    assert cos_at_build >= 0.999
    cos = encoder_parity(enc_onnx, tok_json, st, REAL_TEXTS + ["a " * 600])  # beyond max_length: truncation
    assert cos >= 0.999


@pytest.mark.real
def test_export_checkpoint_and_errors(tmp_path):
    model = build_scorer(ScorerConfig(hidden=32), seed=0)
    ckpt = save_checkpoint(
        tmp_path / "ckpt",
        model,
        algo="bc",
        algo_config={"steps": 1},
        reward="sparse",
        provenance={"dataset": "x.jsonl", "judge_sha256": None},
    )
    out = tmp_path / "b"
    export_bundle(ckpt, out)
    m = load_manifest(out)
    assert m.provenance["algo"] == "bc" and m.provenance["dataset"] == "x.jsonl"
    assert m.policy["hidden"] == 32
    with pytest.raises(CheckpointError, match="does not exist"):
        export_bundle(tmp_path / "missing", tmp_path / "b2")
    (tmp_path / "notckpt").mkdir()
    with pytest.raises(CheckpointError, match="not an edgejudge checkpoint"):
        export_bundle(tmp_path / "notckpt", tmp_path / "b2")
    (ckpt / "policy.pt").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="cannot load weights"):
        export_bundle(ckpt, tmp_path / "b2")
    with pytest.raises(ExportError, match="unique"):
        export_random_bundle(tmp_path / "b3", skills=["a", "a"])
    assert not (tmp_path / "b2").exists() and not (tmp_path / "b3").exists()  # nothing partial left


def test_export_cli_errors(cli, tmp_path):
    proc = cli("export", str(tmp_path / "nope"), "--out", str(tmp_path / "b"))
    assert proc.returncode == 1
    assert "does not exist" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("export", "--out", str(tmp_path / "b"))
    assert proc.returncode == 2 and "exactly one" in proc.stderr
    proc = cli("export", "--random-init", "--out", str(tmp_path / "b"), "--bogus")
    assert proc.returncode == 2 and "No such option" in proc.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.real
def test_export_cli_random_init_json(cli, tmp_path):
    proc = cli("export", "--random-init", "--out", str(tmp_path / "b"), "--json", check=True)
    report = json.loads(proc.stdout)
    assert report["policy_max_abs_diff_random"] <= 1e-4
    assert load_manifest(tmp_path / "b").provenance["algo"] == "random-init"


@pytest.mark.real
def test_export_cli_int8_encoder_is_opt_in_and_recorded(cli, tmp_path):
    proc = cli(
        "export", "--random-init", "--out", str(tmp_path / "b"), "--encoder-precision", "int8", check=True
    )
    man = load_manifest(tmp_path / "b")
    assert man.provenance["encoder_precision"] == "int8"
    assert man.provenance["parity"]["encoder_min_cosine"] >= 0.995
    assert "encoder min cosine" in proc.stdout
    proc = cli("export", "--random-init", "--out", str(tmp_path / "c"), "--encoder-precision", "fp16")
    assert proc.returncode == 2 and "fp16" in proc.stderr and not (tmp_path / "c").exists()
