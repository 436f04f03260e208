"""The adapter API's former home, kept for one release: ``from policy.envs import EnvAdapter`` still works.

The adapters now live in :mod:`policy.worlds.adapters`; import from there. This module re-exports its names
and warns once (``DeprecationWarning``) when it is imported; ``policy.envs.base`` and the other submodules are
gone (import ``policy.worlds.adapters.base``).
"""

import warnings

from policy.worlds import adapters as _adapters
from policy.worlds.adapters import *  # noqa: F403 - the re-export is the point

__all__ = list(_adapters.__all__)

warnings.warn(
    "policy.envs moved to policy.worlds.adapters; import from there (policy.envs goes in the next release)",
    DeprecationWarning,
    stacklevel=2,
)
