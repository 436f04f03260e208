"""Candidate feature kinds: the names bundle manifests and checkpoints record, and their vector sizes.

A kind says how a candidate action's text becomes the scorer's per-candidate input (``edge.actions`` builds
the features): ``action`` is one D-sized sentence embedding per candidate, the ``action+arguments`` kinds
three (action, object, target). Kept here so that the manifest schema (``models.bundle``) needs nothing
from the layers above it.
"""

from __future__ import annotations

CANDIDATE_FEATURES: dict[str, int] = {"action": 1, "action+arguments": 3, "action+arguments+location": 3}
"""Known kinds and how many D-sized parts each candidate vector has."""
DEFAULT_CANDIDATE_FEATURES = "action"
"""What a bundle or checkpoint that does not say uses (the format before argument features)."""
LOCATION_FEATURES = "action+arguments+location"
"""The kind whose target-less candidates read their object's place from the observation."""


def parts_of(kind: str) -> int:
    """How many D-sized parts a candidate vector of this kind has; ValueError for an unknown kind."""
    try:
        return CANDIDATE_FEATURES[kind]
    except KeyError:
        raise ValueError(
            f"unknown candidate features {kind!r}: expected one of {', '.join(CANDIDATE_FEATURES)}"
        ) from None
