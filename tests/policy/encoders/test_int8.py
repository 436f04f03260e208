"""policy.encoders.int8: the int8 encoder recipe (exact graph rewrites, real MiniLM quantisation, parity on
real TextWorldExpress texts through the robot runtime) and the opt-in through export_bundle."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from policy.encoders.int8 import (
    INT8_MIN_COSINE,
    EncoderOptError,
    calibration_texts,
    integer_kernels,
    matmul_kind,
    smooth,
    split_first_token,
)


def _tiny_ffn(path, rng):
    """x[B,T,8] -> MatMul (layer.0 ffn1) -> Relu -> MatMul (layer.0 ffn2) -> y, names as in a BERT export."""
    from onnx import TensorProto, helper, numpy_helper

    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    w2 = rng.standard_normal((16, 8)).astype(np.float32)
    g = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w1"], ["h"], name="/enc/layer.0/intermediate/dense/MatMul"),
            helper.make_node("Relu", ["h"], ["r"], name="/enc/layer.0/act"),
            helper.make_node("MatMul", ["r", "w2"], ["y"], name="/enc/layer.0/output/dense/MatMul"),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "t", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "t", 8])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return model


def _run(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(["y"], {"x": x})[0]


@pytest.fixture(scope="module")
def real_texts(tmp_path_factory):
    """Real TWC dev-split texts (states, candidates, the instruction), collected with textworld-express."""
    from models.trajectory import read_trajectories
    from tests.support.cli import run_cli

    out = tmp_path_factory.mktemp("twc") / "dev.jsonl.gz"
    run_cli(
        "collect",
        "--env",
        "twx:twc",
        "--split",
        "dev",
        "--episodes",
        "4",
        "--seed",
        "5",
        "--out",
        str(out),
        check=True,
    )
    texts: list[str] = []
    for t in read_trajectories(out):
        texts.append(t.instruction)
        for s in t.steps[:6]:
            texts.append(s.observation)
            texts.extend((s.candidates or [])[:4])
    return sorted(set(texts))


def test_matmul_kind_reads_bert_node_names():
    assert matmul_kind("/transformer/encoder/layer.3/attention/self/query/MatMul") == (3, "q")
    assert matmul_kind("/transformer/encoder/layer.0/attention/self/value/MatMul") == (0, "v")
    assert matmul_kind("/transformer/encoder/layer.5/attention/output/dense/MatMul") == (5, "o")
    assert matmul_kind("/transformer/encoder/layer.1/intermediate/dense/MatMul") == (1, "f1")
    assert matmul_kind("/transformer/encoder/layer.1/output/dense/MatMul") == (1, "f2")
    assert matmul_kind("/transformer/encoder/layer.1/attention/self/MatMul") is None  # scores: not a weight
    assert matmul_kind("/pooler/dense/MatMul") is None


def test_smoothing_and_first_token_split_are_exact_in_fp32(tmp_path):
    """The rewrites before quantisation change no output (only where the int8 ranges fall)."""
    rng = np.random.default_rng(0)
    model = _tiny_ffn(tmp_path / "tiny.onnx", rng)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    x[:, 0] *= 30  # an outlier first token, as [CLS] in MiniLM
    ref = _run(model, x)
    amax = {"x": np.abs(x).reshape(-1, 8).max(0), "r": np.full(16, 3.0, np.float32)}
    assert smooth(model, amax, kinds=("f1",)) == 1
    made = split_first_token(model, kinds=("f2",))
    assert made == ["/enc/layer.0/output/dense/MatMul/first", "/enc/layer.0/output/dense/MatMul/rest"]
    onnx.checker.check_model(model)
    np.testing.assert_allclose(_run(model, x), ref, rtol=1e-5, atol=1e-4)
    one_token = x[:, :1].copy()  # a batch of 1-token texts: the "rest" half is empty
    fresh = _tiny_ffn(tmp_path / "t2.onnx", np.random.default_rng(0))
    np.testing.assert_allclose(_run(model, one_token), _run(fresh, one_token), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(("weights", "kernels"), [("uint8", "u8u8"), ("int8", "u8s8"), (None, "none")])
def test_integer_kernels_reads_the_weight_type_of_the_integer_matmuls(tmp_path, weights, kernels):
    """u8u8 is what makes an int8 graph portable: x86 without VNNI saturates u8 x s8 products, not u8 x u8."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    _tiny_ffn(tmp_path / "tiny.onnx", np.random.default_rng(0))
    if weights is None:
        assert integer_kernels(tmp_path / "tiny.onnx") == kernels
        return
    wt = QuantType.QUInt8 if weights == "uint8" else QuantType.QInt8
    quantize_dynamic(str(tmp_path / "tiny.onnx"), str(tmp_path / "q.onnx"), per_channel=True, weight_type=wt)
    assert integer_kernels(tmp_path / "q.onnx") == kernels
    assert integer_kernels(onnx.load(str(tmp_path / "q.onnx"))) == kernels


def test_calibration_texts_ship_with_the_package(tmp_path):
    texts = calibration_texts()
    assert len(texts) >= 200 and len(set(texts)) == len(texts)
    assert any(t.startswith("Inventory:") or "Room:" in t for t in texts)  # composed state texts
    bad = tmp_path / "c.json"
    bad.write_text(json.dumps({"texts": []}))
    with pytest.raises(EncoderOptError, match="no calibration texts"):
        calibration_texts(bad)
    bad.write_text("{not json")
    with pytest.raises(EncoderOptError, match="cannot be read"):
        calibration_texts(bad)


@pytest.mark.real
def test_int8_bundle_is_opt_in_recorded_and_close_to_sentence_transformers(tmp_path, real_texts):
    from edge.runtime import load_runtime
    from models.encoder import load_sentence_encoder
    from policy.export.assemble import ExportError, export_random_bundle

    st = load_sentence_encoder()
    ref = st.encode(real_texts, convert_to_numpy=True, normalize_embeddings=True)
    cos = {}
    for precision in ("fp32", "int8"):
        kwargs = {} if precision == "fp32" else {"encoder_precision": "int8"}
        report = export_random_bundle(tmp_path / precision, **kwargs)
        manifest = json.loads((tmp_path / precision / "manifest.json").read_text())
        assert manifest["provenance"]["encoder_precision"] == precision
        assert report.encoder_min_cosine >= (0.999 if precision == "fp32" else INT8_MIN_COSINE)
        rt = load_runtime(tmp_path / precision)
        try:
            got = rt.encode(real_texts, cache=False)
            single = np.stack([rt.encode([t], cache=False)[0] for t in real_texts[:5]])
        finally:
            rt.close()
        cos[precision] = np.sum(got * ref, axis=1)
        if precision == "fp32":  # batching in the runtime gives the same embeddings as one text per run
            np.testing.assert_allclose(got[:5], single, atol=1e-5)
        else:  # int8 activation scales are per run: batched and alone are each within the parity bar of
            # the reference, so within twice its angle of each other
            assert manifest["provenance"]["encoder_integer_kernels"] == "u8u8"
            assert np.sum(got[:5] * single, axis=1).min() >= np.cos(2 * np.arccos(INT8_MIN_COSINE))
    assert cos["fp32"].min() >= 0.999  # the default keeps cosine >= 0.999
    assert cos["int8"].min() >= INT8_MIN_COSINE  # what export guarantees, on texts it did not check
    sizes = {p: (tmp_path / p / "encoder.onnx").stat().st_size for p in ("fp32", "int8")}
    assert sizes["int8"] < 0.7 * sizes["fp32"]
    with pytest.raises(ExportError, match="unknown encoder precision"):
        export_random_bundle(tmp_path / "bad", encoder_precision="int4")
    assert not (tmp_path / "bad").exists()


@pytest.mark.real
def test_edge_serve_answers_text_requests_with_an_int8_bundle(tmp_path, real_texts):
    """The robot side needs nothing new: edge-serve loads an int8 bundle and acts on real TWC texts; the
    scores stay close to the fp32 bundle's (same scorer, nearby embeddings)."""
    from edge.client import EdgeClient
    from policy.export.assemble import export_random_bundle
    from tests.support.serving import Daemon

    states = [t for t in real_texts if "Room:" in t or "Inventory:" in t][:6]
    cands = [t for t in real_texts if len(t) < 40 and "\n" not in t][:6]
    assert states and len(cands) >= 2
    instruction = next(t for t in real_texts if t.startswith("Your task"))
    chosen = {}
    for precision in ("fp32", "int8"):
        export_random_bundle(tmp_path / precision, encoder_precision=precision)
        with Daemon(tmp_path / precision) as d, EdgeClient(d.endpoint, timeout=30, retries=0) as c:
            info = c.info()
            assert info["provenance"]["encoder_precision"] == precision
            replies = [c.act(instruction, s, cands) for s in states]
        assert all(r["ok"] and len(r["scores"]) == len(cands) and r["action"] in cands for r in replies)
        chosen[precision] = np.array([r["scores"] for r in replies])
    spread = chosen["fp32"].max(axis=1) - chosen["fp32"].min(axis=1)
    drift = np.abs(chosen["int8"] - chosen["fp32"]).max(axis=1)
    assert (drift < 0.25 * spread).all()
