"""A small, stdlib-only GGUF header reader: magic, version, metadata, tensor table, expected file size.

It is used to reject files that are not GGUF, or that are cut short, with a clear message *before* llama.cpp
tries to load them (llama.cpp's own message for a truncated file is a bare "failed to load model"), and to
read metadata such as ``tokenizer.chat_template`` without loading the model.

Format (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md): ``b"GGUF"``, uint32 version, uint64 tensor
count, uint64 metadata count (uint32 counts in version 1), metadata key/value pairs, tensor infos (name, dims,
ggml type, offset into the data section), padding to ``general.alignment`` (default 32), then tensor data.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from typing import Any, BinaryIO

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32

# ggml type id -> (elements per block, bytes per block). Unknown types are skipped in the size check.
GGML_TYPE_SIZES: dict[int, tuple[int, int]] = {
    0: (1, 4),
    1: (1, 2),
    2: (32, 18),
    3: (32, 20),
    6: (32, 22),
    7: (32, 24),
    8: (32, 34),
    9: (32, 36),
    10: (256, 84),
    11: (256, 110),
    12: (256, 144),
    13: (256, 176),
    14: (256, 210),
    15: (256, 292),
    16: (256, 66),
    17: (256, 74),
    18: (256, 98),
    19: (256, 50),
    20: (32, 18),
    21: (256, 110),
    22: (256, 82),
    23: (256, 136),
    24: (1, 1),
    25: (1, 2),
    26: (1, 4),
    27: (1, 8),
    28: (1, 8),
    29: (256, 56),
    30: (1, 2),
    34: (256, 54),
    35: (256, 66),
    39: (32, 17),
}

# metadata value type id -> struct format (scalars)
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    """Not a GGUF file, or a GGUF file that is cut short or malformed."""


@dataclass
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int

    def nbytes(self) -> int | None:
        if self.ggml_type not in GGML_TYPE_SIZES:
            return None
        block, size = GGML_TYPE_SIZES[self.ggml_type]
        n = 1
        for d in self.shape:
            n *= d
        return (n + block - 1) // block * size


@dataclass
class GGUFInfo:
    path: str
    version: int
    file_size: int
    metadata: dict[str, Any] = field(default_factory=dict)  # scalars and strings; arrays as {"array_len": n}
    tensors: list[TensorInfo] = field(default_factory=list)
    data_offset: int = 0
    expected_size: int = 0  # data_offset + end of the last tensor (known types only)

    @property
    def architecture(self) -> str | None:
        v = self.metadata.get("general.architecture")
        return v if isinstance(v, str) else None

    @property
    def chat_template(self) -> str | None:
        v = self.metadata.get("tokenizer.chat_template")
        return v if isinstance(v, str) and v.strip() else None


class _Reader:
    def __init__(self, f: BinaryIO, path: str, size: int):
        self.f = f
        self.path = path
        self.size = size

    def read(self, n: int) -> bytes:
        b = self.f.read(n)
        if len(b) != n:
            raise GGUFError(
                f"{self.path}: truncated GGUF file (header ends early at byte {self.f.tell()} "
                f"of {self.size}; the download or copy is incomplete)"
            )
        return b

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def _fits(self, nbytes: int, what: str) -> None:
        left = self.size - self.f.tell()
        if nbytes > left:
            raise GGUFError(
                f"{self.path}: truncated or corrupt GGUF file ({what} needs {nbytes} bytes, {left} left; "
                "the download or copy may be incomplete)"
            )

    def string(self) -> str:
        n = self.unpack("<Q")
        self._fits(n, "a header string")
        return self.read(n).decode("utf-8", errors="replace")

    def value(self, vtype: int, keep: bool) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            etype = self.unpack("<I")
            n = self.unpack("<Q")
            self._fits(n * (struct.calcsize(_SCALARS[etype]) if etype in _SCALARS else 8), f"an array of {n}")
            if etype in _SCALARS:
                self.read(struct.calcsize(_SCALARS[etype]) * n)
            else:
                for _ in range(n):
                    self.value(etype, False)
            return {"array_len": n}
        raise GGUFError(f"{self.path}: malformed GGUF header (unknown metadata value type {vtype})")


def read_gguf(path: str | os.PathLike[str]) -> GGUFInfo:
    """Read and check a GGUF file's header; raise :class:`GGUFError` with the reason when it is not usable.

    Checks: the magic bytes, a known version (1-3), a complete header, and a file at least as long as its own
    tensor table says (a truncated copy fails here, not inside llama.cpp).
    """
    p = str(path)
    size = os.path.getsize(p)
    with open(p, "rb") as raw:
        f = _Reader(raw, p, size)  # type: ignore[arg-type]
        magic = raw.read(4)
        if magic != GGUF_MAGIC:
            what = "an empty file" if not magic else f"starts with {magic!r}"
            raise GGUFError(f"{p}: not a GGUF model file ({what}, expected the magic bytes b'GGUF')")
        version = f.unpack("<I")
        if version not in (1, 2, 3):
            raise GGUFError(f"{p}: unsupported GGUF version {version} (expected 1, 2 or 3)")
        count = "<I" if version == 1 else "<Q"
        n_tensors = f.unpack(count)
        n_kv = f.unpack(count)
        if n_tensors > size or n_kv > size:
            raise GGUFError(f"{p}: malformed GGUF header (counts {n_tensors}/{n_kv} exceed the file size)")
        meta: dict[str, Any] = {}
        for _ in range(n_kv):
            key = f.string()
            meta[key] = f.value(f.unpack("<I"), True)
        tensors = []
        for _ in range(n_tensors):
            name = f.string()
            ndim = f.unpack("<I")
            if ndim > 8:
                raise GGUFError(f"{p}: malformed GGUF header (tensor {name!r} has {ndim} dimensions)")
            shape = tuple(f.unpack("<Q") for _ in range(ndim))
            tensors.append(TensorInfo(name, shape, f.unpack("<I"), f.unpack("<Q")))
        align = meta.get("general.alignment", DEFAULT_ALIGNMENT)
        align = align if isinstance(align, int) and align > 0 else DEFAULT_ALIGNMENT
        pos = raw.tell()
        data_offset = (pos + align - 1) // align * align
    end = data_offset
    for t in tensors:
        nb = t.nbytes()
        end = max(end, data_offset + t.offset + (nb or 0))
    info = GGUFInfo(p, version, size, meta, tensors, data_offset, end)
    if size < end:
        raise GGUFError(
            f"{p}: truncated GGUF file ({size} bytes, its tensor table needs {end}; "
            "the download or copy is incomplete)"
        )
    return info
