"""Environment adapters: every world behind one interface, named ``ADAPTER:TASK``.

Modules:

- ``base``: the interface (:class:`EnvAdapter`), one decision point (:class:`EnvState`), names and parameters
  (:class:`EnvSpec`, :class:`Param`), :class:`EnvError`.
- ``registry``: ``parse_env`` / ``open_env`` and the registry of adapters (built-ins, entry points,
  ``EDGEJUDGE_ENVS``).
- ``contract``: the contract every adapter keeps, checked on tiny real episodes: the world's own checks
  (``envs check`` adds the collection check of :mod:`policy.worlds.collection_check`).
- ``recorded``: the world a dataset, checkpoint or bundle records, and the state-format check.
- ``twx``: TextWorldExpress (``twx:twc`` with levels easy/medium/hard, ``twx:cookingworld`` small/large).
- ``scienceworld``: ScienceWorld (``scienceworld:TASK``, the simulator's 30 task families).
- ``scienceworld_actions``: ScienceWorld's candidate cap and the matching of gold actions to valid actions.

See docs/environments.md for the interface and how to write an adapter for another world. The package imports
only ``models`` among the project's packages; what joins a world to the policies, the collector or the
labelers (the task strategies and episode wrappers, the collection check, ``edgejudge envs``) lives above it,
in :mod:`policy`.
"""

from policy.worlds.adapters.base import SPLITS, EnvAdapter, EnvError, EnvSpec, EnvState, Param
from policy.worlds.adapters.registry import (
    adapter_class,
    adapters,
    describe,
    open_env,
    parse_env,
)

__all__ = [
    "SPLITS",
    "EnvAdapter",
    "EnvError",
    "EnvSpec",
    "EnvState",
    "Param",
    "adapter_class",
    "adapters",
    "describe",
    "open_env",
    "parse_env",
]
