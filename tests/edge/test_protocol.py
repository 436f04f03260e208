"""Wire protocol: parsing, validation, stable error codes, shared byte vectors (no daemon here)."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge import protocol_vectors
from edge.protocol import (
    MAX_CANDIDATES,
    Code,
    ProtocolError,
    act_embeddings,
    act_text,
    decode_array,
    encode_array,
    make_request,
    pack,
    parse_request,
    unpack_reply,
)

CODES = {c.value for c in Code}


def code_of(payload: bytes, max_bytes: int = 1 << 20) -> str | None:
    try:
        parse_request(payload, max_bytes)
    except ProtocolError as e:
        assert e.code.value in CODES and e.message
        return e.code.value
    return None


def _emb_msg(**over):
    msg = act_embeddings(np.ones(4), np.ones(4), np.ones((2, 4)))
    msg.update(over)
    return msg


json_like = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | st.binary(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)


def test_vectors_file_matches_the_python_implementation():
    assert protocol_vectors.VECTORS_FILE.read_text() == protocol_vectors.render(), (
        "edge/protocol_vectors/vectors.txt is stale: run python -m edge.protocol_vectors"
    )
    vec = protocol_vectors.load()
    assert set(vec) == set(protocol_vectors.messages())
    for name, raw in vec.items():
        if name.startswith("req_"):
            req = parse_request(raw)
            assert req.op == protocol_vectors.messages()[name]["op"]
        else:
            assert unpack_reply(raw)["v"] == 1


def test_act_text_roundtrip_and_id_echo_fields():
    req = parse_request(pack(act_text("put apple", "Room: kitchen", ["take apple", "look"], req_id="a-1")))
    assert (req.op, req.id, req.instruction, req.observation, req.candidates) == (
        "act",
        "a-1",
        "put apple",
        "Room: kitchen",
        ["take apple", "look"],
    )
    assert not req.is_embedding
    assert parse_request(pack(act_text("i", "o"))).candidates is None  # skill list


def test_act_embeddings_roundtrip_exact_float32():
    rng = np.random.default_rng(0)
    i, o, c = rng.standard_normal(8), rng.standard_normal(8), rng.standard_normal((3, 8))
    req = parse_request(pack(act_embeddings(i, o, c, ["a", "b", "c"], req_id=5)))
    assert req.is_embedding and req.id == 5 and req.candidates == ["a", "b", "c"]
    np.testing.assert_array_equal(req.candidates_emb, c.astype(np.float32))
    assert req.instruction_emb.dtype == np.float32


@pytest.mark.parametrize(
    "msg, code",
    [
        ({"op": "health"}, "bad_version"),
        ({"v": 2, "op": "health"}, "bad_version"),
        ({"v": True, "op": "health"}, "bad_version"),
        ({"v": 1, "op": "jump"}, "unknown_op"),
        ({"v": 1, "op": 3}, "unknown_op"),
        ({"v": 1}, "unknown_op"),
        ({"v": 1, "op": "health", "extra": 1}, "bad_request"),
        ({"v": 1, "op": "health", "id": 1.5}, "bad_field"),
        ({"v": 1, "op": "health", "id": "x" * 200}, "bad_field"),
        ({"v": 1, "op": "act", "instruction": "i"}, "bad_request"),
        ({"v": 1, "op": "act", "instruction": 1, "observation": "o"}, "bad_field"),
        ({"v": 1, "op": "act", "instruction": "i", "observation": "o", "candidates": []}, "bad_field"),
        ({"v": 1, "op": "act", "instruction": "i", "observation": "o", "candidates": "take"}, "bad_field"),
        ({"v": 1, "op": "act", "instruction": "i", "observation": "o", "candidates": [1]}, "bad_field"),
        (
            {
                "v": 1,
                "op": "act",
                "instruction": "i",
                "observation": "o",
                "candidates": ["a"] * (MAX_CANDIDATES + 1),
            },
            "bad_field",
        ),
        ({"v": 1, "op": "act", "instruction": "x" * 10000, "observation": "o"}, "bad_field"),
        ({"v": 1, "op": "reload", "bundle": 5}, "bad_field"),
        ([1, 2, 3], "bad_request"),
        ("act", "bad_request"),
        (None, "bad_request"),
    ],
)
def test_bad_requests_get_stable_codes(msg, code):
    assert code_of(msgpack.packb(msg, use_bin_type=True)) == code


@pytest.mark.parametrize(
    "arr",
    [
        {"dtype": "float64", "shape": [4], "data": b"\0" * 32},
        {"dtype": "object", "shape": [4], "data": b"\0" * 16},
        {"dtype": "float32", "shape": [5], "data": b"\0" * 16},
        {"dtype": "float32", "shape": [-4], "data": b"\0" * 16},
        {"dtype": "float32", "shape": [4, 1], "data": b"\0" * 16},
        {"dtype": "float32", "shape": [4], "data": "text"},
        {"dtype": "float32", "shape": [4], "data": np.array([1, np.nan, 0, 0], "<f4").tobytes()},
        {"dtype": "float32", "shape": [4], "data": np.array([1, np.inf, 0, 0], "<f4").tobytes()},
        {"dtype": "float32", "shape": [4], "data": b"\0" * 16, "pickle": True},
        [0.0, 0.0, 0.0, 0.0],
        b"\0" * 16,
    ],
)
def test_bad_arrays_are_refused(arr):
    assert code_of(pack(_emb_msg(instruction_emb=arr))) == "bad_array"


def test_embedding_shape_mismatches():
    assert code_of(pack(_emb_msg(candidates_emb=encode_array(np.ones((2, 5)))))) == "bad_array"
    assert code_of(pack(_emb_msg(candidates_emb=encode_array(np.ones((0, 4)))))) == "bad_array"
    assert code_of(pack(_emb_msg(candidates=["only one"]))) == "bad_field"
    msg = _emb_msg()
    del msg["observation_emb"]
    assert code_of(pack(msg)) == "bad_request"
    assert code_of(pack(_emb_msg(instruction="text too"))) == "bad_request"


def test_decode_array_zero_d_and_empty():
    with pytest.raises(ProtocolError):
        decode_array({"dtype": "float32", "shape": [], "data": b"\0" * 4}, "x", 1)
    a = decode_array(encode_array(np.zeros((0, 3))), "x", 2)
    assert a.shape == (0, 3)


def test_oversized_payload_and_ext_types_and_trailing_bytes():
    big = pack(act_text("i", "o" * 5000))
    assert code_of(big, max_bytes=1024) == "too_large"
    assert code_of(msgpack.packb(msgpack.ExtType(5, b"xx"))) == "bad_msgpack"
    assert code_of(pack(make_request("health")) + b"\x01") == "bad_msgpack"
    assert code_of(b"") == "bad_msgpack"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_random_bytes_never_crash(data):
    code = code_of(data)
    assert code is None or code in CODES


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.sampled_from(sorted(protocol_vectors.load())))
def test_truncated_msgpack_is_bad_msgpack(cut, name):
    raw = protocol_vectors.load()[name]
    cut = cut % len(raw)
    assert code_of(raw[:cut]) == "bad_msgpack"


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "v",
                "op",
                "id",
                "instruction",
                "observation",
                "candidates",
                "instruction_emb",
                "observation_emb",
                "candidates_emb",
                "bundle",
                "x",
            ]
        ),
        json_like,
        max_size=7,
    )
)
def test_wrong_types_get_error_codes_not_exceptions(msg):
    code = code_of(msgpack.packb(msg, use_bin_type=True))
    assert code is None or code in CODES


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(min_size=0, max_size=30), min_size=1, max_size=10),
    st.text(max_size=50),
    st.text(max_size=50),
    st.one_of(st.none(), st.integers(0, 2**63 - 1), st.text(max_size=20)),
)
def test_valid_text_requests_roundtrip(cands, instr, obs, rid):
    req = parse_request(pack(act_text(instr, obs, cands, req_id=rid)))
    assert (req.instruction, req.observation, req.candidates, req.id) == (instr, obs, cands, rid)
