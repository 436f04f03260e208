"""models.encoder: resolving the embedded MiniLM and user folders, loading it offline."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from models.bundle import sha256_file
from models.encoder import DEFAULT_ENCODER, EncoderError, load_sentence_encoder, resolve_encoder


def test_resolve_embedded_encoder():
    ref = resolve_encoder(DEFAULT_ENCODER)
    assert (ref.path / "modules.json").is_file()
    assert ref.weights.name == "model.safetensors"
    assert ref.sha256 == sha256_file(ref.weights)
    assert ref.embedding_dim == 384
    assert ref.max_length == 256
    assert ref.tokenizer_json.is_file()
    assert resolve_encoder("sentence-transformers/all-MiniLM-L6-v2").sha256 == ref.sha256


def test_resolve_user_folder_and_errors(tmp_path):
    ref = resolve_encoder()
    assert resolve_encoder(ref.path).sha256 == ref.sha256
    with pytest.raises(EncoderError, match="no such folder"):
        resolve_encoder(tmp_path / "missing")
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(EncoderError, match="got a file"):
        resolve_encoder(tmp_path / "f.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EncoderError, match="no config.json"):
        resolve_encoder(empty)
    shutil.copy(ref.path / "config.json", empty / "config.json")
    with pytest.raises(EncoderError, match="no weights file"):
        resolve_encoder(empty)


def test_import_is_stdlib_only():
    code = (
        "import sys, models.encoder; "
        "bad = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.real
def test_load_real_encoder_offline():
    model = load_sentence_encoder()
    emb = model.encode(["take the apple", "open the fridge"], convert_to_numpy=True)
    assert emb.shape == (2, 384)
    norms = (emb**2).sum(axis=1)
    assert abs(norms[0] - 1.0) < 1e-4 and abs(norms[1] - 1.0) < 1e-4
