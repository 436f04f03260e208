"""Bundle export: manifest, ONNX parity (policy vs torch, encoder vs sentence-transformers), errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from models.bundle import load_manifest
from models.inputs.candidates import (
    candidate_matrix,
)
from models.inputs.formats import embed_inputs, input_format
from policy.encoders.onnx_common import ort_session
from policy.export.assemble import (
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
from policy.scorer.model import ScorerConfig, StateInputs, build_scorer
from policy.training.common import CheckpointError, save_checkpoint

torch.set_num_threads(1)


REAL_TEXTS = [
    "Your task is to pick up objects, then place them in their usual locations in the environment.",
    "Inventory: empty\nRecent actions: none\nRoom: You are in the kitchen. In one part of the room you see a "
    "fridge that is closed. There is also a dining table, that has a dirty plate on it.",
    "put dirty plate in dishwasher",
    "take dirty plate from dining table",
    "open fridge",
]


@pytest.mark.parametrize("kind", ["action+arguments"])
def test_argument_bundle_agrees_across_torch_onnx_and_the_daemon_runtime(tmp_path, kind):
    """A real MiniLM encoder.onnx; the same scores from the torch scorer on sentence-transformers features,
    the bundle runner, the daemon runtime from text and from features sent as arrays."""
    from edge.bundle_policy import BundlePolicy
    from edge.runtime import TextRequest, load_runtime
    from models.bundle import load_manifest
    from policy.encoders.features import TextEmbedder
    from policy.export.assemble import export_bundle

    model = build_scorer(ScorerConfig(embedding_dim=384, hidden=16, candidate_features=kind), 3)
    rep = export_bundle(model, tmp_path / "b", skills=["put mug in dishwasher", "look around"])
    assert rep.policy_max_abs_diff_real <= 1e-4
    man = load_manifest(tmp_path / "b")
    assert man.candidate_features == kind and man.candidate_dim == 3 * 384
    assert man.to_dict()["policy_io"]["inputs"]["candidates"][2] == 3 * 384

    instr = "Your task is to put objects in their usual locations."
    obs = "Inventory: dirty mug\nRoom: You are in the kitchen. You see a dishwasher that has a fork on it."
    memory = [("look around", "Feedback: You see a dishwasher.\nInventory: empty"), ("take dirty mug", obs)]
    cands = ["put dirty mug in dishwasher", "put dirty mug in fridge", "take fork"]
    emb = TextEmbedder(progress=False)
    feats = candidate_matrix(kind, cands, emb.embed, 384)
    assert not feats[2, 2 * 384 :].any()  # "take fork" has no target
    fmt = input_format(2, dim=384, layout=man.state_layout, encoding=man.encoding)
    feeds = fmt.feeds([embed_inputs(fmt, obs, memory, emb.embed, 384)])
    with torch.no_grad():
        ref = model(
            torch.from_numpy(emb.embed([instr])),
            StateInputs(**{k: torch.from_numpy(v) for k, v in feeds.items()}),
            torch.from_numpy(feats)[None],
            torch.ones(1, 3, dtype=torch.bool),
        )[0]

    with BundlePolicy(tmp_path / "b") as pol:
        onnx_scores = pol.scores(instr, obs, cands, memory)
        skills_scores = pol.scores(instr, obs, None, memory)
        assert not np.allclose(pol.scores(instr, obs, cands), onnx_scores)  # the memory is read
    np.testing.assert_allclose(onnx_scores, ref.numpy(), atol=2e-3)
    assert skills_scores.shape == (2,)

    rt = load_runtime(tmp_path / "b")
    try:
        (item,) = rt.items_from_text([TextRequest(instr, obs, cands, memory)])
        assert item.candidates.shape == (3, 3 * 384)
        (from_text,) = rt.score([item])
        np.testing.assert_allclose(from_text, onnx_scores, atol=1e-5)
    finally:
        rt.close()


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

    from policy.export.assemble import tokenize

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
        scores = sess.run(["scores"], inputs)[0]
        assert scores.shape == (b, k)
        assert np.all(scores[~inputs["mask"]] <= -1e8)  # padding never wins


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


@pytest.mark.real
def test_export_refuses_an_encoder_the_checkpoint_was_not_trained_on(tmp_path):
    from policy.export.assemble import ExportError, export_bundle
    from policy.scorer.model import ScorerConfig, build_scorer
    from policy.training.common import save_checkpoint

    model = build_scorer(ScorerConfig(embedding_dim=384, hidden=8), 0)
    ckpt = save_checkpoint(
        tmp_path / "ckpt",
        model,
        algo="bc",
        algo_config={},
        reward="sparse",
        provenance={"encoder": "all-MiniLM-L6-v2", "encoder_sha256": "0" * 64},
        curves=[],
    )
    with pytest.raises(ExportError, match="must ship the encoder its policy was trained on"):
        export_bundle(ckpt, tmp_path / "b")
    assert not (tmp_path / "b").exists()
