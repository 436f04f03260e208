"""The wire protocol between edge-serve and its clients: msgpack maps, one per ZeroMQ message.

Used by both ends (the daemon and :mod:`edge.client`); the C++ client in ``edge/cpp`` speaks the same bytes,
checked against the shared vectors in ``edge/protocol_vectors/``.

Request (a msgpack map)::

    {"v": 1, "op": "act", "id": 7,                       # "id" optional (int or str), echoed in the reply
     "instruction": "...", "observation": "...",           # text input ...
     "candidates": ["take apple", "look around"],          # ... omitted when the bundle has a skill list
     "memory": [["open fridge", "..."], ...]}              # optional: the episode so far (see below)
    {"v": 1, "op": "act", "id": 8,                         # embedding input: float32 arrays
     "instruction_emb": ARRAY[D], "observation_emb": ARRAY[D], "candidates_emb": ARRAY[K, C],
     "candidates": [...]}                                  # optional texts, to get the chosen action back
    {"v": 1, "op": "info"} / {"v": 1, "op": "health"} / {"v": 1, "op": "reload", "bundle": "/path"}

``C`` is the bundle's candidate feature size (``info`` reports it as ``candidate_dim``, and the kind as
``candidate_features``): ``D`` for ``action``, ``3D`` for ``action+arguments`` (action, object and target
embeddings side by side, zeros for an absent argument; :mod:`models.inputs.candidates` builds them from the
candidate texts alone).

``memory`` is the episode so far, oldest first: one ``[action, observation]`` pair per earlier step, the
action taken and the observation (state text) it led to, so the last pair's observation is this request's.
The daemon is stateless: the client keeps an episode's memory and sends it with every request (at most
:data:`MAX_MEMORY` pairs; a bundle reads its last ``memory`` of them and nothing older, see ``info``, so a
client needs to keep no more). Bundles of format 2 and 3
(structured, memoryful policies) use it; format-1 bundles ignore it. Text input only.

An ARRAY is ``{"dtype": "float32", "shape": [..], "data": <raw little-endian bytes>}``; only float32 is
accepted (object dtypes and pickle are never read). Replies carry ``"v"``, ``"ok"``, the echoed ``"id"``; an
``act`` reply carries ``"index"``, ``"action"`` (None for embedding input without texts),
``"scores"`` (a list of floats), ``"timing"`` (server-side milliseconds) and ``"model"`` (the policy's
sha256). An error reply carries ``"ok": false``, a stable ``"code"`` (see :class:`Code`) and a one-line
``"message"``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

import msgpack

if TYPE_CHECKING:  # numpy is imported where arrays are made or read: a text-only client never loads it
    import numpy as np

PROTOCOL_VERSION = 1
OPS = ("act", "info", "health", "reload")
DEFAULT_MAX_MESSAGE_BYTES = 1 << 20  # 1 MiB
MAX_CANDIDATES = 256
MAX_TEXT_CHARS = 8192
MAX_ID_CHARS = 128
MAX_MEMORY = 512
ARRAY_KEYS = ("dtype", "shape", "data")
_ARRAY_KEYSET = frozenset(ARRAY_KEYS)
_F32 = "<f4"
"""Little-endian float32, the one dtype on the wire."""


class Code(str, Enum):
    """Stable error codes: clients branch on these, never on the message text."""

    BAD_MSGPACK = "bad_msgpack"  # the payload is not one complete msgpack value
    BAD_FRAMES = "bad_frames"  # the ZeroMQ message has the wrong number of parts
    TOO_LARGE = "too_large"  # the payload exceeds the server's maximum message size
    BAD_REQUEST = "bad_request"  # not a map, or missing/unknown keys
    BAD_VERSION = "bad_version"  # "v" is not a version this server speaks
    UNKNOWN_OP = "unknown_op"  # "op" is not one of OPS
    BAD_FIELD = "bad_field"  # a field has the wrong type or value
    BAD_ARRAY = "bad_array"  # an array's dtype/shape/data do not agree, or it holds NaN/inf
    NO_SKILLS = "no_skills"  # candidates omitted but the bundle has no skill list
    FORBIDDEN = "forbidden"  # the op is disabled on this server
    BUSY = "busy"  # a reload is already running
    RELOAD_FAILED = "reload_failed"  # the new bundle was refused; the old model keeps serving
    INTERNAL = "internal"  # a server-side failure (logged); the daemon keeps serving


class ProtocolError(ValueError):
    """A request that gets an error reply with ``code``; ``req_id`` is echoed when it could be read."""

    def __init__(self, code: Code, message: str, req_id: int | str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.req_id = req_id


# ------------------------------------------------------------------------------------------------ arrays


def encode_array(arr: Any) -> dict[str, Any]:
    """A float32 array as a msgpack-ready map (little-endian raw bytes)."""
    import numpy as np

    a = np.ascontiguousarray(np.asarray(arr, dtype="<f4"))
    return {"dtype": "float32", "shape": list(a.shape), "data": a.tobytes()}


def _bad_array(name: str, msg: str, req_id: int | str | None) -> ProtocolError:
    return ProtocolError(Code.BAD_ARRAY, f"{name}: {msg}", req_id)


def decode_array(obj: Any, name: str, ndim: int, req_id: int | str | None = None) -> np.ndarray:
    """Read an ARRAY map; refuses any dtype but float32, inconsistent sizes and non-finite values."""
    import numpy as np

    if not isinstance(obj, dict):
        raise _bad_array(
            name, f"expected a map with {', '.join(ARRAY_KEYS)}, got {type(obj).__name__}", req_id
        )
    if obj.keys() != _ARRAY_KEYSET:  # one set comparison: exactly dtype, shape, data
        raise _bad_array(
            name, f"expected exactly the keys {', '.join(ARRAY_KEYS)}, got {sorted(map(str, obj))}", req_id
        )
    if obj["dtype"] not in ("float32", "<f4"):
        raise _bad_array(name, f"dtype {obj['dtype']!r} is not accepted (only float32)", req_id)
    shape = obj["shape"]
    n = 1
    if type(shape) is list and len(shape) == ndim:
        for s in shape:
            if type(s) is not int or not 0 <= s < (1 << 20):  # type() is int: bool and subclasses refused
                n = -1
                break
            n *= s
    else:
        n = -1
    if n < 0:
        raise _bad_array(name, f"shape must be a list of {ndim} non-negative integers, got {shape!r}", req_id)
    data = obj["data"]
    if not isinstance(data, bytes):
        raise _bad_array(name, f"data must be bytes (msgpack bin), got {type(data).__name__}", req_id)
    if len(data) != 4 * n:
        raise _bad_array(name, f"shape {shape} needs {4 * n} bytes, got {len(data)}", req_id)
    flat = np.frombuffer(data, dtype=_F32)
    # One dot product is finite exactly when no element is NaN/inf (or absurdly large, |x| > 1e19): the
    # cheapest full check numpy offers (no temporary array).
    if not math.isfinite(float(np.dot(flat, flat))):
        raise _bad_array(name, "holds NaN or infinity (or values beyond 1e19)", req_id)
    a = flat if ndim == 1 else flat.reshape(shape)
    return a


# ------------------------------------------------------------------------------------------------ requests


@dataclass
class Request:
    op: str
    id: int | str | None = None
    instruction: str | None = None
    observation: str | None = None
    candidates: list[str] | None = None
    instruction_emb: np.ndarray | None = None
    observation_emb: np.ndarray | None = None
    candidates_emb: np.ndarray | None = None
    memory: list[tuple[str, str]] | None = None
    bundle: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_embedding(self) -> bool:
        return self.instruction_emb is not None


_ALLOWED = {
    "act": {
        "instruction",
        "observation",
        "candidates",
        "instruction_emb",
        "observation_emb",
        "candidates_emb",
        "memory",
    },
    "info": set(),
    "health": set(),
    "reload": {"bundle"},
}
_COMMON = {"v", "op", "id"}
_KNOWN = {op: frozenset(_COMMON | keys) for op, keys in _ALLOWED.items()}
_EMB_KEYS = frozenset(("instruction_emb", "observation_emb", "candidates_emb"))
_TEXT_KEYS = frozenset(("instruction", "observation"))


def _unpack(payload: bytes, max_bytes: int) -> Any:
    if len(payload) > max_bytes:
        raise ProtocolError(
            Code.TOO_LARGE, f"payload of {len(payload)} bytes exceeds the limit of {max_bytes}"
        )
    try:
        return msgpack.unpackb(
            payload,
            raw=False,
            strict_map_key=True,
            use_list=True,
            ext_hook=_refuse_ext,
            timestamp=0,
            max_str_len=max_bytes,
            max_bin_len=max_bytes,
            max_array_len=1 << 16,
            max_map_len=64,
            max_ext_len=0,
        )
    except ProtocolError:
        raise
    except (
        ValueError,
        TypeError,
        msgpack.ExtraData,
        msgpack.FormatError,
        msgpack.StackError,
        RecursionError,
    ) as e:
        raise ProtocolError(Code.BAD_MSGPACK, f"not one valid msgpack value ({type(e).__name__})") from None


def _refuse_ext(code: int, data: bytes) -> Any:
    raise ProtocolError(Code.BAD_MSGPACK, f"msgpack extension type {code} is not accepted")


def _text(value: Any, name: str, req_id: Any) -> str:
    if not isinstance(value, str):
        raise ProtocolError(Code.BAD_FIELD, f"{name} must be a string, got {type(value).__name__}", req_id)
    if len(value) > MAX_TEXT_CHARS:
        raise ProtocolError(Code.BAD_FIELD, f"{name} is longer than {MAX_TEXT_CHARS} characters", req_id)
    return value


def parse_request(payload: bytes, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> Request:
    """Decode and validate one request; raises :class:`ProtocolError` with a stable code."""
    obj = _unpack(payload, max_bytes)
    if not isinstance(obj, dict):
        raise ProtocolError(Code.BAD_REQUEST, f"a request is a msgpack map, got {type(obj).__name__}")
    req_id = obj.get("id")
    if req_id is not None and not (
        (isinstance(req_id, int) and not isinstance(req_id, bool) and -(1 << 63) <= req_id < (1 << 64))
        or (isinstance(req_id, str) and len(req_id) <= MAX_ID_CHARS)
    ):
        raise ProtocolError(
            Code.BAD_FIELD, f"id must be an integer or a string of <= {MAX_ID_CHARS} characters"
        )
    if "v" not in obj:
        raise ProtocolError(
            Code.BAD_VERSION, f"missing protocol version 'v' (this server speaks {PROTOCOL_VERSION})", req_id
        )
    if obj["v"] != PROTOCOL_VERSION or isinstance(obj["v"], bool):
        raise ProtocolError(
            Code.BAD_VERSION,
            f"protocol version {obj['v']!r} not supported (this server speaks {PROTOCOL_VERSION})",
            req_id,
        )
    op = obj.get("op")
    if not isinstance(op, str) or op not in OPS:
        raise ProtocolError(Code.UNKNOWN_OP, f"unknown op {op!r}: expected one of {', '.join(OPS)}", req_id)
    unknown = obj.keys() - _KNOWN[op]
    if unknown:
        raise ProtocolError(
            Code.BAD_REQUEST, f"unknown keys for op {op!r}: {', '.join(sorted(map(str, unknown)))}", req_id
        )
    req = Request(op=op, id=req_id)
    if op == "reload":
        if obj.get("bundle") is not None:
            req.bundle = _text(obj["bundle"], "bundle", req_id)
        return req
    if op != "act":
        return req
    cands = obj.get("candidates")
    if cands is not None:
        if not isinstance(cands, list) or not cands:
            raise ProtocolError(Code.BAD_FIELD, "candidates must be a non-empty list of strings", req_id)
        if len(cands) > MAX_CANDIDATES:
            raise ProtocolError(Code.BAD_FIELD, f"more than {MAX_CANDIDATES} candidates", req_id)
        req.candidates = [_text(c, "candidates[]", req_id) for c in cands]
    emb_keys = _EMB_KEYS & obj.keys()
    text_keys = _TEXT_KEYS & obj.keys()
    if emb_keys and text_keys:
        raise ProtocolError(
            Code.BAD_REQUEST,
            "send either text (instruction, observation) or embeddings "
            "(instruction_emb, observation_emb, candidates_emb), not both",
            req_id,
        )
    if emb_keys:
        if "memory" in obj:
            raise ProtocolError(
                Code.BAD_REQUEST, "memory is text input: send it with text, not embeddings", req_id
            )
        if len(emb_keys) != 3:
            missing = {"instruction_emb", "observation_emb", "candidates_emb"} - emb_keys
            raise ProtocolError(
                Code.BAD_REQUEST, f"embedding input misses {', '.join(sorted(missing))}", req_id
            )
        req.instruction_emb = decode_array(obj["instruction_emb"], "instruction_emb", 1, req_id)
        req.observation_emb = decode_array(obj["observation_emb"], "observation_emb", 1, req_id)
        req.candidates_emb = decode_array(obj["candidates_emb"], "candidates_emb", 2, req_id)
        d = req.instruction_emb.shape[0]
        # A candidate row is P embeddings side by side (P = 1, or 3 for action+object+target features).
        if req.observation_emb.shape[0] != d or d == 0 or req.candidates_emb.shape[1] % d:
            raise ProtocolError(
                Code.BAD_ARRAY,
                "instruction_emb and observation_emb must share the embedding dimension D, and candidates_emb"
                " rows must be a multiple of D",
                req_id,
            )
        k = req.candidates_emb.shape[0]
        if not 1 <= k <= MAX_CANDIDATES:
            raise ProtocolError(
                Code.BAD_ARRAY, f"candidates_emb needs 1..{MAX_CANDIDATES} rows, got {k}", req_id
            )
        if req.candidates is not None and len(req.candidates) != k:
            raise ProtocolError(
                Code.BAD_FIELD, f"{len(req.candidates)} candidate texts for {k} embeddings", req_id
            )
        return req
    for key in ("instruction", "observation"):
        if key not in obj:
            raise ProtocolError(
                Code.BAD_REQUEST, f"act needs {key!r} (text) or the three *_emb arrays", req_id
            )
    req.instruction = _text(obj["instruction"], "instruction", req_id)
    req.observation = _text(obj["observation"], "observation", req_id)
    if obj.get("memory") is not None:
        req.memory = _memory(obj["memory"], req_id)
    return req


def _memory(value: Any, req_id: Any) -> list[tuple[str, str]]:
    if not isinstance(value, list):
        raise ProtocolError(
            Code.BAD_FIELD,
            f"memory must be a list of [action, observation] pairs, got {type(value).__name__}",
            req_id,
        )
    if len(value) > MAX_MEMORY:
        raise ProtocolError(Code.BAD_FIELD, f"memory holds more than {MAX_MEMORY} steps", req_id)
    out = []
    for pair in value:
        if not isinstance(pair, list) or len(pair) != 2:
            raise ProtocolError(Code.BAD_FIELD, "memory entries must be [action, observation] pairs", req_id)
        out.append((_text(pair[0], "memory[][0]", req_id), _text(pair[1], "memory[][1]", req_id)))
    return out


# ------------------------------------------------------------------------------------------------ encoding


_packers = threading.local()


def pack(obj: dict[str, Any]) -> bytes:
    """msgpack with str/bin kept apart (use_bin_type) and floats as float64. One Packer per thread is reused
    (``packb`` builds a new one per call: a third of the cost of a small reply)."""
    packer = getattr(_packers, "packer", None)
    if packer is None:
        packer = _packers.packer = msgpack.Packer(use_bin_type=True, autoreset=True)
    try:
        return packer.pack(obj)
    except BaseException:
        _packers.packer = None  # a failed pack may leave partial state behind: start clean next time
        raise


def unpack_reply(payload: bytes, max_bytes: int = 64 << 20) -> dict[str, Any]:
    """Decode a reply on the client side; raises :class:`ProtocolError` on garbage."""
    obj = _unpack(payload, max_bytes)
    if not isinstance(obj, dict) or "ok" not in obj:
        raise ProtocolError(Code.BAD_REQUEST, "a reply is a msgpack map with 'ok'")
    return obj


def make_request(op: str, req_id: int | str | None = None, **fields: Any) -> dict[str, Any]:
    """A request map in the canonical key order (v, op, id, then fields in the given order)."""
    msg: dict[str, Any] = {"v": PROTOCOL_VERSION, "op": op}
    if req_id is not None:
        msg["id"] = req_id
    for k, v in fields.items():
        if v is not None:
            msg[k] = v
    return msg


def act_text(
    instruction: str,
    observation: str,
    candidates: list[str] | None = None,
    req_id: int | str | None = None,
    memory: Sequence[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """A text ``act`` request; ``memory`` (the episode's earlier ``(action, observation)`` pairs, oldest
    first) is sent only when non-empty."""
    return make_request(
        "act",
        req_id,
        instruction=instruction,
        observation=observation,
        candidates=list(candidates) if candidates is not None else None,
        memory=[[a, o] for a, o in memory] if memory else None,
    )


def act_embeddings(
    instruction_emb: Any,
    observation_emb: Any,
    candidates_emb: Any,
    candidates: list[str] | None = None,
    req_id: int | str | None = None,
) -> dict[str, Any]:
    return make_request(
        "act",
        req_id,
        instruction_emb=encode_array(instruction_emb),
        observation_emb=encode_array(observation_emb),
        candidates_emb=encode_array(candidates_emb),
        candidates=list(candidates) if candidates is not None else None,
    )


def ok_reply(req_id: int | str | None, **fields: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"v": PROTOCOL_VERSION, "ok": True, "id": req_id}
    msg.update(fields)
    return msg


def error_reply(code: Code, message: str, req_id: int | str | None = None) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "ok": False, "id": req_id, "code": code.value, "message": message}
