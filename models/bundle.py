"""The policy bundle: a directory the robot runs, described by a versioned, checksummed ``manifest.json``.

Layout::

    bundle/
      manifest.json     this schema (format "edgejudge.bundle", format_version 3 or 2, or 1 for older
                        bundles)
      policy.onnx       the scorer; its inputs per format are the table in models.inputs.schema (format 2:
                        the state's items and the episode's memory window, read from the state text and the
                        memory through the recorded layout, models.inputs.state, ``state_encoding`` says
                        how many; format 3: those and the token ids of the items and candidates, at most
                        ``tokens`` says how many per text; format 1: one vector of the whole state text)
      encoder.onnx      input_ids, attention_mask, token_type_ids [N,L] int64 -> embeddings [N,D]
                        (mean pooling and L2 normalisation are inside the graph); ``encoder_kind``
                        "transformer" (MiniLM, the default and what older manifests mean) or "static"
                        (a token-vector table distilled from it: docs/encoders.md)
      tokenizer.json    Hugging Face tokenizers file for the encoder
      skills.npy        optional: float32 [S,C] candidate features of a fixed skill list (texts: manifest)

Readers call :func:`load_manifest`, which checks the format version and every file's sha256 and size before
anything is loaded, and raises :class:`BundleError` with the reason. The manifest's ``world`` says which
environment adapter and state format the policy was trained with, so that a client never runs it on state
texts composed another way. Stdlib only: edge/ imports this.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from models.inputs.candidates import DEFAULT_CANDIDATE_FEATURES, parts_of
from models.inputs.schema import input_names, io_dims
from models.inputs.state import StateEncoding, check_kinds
from models.inputs.tokens import CANDIDATE_TOKENS, ITEM_TOKENS
from models.settings import atomic_write
from models.state_layout import StateLayout, layout_of, policy_world, state_format_of

BUNDLE_FORMAT = "edgejudge.bundle"
BUNDLE_FORMAT_VERSION = 2
BUNDLE_FORMAT_VERSIONS = (1, 2, 3)
"""What this edgejudge reads: 3 (structured state, episode memory and token ids), 2 (structured state and
episode memory) and 1 (one state vector)."""
MANIFEST = "manifest.json"

ENCODER_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
ENCODER_OUTPUT = "embeddings"
ENCODER_KINDS = ("transformer", "static")
DEFAULT_ENCODER_KIND = "transformer"


class BundleError(ValueError):
    """A bundle that must not be served: missing files, bad checksums, unknown format, bad manifest."""


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


@dataclass
class Manifest:
    files: dict[str, dict[str, Any]]  # name -> {"sha256": str, "bytes": int}
    embedding_dim: int
    max_length: int
    skills: list[str] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    policy: dict[str, Any] = field(default_factory=dict)  # model hyper-parameters (for information)
    candidate_features: str = DEFAULT_CANDIDATE_FEATURES
    encoder_kind: str = DEFAULT_ENCODER_KIND
    world: dict[str, Any] = field(default_factory=dict)
    """The world the policy was trained in: ``env`` (``ADAPTER:TASK``), ``params``, ``state_format`` and
    ``state_layout`` (:mod:`models.state_layout`); empty in bundles written before it was recorded, which were
    all trained on the ``twx/1`` state format."""
    state_encoding: dict[str, int] = field(default_factory=dict)
    """Format 2: ``max_items``, ``memory`` and ``facts`` (:class:`models.inputs.state.StateEncoding`)."""
    tokens: dict[str, int] = field(default_factory=dict)
    """Format 3: ``item_tokens`` and ``candidate_tokens``, the token ids read per text
    (:mod:`models.inputs.tokens`)."""
    format: str = BUNDLE_FORMAT
    format_version: int = BUNDLE_FORMAT_VERSION

    @property
    def policy_inputs(self) -> tuple[str, ...]:
        return input_names(self.format_version)

    @property
    def encoding(self) -> StateEncoding:
        return StateEncoding.from_dict(self.state_encoding)

    @property
    def token_caps(self) -> tuple[int, int]:
        """Format 3: (tokens read per item, per candidate)."""
        caps = (
            int(self.tokens.get("item_tokens", ITEM_TOKENS)),
            int(self.tokens.get("candidate_tokens", CANDIDATE_TOKENS)),
        )
        if min(caps) < 1:
            raise ValueError(f"token caps must be >= 1, got {self.tokens}")
        return caps

    @property
    def candidate_dim(self) -> int:
        """Per-candidate input size C of policy.onnx."""
        return parts_of(self.candidate_features) * self.embedding_dim

    @property
    def state_format(self) -> str:
        """The state format the policy was trained on ("" for a user's own log that names none)."""
        return state_format_of(policy_world(self.world))

    @property
    def state_layout(self) -> StateLayout:
        """The layout of the state texts the policy was trained on (world keys, named parts)."""
        return layout_of(policy_world(self.world))

    @property
    def model_sha256(self) -> str:
        """Identity of what is served: the policy graph's sha256."""
        return str(self.files["policy.onnx"]["sha256"])

    def _policy_io(self) -> dict[str, dict[str, list[str | int]]]:
        dims = io_dims(self.format_version, self.embedding_dim, self.candidate_dim)
        return {"inputs": {n: dims[n] for n in self.policy_inputs}, "output": {"scores": dims["scores"]}}

    def check_kinds(self) -> None:
        """ValueError when a format-2 policy has fewer item kinds than its recorded layout gives (the
        scorer's ``kinds``, recorded under ``policy``; bundles that record none are not checked)."""
        if self.format_version >= 2 and "kinds" in self.policy:
            check_kinds(self.state_layout, int(self.policy["kinds"]), "bundle")

    def to_dict(self) -> dict[str, Any]:
        out = {
            "format": self.format,
            "format_version": self.format_version,
            "files": self.files,
            "policy_io": self._policy_io(),
            "encoder_io": {
                "inputs": {name: ["texts", "tokens"] for name in ENCODER_INPUTS},
                "output": {ENCODER_OUTPUT: ["texts", self.embedding_dim]},
                "pooling": "mean",
                "normalize": True,
                "kind": self.encoder_kind,
            },
            "encoder_kind": self.encoder_kind,
            "embedding_dim": self.embedding_dim,
            "candidate_features": self.candidate_features,
            "world": self.world,
            "max_length": self.max_length,
            "skills": self.skills,
            "policy": self.policy,
            "provenance": self.provenance,
        }
        if self.format_version >= 2:
            out["state_encoding"] = self.state_encoding
        if self.format_version >= 3:
            out["tokens"] = self.tokens
        return out


REQUIRED_FILES = ("policy.onnx", "encoder.onnx", "tokenizer.json")


def write_manifest(
    bundle_dir: str | os.PathLike[str],
    *,
    embedding_dim: int,
    max_length: int,
    skills: list[str] | None = None,
    provenance: dict[str, Any] | None = None,
    policy: dict[str, Any] | None = None,
    candidate_features: str = DEFAULT_CANDIDATE_FEATURES,
    encoder_kind: str = DEFAULT_ENCODER_KIND,
    world: dict[str, Any] | None = None,
    format_version: int = BUNDLE_FORMAT_VERSION,
    state_encoding: dict[str, int] | None = None,
    tokens: dict[str, int] | None = None,
) -> Manifest:
    """Checksum every file in ``bundle_dir`` (but the manifest) and write the manifest atomically."""
    d = Path(bundle_dir)
    files = {}
    for p in sorted(d.iterdir()):
        if p.is_file() and p.name != MANIFEST and not p.name.startswith("."):
            files[p.name] = {"sha256": sha256_file(p), "bytes": p.stat().st_size}
    missing = [f for f in REQUIRED_FILES if f not in files]
    if missing:
        raise BundleError(f"{d}: cannot write a manifest, missing {', '.join(missing)}")
    if skills and "skills.npy" not in files:
        raise BundleError(f"{d}: a skill list needs skills.npy with its embeddings")
    m = Manifest(
        files=files,
        embedding_dim=embedding_dim,
        max_length=max_length,
        skills=list(skills or []),
        provenance=dict(provenance or {}),
        policy=dict(policy or {}),
        candidate_features=candidate_features,
        encoder_kind=encoder_kind,
        world=dict(world or {}),
        state_encoding=dict(state_encoding or {}) if format_version >= 2 else {},
        tokens=dict(tokens or {}) if format_version >= 3 else {},
        format_version=format_version,
    )
    if format_version not in BUNDLE_FORMAT_VERSIONS:
        raise BundleError(f"unknown bundle format version {format_version}")
    if format_version >= 2:
        m.encoding  # noqa: B018 - ValueError on a bad state encoding, before anything is written
    if format_version >= 3:
        m.token_caps  # noqa: B018 - ValueError on bad token caps, before anything is written
    m.check_kinds()
    parts_of(candidate_features)  # ValueError on an unknown kind, before anything is written
    m.state_layout  # noqa: B018 - ValueError on a malformed layout, before anything is written
    if encoder_kind not in ENCODER_KINDS:
        raise BundleError(f"unknown encoder kind {encoder_kind!r}: expected {', '.join(ENCODER_KINDS)}")
    atomic_write(d / MANIFEST, json.dumps(m.to_dict(), indent=2, sort_keys=True) + "\n")
    return m


def read_format_json(
    path: Path, fmt: str, version: int | tuple[int, ...], error: type[Exception], *, what: str, missing: str
) -> dict[str, Any]:
    """The JSON object at ``path`` (a bundle manifest, a policy checkpoint's ``checkpoint.json``) whose
    ``format`` is ``fmt`` and ``format_version`` is ``version`` (or one of the versions given); else ``error``
    naming the file and what is wrong: ``missing`` when there is no file, or that it is no valid JSON, not an
    edgejudge ``what``, or a version this edgejudge does not read."""
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise error(missing) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise error(f"{path}: not valid JSON ({e})") from None
    if not isinstance(raw, dict) or raw.get("format") != fmt:
        raise error(f"{path}: not an edgejudge {what} (format != {fmt!r})")
    versions = version if isinstance(version, tuple) else (version,)
    got = raw.get("format_version")
    if isinstance(got, bool) or got not in versions:
        raise error(
            f"{path}: format_version {got!r} is not supported "
            f"(this edgejudge reads {', '.join(map(str, versions))})"
        )
    return raw


def load_manifest(bundle_dir: str | os.PathLike[str], *, verify: bool = True) -> Manifest:
    """Read and check a bundle's manifest; with ``verify`` every listed file's size and sha256 too."""
    d = Path(bundle_dir)
    if not d.is_dir():
        raise BundleError(f"{d}: not a bundle directory (does not exist or is not a directory)")
    mpath = d / MANIFEST
    raw = read_format_json(
        mpath,
        BUNDLE_FORMAT,
        BUNDLE_FORMAT_VERSIONS,
        BundleError,
        what="bundle manifest",
        missing=f"{mpath}: missing (export a bundle with 'edgejudge export')",
    )
    try:
        files = raw["files"]
        m = Manifest(
            files={str(k): {"sha256": str(v["sha256"]), "bytes": int(v["bytes"])} for k, v in files.items()},
            embedding_dim=int(raw["embedding_dim"]),
            max_length=int(raw["max_length"]),
            skills=[str(s) for s in raw.get("skills", [])],
            provenance=dict(raw.get("provenance", {})),
            policy=dict(raw.get("policy", {})),
            candidate_features=str(raw.get("candidate_features", DEFAULT_CANDIDATE_FEATURES)),
            encoder_kind=str(raw.get("encoder_kind", DEFAULT_ENCODER_KIND)),
            world=dict(raw.get("world") or {}),
            state_encoding={str(k): int(v) for k, v in (raw.get("state_encoding") or {}).items()},
            tokens={str(k): int(v) for k, v in (raw.get("tokens") or {}).items()},
            format_version=int(raw["format_version"]),
        )
        if m.format_version >= 2:
            m.encoding  # noqa: B018 - ValueError on a bad state encoding
        if m.format_version >= 3:
            m.token_caps  # noqa: B018 - ValueError on bad token caps
        m.check_kinds()
        parts_of(m.candidate_features)
        m.state_layout  # noqa: B018 - ValueError on a malformed recorded layout
        if m.encoder_kind not in ENCODER_KINDS:
            raise ValueError(f"unknown encoder_kind {m.encoder_kind!r} (known: {', '.join(ENCODER_KINDS)})")
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise BundleError(f"{mpath}: malformed manifest ({type(e).__name__}: {e})") from None
    for name in REQUIRED_FILES:
        if name not in m.files:
            raise BundleError(f"{mpath}: files lists no {name}")
    if m.skills and "skills.npy" not in m.files:
        raise BundleError(f"{mpath}: skills listed but no skills.npy")
    if verify:
        for name, meta in m.files.items():
            p = d / name
            if "/" in name or name.startswith("."):
                raise BundleError(f"{mpath}: bad file name {name!r}")
            if not p.is_file():
                raise BundleError(f"{d}: {name} listed in the manifest is missing")
            if p.stat().st_size != meta["bytes"]:
                raise BundleError(f"{d}: {name} has {p.stat().st_size} bytes, manifest says {meta['bytes']}")
            if sha256_file(p) != meta["sha256"]:
                raise BundleError(f"{d}: {name} sha256 does not match the manifest (corrupt or modified)")
    return m
