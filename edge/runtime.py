"""The policy runtime: a bundle's encoder and scorer in onnxruntime, with a bounded embedding cache.

Format-2 bundles score a structured state with the episode memory (:mod:`models.inputs.arrays`): the state
text is read as items through the bundle's recorded layout, the memory as (action, response) steps, and
every such text goes through the cache (most of them repeat from one step to the next). Format-3 bundles read
the same and the token ids of the items and candidates (:mod:`models.inputs.tokens`, cached per text).
Format-1 bundles score one vector of the whole state text, as they always did, and ignore the memory.

:class:`Runtime` loads a bundle after :func:`models.bundle.load_manifest` has checked its checksums, runs one
test inference (:meth:`Runtime.self_test`), and scores batches of requests in one policy call. Texts become
embeddings through :class:`edge.text_encoder.TextEncoder`. It is the one bundle runner: edge-serve, and
in-process through :class:`edge.bundle_policy.BundlePolicy` (``edgejudge eval BUNDLE``, the benchmarks).
No torch, no LLM.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edge.text_encoder import TextEncoder, ort_session
from models.bundle import BundleError, load_manifest
from models.inputs.arrays import StateArrays
from models.inputs.candidates import assemble, candidate_texts
from models.inputs.formats import input_format
from models.inputs.schema import POLICY_OUTPUT
from models.inputs.state import Memory
from models.inputs.tokens import TokenIds


@dataclass(frozen=True)
class RuntimeConfig:
    threads: int = 1
    """onnxruntime intra-op threads per session (1 keeps a robot's other processes on their cores)."""
    spinning: bool = False
    """Let onnxruntime's worker threads spin while idle (lower latency, burns CPU); off by default."""
    cache_size: int = 4096
    """Embeddings of candidate, skill, instruction and (formats 2 and 3) state item and memory texts kept
    (LRU); 0 disables the cache."""
    encode_chunk: int = 64
    """Most texts per encoder call (bounds padding waste and memory)."""


class LRU:
    """A bounded least-recently-used map from text to embedding; thread-safe."""

    def __init__(self, capacity: int):
        self.capacity = max(0, int(capacity))
        self._d: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> np.ndarray | None:
        with self._lock:
            v = self._d.get(key)
            if v is None:
                self.misses += 1
                return None
            self._d.move_to_end(key)
            self.hits += 1
            return v

    def put(self, key: str, value: np.ndarray) -> None:
        if self.capacity == 0:
            return
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.capacity:
                self._d.popitem(last=False)

    def __len__(self) -> int:
        return len(self._d)


@dataclass
class Item:
    """One act request ready to score: embeddings, candidate texts (may be None), and the candidate count."""

    instruction: np.ndarray  # [D]
    state: np.ndarray | StateArrays  # format 1: [D]; formats 2, 3: the state's items and memory window
    candidates: np.ndarray  # [K, C]
    texts: list[str] | None
    candidate_texts: list[str] | None = None
    """The candidates' texts (format 3 reads their tokens; the skills' when ``texts`` is None)."""


@dataclass(frozen=True)
class TextRequest:
    """One text ``act`` request: what the runtime reads of it."""

    instruction: str
    observation: str
    candidates: list[str] | None
    """The candidate actions; None: the bundle's skill list."""
    memory: Memory = ()
    """The episode so far (read by format-2 and 3 bundles: only its last ``encoding.horizon`` pairs)."""


class Runtime:
    """A loaded, checked bundle. Build with :meth:`load`; :meth:`close` drops the inference sessions.

    edge-serve's workers call :meth:`items_from_text` and :meth:`score` from several threads at once: the
    onnxruntime sessions run concurrently (and outside the GIL), so no lock is held around a run. What a
    request mutates is a cache: the embedding LRU keeps its order and counts under its own lock; the
    token-id caches (:class:`models.inputs.tokens.TokenIds`, the encoder's chunk cache) and the all-true
    masks change by single dict operations, atomic under the GIL. A race costs at most a text encoded or
    tokenized twice, never a wrong entry. :meth:`close` only once no thread uses the runtime (the daemon
    swaps between batches)."""

    def __init__(self, bundle_dir: str | os.PathLike[str], cfg: RuntimeConfig | None = None):

        self.cfg = cfg or RuntimeConfig()
        self.bundle_dir = Path(bundle_dir).resolve()
        self.manifest = load_manifest(self.bundle_dir, verify=True)
        self.dim = self.manifest.embedding_dim
        self.cand_dim = self.manifest.candidate_dim
        try:
            self.policy = ort_session(self.bundle_dir / "policy.onnx", self.cfg)
        except Exception as e:  # onnxruntime raises its own exception types
            raise BundleError(f"{self.bundle_dir}: onnxruntime cannot load the graphs ({e})") from None
        self.format_version = self.manifest.format_version
        self.structured = self.format_version >= 2
        self.layout = self.manifest.state_layout
        self.encoding = self.manifest.encoding if self.structured else None
        caps = self.manifest.token_caps if self.format_version >= 3 else None
        self.inputs = input_format(
            self.format_version,
            dim=self.dim,
            layout=self.layout,
            encoding=self.encoding,
            token_ids=TokenIds(self.bundle_dir / "tokenizer.json", max(caps)) if caps else None,
            caps=caps,
        )
        pin = {i.name for i in self.policy.get_inputs()}
        expected = set(self.manifest.policy_inputs)
        if expected - pin:
            raise BundleError(f"{self.bundle_dir}: policy.onnx lacks inputs {sorted(expected - pin)}")
        # An int8 encoder (policy.encoders.int8) quantises activations per tensor: padding rows would shift
        # the scales of the real tokens, so its texts are only batched with texts of the same length. A
        # static encoder's runs cost microseconds: equal lengths only keep its sums independent of batching.
        self.encoder_kind = self.manifest.encoder_kind
        precision = self.manifest.provenance.get("encoder_precision", "fp32")
        self.portability_warning: str | None = None
        if precision == "int8" and self.manifest.provenance.get("encoder_integer_kernels") != "u8u8":
            # Bundles exported before the U8U8 recipe: x86 CPUs without VNNI saturate their int8 products.
            self.portability_warning = (
                "int8 encoder with signed int8 weights: on x86 CPUs without VNNI its embeddings differ from "
                "the exporting machine's (saturating products); re-export it with this version"
            )
        self.text_encoder = TextEncoder(
            self.bundle_dir / "encoder.onnx",
            self.bundle_dir / "tokenizer.json",
            dim=self.dim,
            max_length=self.manifest.max_length,
            allow_padding=precision == "fp32" and self.encoder_kind == "transformer",
            max_group=self.cfg.encode_chunk,
            session=self.cfg,
        )
        self.tokenizer = self.text_encoder.tokenizer
        self.cache = LRU(self.cfg.cache_size)
        self._ones: dict[int, np.ndarray] = {}
        self.skills = list(self.manifest.skills)
        self.skill_embs: np.ndarray | None = None
        if self.skills:
            try:
                arr = np.load(self.bundle_dir / "skills.npy", allow_pickle=False)
            except (ValueError, OSError) as e:
                raise BundleError(f"{self.bundle_dir}: skills.npy cannot be read ({e})") from None
            if arr.dtype != np.float32 or arr.shape != (len(self.skills), self.cand_dim):
                raise BundleError(
                    f"{self.bundle_dir}: skills.npy is {arr.dtype}{list(arr.shape)}, expected "
                    f"float32[{len(self.skills)}, {self.cand_dim}]"
                )
            self.skill_embs = np.ascontiguousarray(arr)

    @property
    def model_sha256(self) -> str:
        return self.manifest.model_sha256

    def info(self) -> dict[str, Any]:
        return {
            "model": self.model_sha256,
            "bundle": str(self.bundle_dir),
            "embedding_dim": self.dim,
            "candidate_dim": self.cand_dim,
            "encoder_kind": self.encoder_kind,
            "candidate_features": self.manifest.candidate_features,
            "bundle_format": self.format_version,
            "horizon": self.encoding.horizon if self.encoding else 0,
            "memory": self.encoding.horizon if self.encoding else 0,  # the old name of horizon, one release
            "max_length": self.manifest.max_length,
            "skills": self.skills,
            "provenance": self.manifest.provenance,
            "world": self.manifest.world,
            "threads": self.cfg.threads,
            "spinning": self.cfg.spinning,
            "cache": {
                "size": len(self.cache),
                "capacity": self.cache.capacity,
                "hits": self.cache.hits,
                "misses": self.cache.misses,
            },
        }

    # ------------------------------------------------------------------------------------------------ encoder

    def _encode_uncached(self, texts: list[str]) -> np.ndarray:
        return self.text_encoder.encode(texts)

    def encode(self, texts: list[str], *, cache: bool = True) -> np.ndarray:
        """Embeddings [N, D] of ``texts``; cached texts skip the encoder, the rest go in batched calls."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        for i, t in enumerate(texts):
            hit = self.cache.get(t) if cache else None
            if hit is None:
                todo.setdefault(t, []).append(i)
            else:
                out[i] = hit
        if todo:
            uniq = list(todo)
            embs = self._encode_uncached(uniq)
            for t, e in zip(uniq, embs, strict=False):
                for i in todo[t]:
                    out[i] = e
                if cache:
                    self.cache.put(t, e.copy())
        return out

    # ------------------------------------------------------------------------------------------------ scoring

    def items_from_text(self, reqs: list[TextRequest]) -> list[Item]:
        """Encode the texts of several requests together (one encoder pass for everything not cached).

        Instructions and candidates (their texts per ``models.inputs.candidates``) go through the cache; so do
        a format-2 bundle's state items and memory texts (of the memory window only: older pairs cost
        nothing). A format-1 bundle's observation (one whole text, new every step) does not, and the memory is
        not read."""
        kind = self.manifest.candidate_features
        cached: list[str] = []
        uncached: list[str] = []
        cand_texts: list[list[str] | None] = []
        prepared: list[Any] = []
        for req in reqs:
            cached.append(req.instruction)
            part_texts = None if req.candidates is None else candidate_texts(kind, req.candidates)
            cand_texts.append(part_texts)
            cached.extend(t for t in part_texts or () if t)
            prep = self.inputs.prepare(req.observation, req.memory)
            c, u = self.inputs.texts(prep)
            prepared.append((prep, len(c), len(u)))
            cached.extend(c)
            uncached.extend(u)
        cached_embs = self.encode(cached, cache=True)
        uncached_embs = self.encode(uncached, cache=False) if uncached else cached_embs[:0]
        items, pos, upos = [], 0, 0
        for req, part_texts, prepared_state in zip(reqs, cand_texts, prepared, strict=True):
            instr = cached_embs[pos]
            pos += 1
            if part_texts is None:
                assert self.skill_embs is not None
                c_embs, texts = self.skill_embs, self.skills
            else:
                texts = req.candidates
                n_present = sum(1 for t in part_texts if t)
                c_embs = assemble(
                    part_texts, cached_embs[pos : pos + n_present], self.cand_dim // self.dim, self.dim
                )
                pos += n_present
            prep, nc, nu = prepared_state
            state = self.inputs.build(prep, cached_embs[pos : pos + nc], uncached_embs[upos : upos + nu])
            pos, upos = pos + nc, upos + nu
            items.append(Item(instr, state, c_embs, texts, list(texts)))
        return items

    def score(self, items: list[Item]) -> list[np.ndarray]:
        """One policy call for all items (candidates padded and masked); returns each item's scores [K_i]."""
        if not items:
            return []
        states = [it.state for it in items]
        if self.structured != all(isinstance(st, StateArrays) for st in states):
            raise BundleError(
                f"{self.bundle_dir}: a format-{self.format_version} bundle scores "
                + ("structured states (send text)" if self.structured else "one state vector per request")
            )
        cands, mask = self._pad_candidates(items)
        feeds = {
            "instruction": np.stack([it.instruction for it in items]).astype(np.float32, copy=False),
            **self.inputs.feeds(states),
            "candidates": cands,
            "mask": mask,
            **self.inputs.candidate_feeds([it.candidate_texts or [] for it in items], cands.shape[1]),
        }
        (scores,) = self.policy.run([POLICY_OUTPUT.name], feeds)
        return [np.asarray(scores[i, : len(it.candidates)], dtype=np.float32) for i, it in enumerate(items)]

    def _pad_candidates(self, items: list[Item]) -> tuple[np.ndarray, np.ndarray]:
        """The items' candidates padded to the longest, [B,Kmax,C], and their mask [B,Kmax]."""
        if len(items) == 1:  # the common robot case: no padding, no copy
            k = len(items[0].candidates)
            ones = self._ones.get(k)
            if ones is None:  # setdefault: threads racing here all get the one array kept
                ones = self._ones.setdefault(k, np.ones((1, k), dtype=bool))
            return items[0].candidates[None], ones
        b, kmax = len(items), max(len(it.candidates) for it in items)
        cands = np.zeros((b, kmax, self.cand_dim), dtype=np.float32)
        mask = np.zeros((b, kmax), dtype=bool)
        for i, it in enumerate(items):
            k = len(it.candidates)
            cands[i, :k] = it.candidates
            mask[i, :k] = True
        return cands, mask

    def self_test(self) -> None:
        """A text and an embedding inference; raises :class:`BundleError` when the bundle cannot serve."""
        try:
            items = self.items_from_text(
                [
                    TextRequest(
                        "self test instruction",
                        "self test observation",
                        None if self.skills else ["look around", "put self test cup in box"],
                        [("look around", "self test observation")],
                    )
                ]
            )
            first = items[0]
            texts = first.candidate_texts[:1] if first.candidate_texts else None
            items.append(Item(first.instruction, first.state, first.candidates[:1], None, texts))
            out = self.score(items)
        except BundleError:
            raise
        except Exception as e:
            raise BundleError(f"{self.bundle_dir}: test inference failed ({type(e).__name__}: {e})") from None
        expect = len(self.skills) if self.skills else 2
        if out[0].shape != (expect,) or out[1].shape != (1,):
            raise BundleError(f"{self.bundle_dir}: test inference returned scores of shape {out[0].shape}")
        if not all(np.isfinite(o).all() for o in out):
            raise BundleError(f"{self.bundle_dir}: test inference returned non-finite scores")

    def close(self) -> None:
        self.policy = None
        self.text_encoder.close()


def load_runtime(bundle_dir: str | os.PathLike[str], cfg: RuntimeConfig | None = None) -> Runtime:
    """Load, checksum and test-run a bundle; raises :class:`BundleError` with the reason."""
    rt = Runtime(bundle_dir, cfg)
    rt.self_test()
    return rt
