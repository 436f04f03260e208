"""Whether torch takes the training fast paths.

Training spends its time re-reading the same batch in four networks (IQL's Q, its target, V and the actor).
The fast paths compute the same values with less work: the state encoder runs its token-wise layers on the
state's real tokens only and attention through ``scaled_dot_product_attention``; the token reader sums
tokens as matrix products over the batch's vocabulary (:meth:`policy.token_reader.TokenReader.rows_matrix`);
what depends on a batch's ids alone (distinct rows, match features, the reader's pairs) is computed once per
batch, on a worker thread while the previous batch trains; Adam and the Polyak average run as fused
multi-tensor kernels.

They are on unless ``EDGEJUDGE_TRAIN_REFERENCE=1``, which runs the reference computation (for A/B checks:
the two agree to float rounding, ``tests/policy/test_train_paths.py``). The exported graph always takes the
plain ops, which the export's parity check compares against.
"""

from __future__ import annotations

import torch

from models import settings

REFERENCE = settings.train_reference()
"""The reference computation everywhere (read at import; tests set it directly)."""


def enabled() -> bool:
    """The fast paths apply: not asked for the reference, and not tracing an ONNX graph."""
    return not REFERENCE and not torch.onnx.is_in_onnx_export()
