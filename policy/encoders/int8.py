"""Faster encoder graphs: int8 quantisation of the exported MiniLM encoder.onnx (an explicit opt-in).

``quantize_encoder(src, dst, texts)`` turns the fp32 encoder graph of :mod:`policy.encoders.minilm_graph` into
an int8 one that onnxruntime runs about 2.4x faster on one thread (AVX-512 VNNI / AVX2 integer kernels), with
the same inputs and output, so ``edge/runtime.py`` runs it unchanged. What it does, in order:

1. **Calibrate** (fp32 graph, ``texts``): the largest |activation| per input channel of every weight MatMul.
2. **SmoothQuant** (Xiao et al. 2023) on the query/key/value and first feed-forward MatMuls: activations are
   divided per channel by ``s = amax^a / wmax^(1-a)`` (``a = 0.7``) in a ``Mul`` and the weight rows
   multiplied by ``s``, which moves the outlier channels' range into the weights (exact in fp32).
3. **First-token split** on the second feed-forward MatMul: its input (the GELU output) holds one outlier
   token, [CLS], 4-5x larger than any other row; a per-tensor activation scale fitted to it wastes the int8
   range of every other token, so the [CLS] row and the other rows go through separate MatMuls (same weights)
   and are concatenated.
4. **Dynamic int8** (``onnxruntime.quantization.quantize_dynamic``): MatMul weights uint8 per output
   channel (asymmetric), activations uint8 per tensor at run time. Embeddings, LayerNorm, softmax, GELU, the
   attention score products and the pooling stay fp32.

**The same numbers on every CPU.** onnxruntime's integer kernels differ by instruction set. With int8
(signed) weights, x86 CPUs without VNNI (AVX2, AVX-512 before Cascade Lake) multiply through ``VPMADDUBSW``,
which adds pairs of uint8 x int8 products into a *saturating* int16: on such a CPU the same graph gave min
cosine 0.989 where a VNNI CPU gives 0.996 (onnxruntime's quantization docs describe the saturation). With
uint8 weights (U8U8) every kernel widens to 16 bits first (``VPMADDWD`` on AVX2, dot products on VNNI and
ARM), so the integer products are exact everywhere and an int8 bundle means the same on the robot as where
it was exported: checked under ``qemu-x86_64 -cpu Haswell`` (AVX2, no AVX-512, no VNNI) by
``tools/bench/bench_int8_cpus.py``: min cosine to sentence-transformers 0.9977 there as on the exporting
AVX-512/VNNI CPU, the two CPUs' embeddings within cosine 0.9997 of each other (float rounding that moves an
activation across a quantisation step; int8 weights: 0.989 and 0.9885).
7-bit signed weights (``reduce_range``) would also avoid the saturation, at min cosine 0.993 (below the bar).
:func:`integer_kernels` reads which kind a graph holds; the manifest records it.

Measured on 534 real TextWorldExpress dev texts (``tools/bench/bench_encoder.py``, BENCHMARKS.md "Encoders"):
min cosine to sentence-transformers 0.9986, about 1.5x faster than fp32 on one thread (int8 weights: 2.8x on a
VNNI CPU, the price of the same answers everywhere). That is below the 0.999 the default export guarantees,
so int8 is never the default: ``export_bundle(..., encoder_precision="int8")`` asks for it and the manifest
records it with its measured cosine. Things tried that did not reach 0.999 either: plain dynamic int8
(0.98), per-layer exclusions; weight-only 8-bit ``MatMulNBits`` reached 0.9996 but ran slower than fp32 on
this CPU; onnxruntime's transformer fusions gave no speed (the graph is MatMul-bound).
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
from pathlib import Path

import numpy as np

PRECISIONS = ("fp32", "int8")
DEFAULT_PRECISION = "fp32"
INT8_MIN_COSINE = 0.995
"""Parity floor of an int8 encoder against sentence-transformers (measured min 0.998 on real texts)."""
SMOOTH_ALPHA = 0.7
OPT_VERSION = 2
"""Bump when the recipe changes: it is part of the encoder cache key."""
CALIBRATION_FILE = Path(__file__).with_name("encoder_calibration.json")

# Weight MatMuls of a Hugging Face BERT export, by the module path in the node name.
_KINDS = (
    ("attention/self/query/", "q"),
    ("attention/self/key/", "k"),
    ("attention/self/value/", "v"),
    ("attention/output/dense/", "o"),
    ("intermediate/dense/", "f1"),
    ("/output/dense/", "f2"),
)
SMOOTHED = ("q", "k", "v", "f1")
SPLIT_FIRST_TOKEN = ("f2",)


class EncoderOptError(RuntimeError):
    """The graph cannot be quantised (not a BERT-style export, no calibration texts, ...)."""


def calibration_texts(path: Path = CALIBRATION_FILE) -> list[str]:
    """The shipped calibration texts (TWC and CookingWorld train-split states, actions, instructions)."""
    try:
        data = json.loads(path.read_text())
        texts = [t for t in data["texts"] if isinstance(t, str) and t]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise EncoderOptError(f"{path}: calibration texts cannot be read ({e})") from None
    if not texts:
        raise EncoderOptError(f"{path}: no calibration texts")
    return texts


def matmul_kind(node_name: str) -> tuple[int, str] | None:
    """(layer, kind) of a BERT weight MatMul from its node name, kind in q k v o f1 f2; None otherwise."""
    m = re.search(r"layer\.(\d+)/", node_name)
    if not m:
        return None
    for pattern, kind in _KINDS:
        if pattern in node_name:
            return int(m.group(1)), kind
    return None


def _weight_matmuls(model) -> list:
    inits = {i.name for i in model.graph.initializer}
    return [
        n
        for n in model.graph.node
        if n.op_type == "MatMul" and n.input[1] in inits and matmul_kind(n.name) is not None
    ]


def _tokenize_one(tokenizer, text: str) -> dict[str, np.ndarray]:
    ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}


def activation_absmax(model, tokenizer, texts: list[str]) -> dict[str, np.ndarray]:
    """Per-channel max |x| of every weight MatMul's input over ``texts`` (one text per run: no padding)."""
    import onnx
    import onnxruntime as ort

    names = sorted({n.input[0] for n in _weight_matmuls(model)})
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for name in names:
        probe.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # keep the probed tensors
    so.log_severity_level = 3
    sess = ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"])
    amax: dict[str, np.ndarray] = {}
    for text in texts:
        outs = sess.run(names, _tokenize_one(tokenizer, text))
        for name, x in zip(names, outs, strict=True):
            rows = x.reshape(-1, x.shape[-1])
            a = np.abs(rows).max(axis=0)
            amax[name] = a if name not in amax else np.maximum(amax[name], a)
    return amax


def smooth(model, amax: dict[str, np.ndarray], kinds=SMOOTHED, alpha: float = SMOOTH_ALPHA) -> int:
    """SmoothQuant in place on the MatMuls of ``kinds``; MatMuls sharing an input share one scale.
    Returns the number of Mul nodes inserted."""
    from onnx import helper, numpy_helper

    g = model.graph
    inits = {i.name: i for i in g.initializer}
    groups: dict[str, list] = {}
    for n in _weight_matmuls(model):
        kind = matmul_kind(n.name)
        if kind is not None and kind[1] in kinds:
            groups.setdefault(n.input[0], []).append(n)
    inserted = []
    for x, nodes in groups.items():
        weights = [numpy_helper.to_array(inits[n.input[1]]) for n in nodes]
        wmax = np.max(np.stack([np.abs(w).max(axis=1) for w in weights]), axis=0)
        s = (np.maximum(amax[x], 1e-5) ** alpha) / (np.maximum(wmax, 1e-5) ** (1 - alpha))
        s = np.clip(s, 1e-3, 1e3).astype(np.float32)
        for n, w in zip(nodes, weights, strict=True):
            inits[n.input[1]].CopyFrom(
                numpy_helper.from_array((w * s[:, None]).astype(np.float32), n.input[1])
            )
        inv, out = f"{x}/smooth_inv", f"{x}/smoothed"
        g.initializer.append(numpy_helper.from_array((1.0 / s).astype(np.float32), inv))
        for n in nodes:
            n.input[0] = out
        inserted.append((helper.make_node("Mul", [x, inv], [out], name=f"{x}/smooth"), nodes))
    for mul, nodes in inserted:  # before the first consumer: the node list stays topologically sorted
        g.node.insert(min(list(g.node).index(n) for n in nodes), mul)
    return len(inserted)


def split_first_token(model, kinds=SPLIT_FIRST_TOKEN) -> list[str]:
    """Replace each MatMul of ``kinds`` by MatMul(x[:, :1]) ++ MatMul(x[:, 1:]) (same weights) in place;
    returns the names of the new MatMuls (both are to be quantised)."""
    from onnx import helper, numpy_helper

    g = model.graph
    consts = {"sft/zero": 0, "sft/one": 1, "sft/end": 1 << 30, "sft/axis": 1}
    for name, value in consts.items():
        g.initializer.append(numpy_helper.from_array(np.array([value], dtype=np.int64), name))
    targets = {n.name for n in _weight_matmuls(model) if matmul_kind(n.name)[1] in kinds}  # type: ignore[index]
    nodes, made = [], []
    for n in list(g.node):
        if n.op_type != "MatMul" or n.name not in targets:
            nodes.append(n)
            continue
        x, w, y = n.input[0], n.input[1], n.output[0]
        nodes += [
            helper.make_node(
                "Slice", [x, "sft/zero", "sft/one", "sft/axis"], [y + "/x0"], name=n.name + "/s0"
            ),
            helper.make_node(
                "Slice", [x, "sft/one", "sft/end", "sft/axis"], [y + "/x1"], name=n.name + "/s1"
            ),
            helper.make_node("MatMul", [y + "/x0", w], [y + "/y0"], name=n.name + "/first"),
            helper.make_node("MatMul", [y + "/x1", w], [y + "/y1"], name=n.name + "/rest"),
            helper.make_node("Concat", [y + "/y0", y + "/y1"], [y], name=n.name + "/cat", axis=1),
        ]
        made += [n.name + "/first", n.name + "/rest"]
    del g.node[:]
    g.node.extend(nodes)
    return made


def quantize_encoder(
    src: Path,
    dst: Path,
    tokenizer_json: Path,
    texts: list[str] | None = None,
    *,
    signed_weights: bool = False,
) -> dict:
    """Write the int8 encoder graph for the fp32 ``src`` to ``dst``; returns what was done (provenance).
    ``signed_weights``: int8 weights (U8S8) instead of uint8, the recipe before v2, which saturates on x86
    without VNNI; kept for the benchmark that shows it (``tools/bench/bench_int8_cpus.py``)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from tokenizers import Tokenizer

    texts = texts if texts is not None else calibration_texts()
    if not texts:
        raise EncoderOptError("no calibration texts")
    model = onnx.load(str(src))
    matmuls = _weight_matmuls(model)
    if not matmuls:
        raise EncoderOptError(f"{src}: no BERT-style weight MatMuls (layer.N/.../dense) to quantise")
    tok = Tokenizer.from_file(str(tokenizer_json))
    tok.no_padding()
    amax = activation_absmax(model, tok, texts)
    n_smooth = smooth(model, amax)
    split = split_first_token(model)
    quantized = [n.name for n in _weight_matmuls(model) if matmul_kind(n.name)[1] not in SPLIT_FIRST_TOKEN]  # type: ignore[index]
    muted = logging.root.manager.disable
    logging.disable(logging.WARNING)  # the quantiser advises a pre-processing pass on every call
    with tempfile.TemporaryDirectory(prefix="encoder-int8-") as tmp:
        staged = Path(tmp) / "prepared.onnx"
        onnx.save(model, str(staged))
        try:
            quantize_dynamic(
                str(staged),
                str(dst),
                per_channel=True,
                weight_type=QuantType.QInt8 if signed_weights else QuantType.QUInt8,  # U8U8: exact everywhere
                op_types_to_quantize=["MatMul"],
                nodes_to_quantize=quantized + split,
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
        finally:
            logging.disable(muted)
    return {
        "precision": "int8",
        "recipe": f"smoothquant(a={SMOOTH_ALPHA}) on q,k,v,ffn1; first-token split on ffn2; dynamic int8 "
        f"MatMul (per-channel {'int8' if signed_weights else 'uint8'} weights, per-tensor uint8 "
        f"activations); v{OPT_VERSION}",
        "integer_kernels": integer_kernels(dst),
        "quantized_matmuls": len(quantized) + len(split),
        "smoothing_muls": n_smooth,
        "calibration_texts": len(texts),
    }


def integer_kernels(model) -> str:
    """What the integer MatMuls of ``model`` (a ModelProto or a path) multiply: "u8u8" (exact on every CPU),
    "u8s8" (int8 weights: saturates on x86 without VNNI), "mixed", or "none"."""
    import onnx
    from onnx import TensorProto

    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model))

    inits = {i.name: i.data_type for i in model.graph.initializer}
    kinds = set()
    for n in model.graph.node:
        if n.op_type == "MatMulInteger" and n.input[1] in inits:
            kinds.add("u8u8" if inits[n.input[1]] == TensorProto.UINT8 else "u8s8")
    return "none" if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"


def parity_unpadded(onnx_path: Path, tokenizer_path: Path, st_model, texts: list[str]) -> float:
    """Min cosine between the graph, one text per run as edge.runtime runs an int8 encoder (no padding:
    per-tensor activation scales would otherwise see the padding rows), and sentence-transformers."""
    from tokenizers import Tokenizer

    from policy.encoders.onnx_common import ort_session

    sess = ort_session(onnx_path)
    tok = Tokenizer.from_file(str(tokenizer_path))
    tok.no_padding()
    names = {i.name for i in sess.get_inputs()}
    got = []
    for text in texts:
        feeds = {k: v for k, v in _tokenize_one(tok, text).items() if k in names}
        got.append(sess.run(["embeddings"], feeds)[0][0])
    ref = st_model.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True, batch_size=16)
    g = np.stack(got)
    cos = np.sum(g * ref, axis=1) / (np.linalg.norm(g, axis=1) * np.linalg.norm(ref, axis=1) + 1e-12)
    return float(np.min(cos))


def _cache_key(enc, precision: str) -> str:
    import hashlib

    import onnxruntime

    from policy.encoders.minilm_graph import encoder_cache_key

    calib = hashlib.sha256(CALIBRATION_FILE.read_bytes()).hexdigest() if CALIBRATION_FILE.is_file() else "-"
    raw = f"{encoder_cache_key(enc)}|{precision}|{OPT_VERSION}|{calib}|{onnxruntime.__version__}"
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def cached_encoder(enc, precision: str, *, st_model=None) -> tuple[Path, Path, float, bool]:
    """(encoder.onnx, tokenizer.json, parity min cosine, was cached) of the ``precision`` encoder for
    ``enc``: the fp32 graph of :mod:`policy.encoders.minilm_graph`, or the int8 one, built once per cache key
    from the cached fp32 graph and parity-checked against sentence-transformers (min cosine >=
    :data:`INT8_MIN_COSINE`, else :class:`policy.encoders.onnx_common.ExportError`)."""
    import shutil

    from models.encoder import load_sentence_encoder
    from policy.encoders.minilm_graph import cached_encoder_onnx
    from policy.encoders.onnx_common import PARITY_TEXTS, ExportError, cache_root, publish_folder

    if precision not in PRECISIONS:
        raise ExportError(f"unknown encoder precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    if precision == "fp32":
        return cached_encoder_onnx(enc, st_model=st_model)
    root = cache_root()
    folder = root / f"encoder-{precision}-{_cache_key(enc, precision)}"
    meta_path = folder / "meta.json"
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text())
            onnx_path, tok_path = folder / "encoder.onnx", folder / "tokenizer.json"
            if onnx_path.is_file() and tok_path.is_file() and onnx_path.stat().st_size == meta["onnx_bytes"]:
                return onnx_path, tok_path, float(meta["min_cosine"]), True
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a broken cache entry is rebuilt below
    src, tok_json, _cos, _cached = cached_encoder_onnx(enc, st_model=st_model)
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".encoder-int8-", dir=root))
    try:
        info = quantize_encoder(src, tmp / "encoder.onnx", tok_json)
        shutil.copyfile(tok_json, tmp / "tokenizer.json")
        st_model = st_model or load_sentence_encoder(enc)
        long_text = " ".join(PARITY_TEXTS[1:] * 12)  # longer than max_length: checks truncation too
        cos = parity_unpadded(
            tmp / "encoder.onnx", tmp / "tokenizer.json", st_model, [*PARITY_TEXTS, long_text]
        )
        if not cos >= INT8_MIN_COSINE:
            raise ExportError(
                f"{precision} encoder.onnx parity failed: min cosine {cos:.5f} < {INT8_MIN_COSINE}"
            )
        meta = {**info, "encoder_sha256": enc.sha256, "min_cosine": cos}
        meta["onnx_bytes"] = (tmp / "encoder.onnx").stat().st_size
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2))
        publish_folder(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder / "encoder.onnx", folder / "tokenizer.json", cos, False
