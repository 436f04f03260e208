"""Candidate feature kinds: the names bundle manifests and checkpoints record, and their vector sizes.

A kind says how a candidate action's text becomes the scorer's per-candidate input (``edge.actions`` builds
the features): ``action`` is one D-sized sentence embedding per candidate, ``action+arguments`` three
(action, object, target). Retired kinds are refused with the reason. Kept here so that the manifest schema
(``models.bundle``) needs nothing from the layers above it.
"""

from __future__ import annotations

CANDIDATE_FEATURES: dict[str, int] = {"action": 1, "action+arguments": 3}
"""Known kinds and how many D-sized parts each candidate vector has."""
DEFAULT_CANDIDATE_FEATURES = "action"
"""What a bundle or checkpoint that does not say uses (the format before argument features)."""
RETIRED: dict[str, str] = {
    "action+arguments+location": "it read objects' places from TextWorld's room text, and the runtime reads "
    "no world's text; retrain with candidate_features=action+arguments",
}
"""Kinds that are no longer served, and why."""


def parts_of(kind: str) -> int:
    """How many D-sized parts a candidate vector of this kind has; ValueError for an unknown kind."""
    if kind in RETIRED:
        raise ValueError(f"candidate features {kind!r} are retired: {RETIRED[kind]}")
    try:
        return CANDIDATE_FEATURES[kind]
    except KeyError:
        raise ValueError(
            f"unknown candidate features {kind!r}: expected one of {', '.join(CANDIDATE_FEATURES)}"
        ) from None
