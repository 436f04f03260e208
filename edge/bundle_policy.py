"""An exported bundle as an in-process policy, run by the daemon's own :class:`edge.runtime.Runtime`.

:class:`BundlePolicy` is what ``edgejudge eval BUNDLE``, the benchmarks and any in-process robot code use: the
scores of one ``act`` request per call, through exactly the runtime edge-serve runs (same tokenizer settings,
same length-grouped encoder runs, same int8 rule, same embedding LRU, same scorer call), so what is evaluated
offline is what the daemon serves. Imports: numpy, onnxruntime, tokenizers and ``models`` (no torch).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from edge.policies import Memory, ScoringPolicy
from edge.runtime import Item, Runtime, RuntimeConfig, TextRequest, load_runtime
from models import settings
from models.bundle import BundleError


class BundlePolicy(ScoringPolicy):
    """Scores candidate actions with a bundle. ``cache_size`` > 0 keeps the runtime's LRU of instruction and
    candidate embeddings (they repeat across steps); 0 encodes every text on every call. The state is encoded
    on every call, as in the daemon. Closing it closes the runtime."""

    name = "bundle"

    def __init__(
        self, bundle_dir: str | os.PathLike[str], *, cache_size: int = 4096, threads: int | None = None
    ):
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError as e:  # pragma: no cover - depends on the install
            raise BundleError(
                f"running a bundle needs onnxruntime and tokenizers (pip install 'edgejudge[edge]'): {e}"
            ) from e
        self.runtime: Runtime = load_runtime(
            bundle_dir, RuntimeConfig(threads=threads or settings.threads(), cache_size=cache_size)
        )
        self.dir = self.runtime.bundle_dir
        self.manifest = self.runtime.manifest
        self.skills = list(self.runtime.skills)

    @property
    def model_sha256(self) -> str:
        return self.runtime.model_sha256

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 [N, D] embeddings of ``texts`` (through the LRU when it is on)."""
        return self.runtime.encode(list(texts), cache=self.runtime.cache.capacity > 0)

    def candidate_features(self, candidates: Sequence[str], state: str = "") -> np.ndarray:
        """float32 [K, C]: the scorer's per-candidate input (the bundle's ``candidate_features``)."""
        (item,) = self.runtime.items_from_text([TextRequest("", state, list(candidates))])
        return item.candidates

    def scores_from_embeddings(
        self, instruction: np.ndarray, state: np.ndarray, candidates: np.ndarray
    ) -> np.ndarray:
        """The scorer alone on pre-computed features ([D], [D], [K,C]), as the daemon's embedding op (format-1
        bundles)."""
        item = Item(
            np.asarray(instruction, dtype=np.float32),
            np.asarray(state, dtype=np.float32),
            np.asarray(candidates, dtype=np.float32),
            None,
        )
        return self.runtime.score([item])[0]

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str] | None, memory: Memory = ()
    ) -> np.ndarray:
        """One score per candidate (``None``: the bundle's skill list), as edge-serve's text ``act`` gives;
        ``memory`` is the episode so far (read by format-2 and 3 bundles)."""
        if candidates is None:
            if not self.skills:
                raise BundleError(f"{self.dir}: no candidates given and the bundle has no skill list")
        elif not candidates:
            raise ValueError("no candidate actions to choose from")
        cands = None if candidates is None else list(candidates)
        rt = self.runtime
        return rt.score(rt.items_from_text([TextRequest(instruction, state, cands, memory)]))[0]

    def on_close(self) -> None:
        self.runtime.close()
