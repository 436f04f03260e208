"""``EdgePolicy``: an edge-serve daemon as a policy (:mod:`edge.policies`), through the Python client.

Every ``scores`` or ``act`` call is one ``act`` request, exactly as a robot uses the daemon; the daemon's own
receive-to-reply time and its model hash are kept from every reply. The client round trip is measured by
the :class:`edge.policies.Timed` wrapper, e.g. ``Timed(EdgePolicy(client))``. The daemon is stateless: an
episode's memory belongs to the client, which sends it with every request and composes the episode wrappers
over this policy, e.g. ``Guarded(EdgePolicy(client), world_key)`` with the world key of its environment
adapter. It sends only the pairs the served bundle reads: the last ``memory`` of them, as the daemon's
``info`` reports (older pairs change nothing and would only cost the request's size); the number is read
again when a reply names another model (after a reload).
"""

from __future__ import annotations

from collections.abc import Sequence

from edge.client import EdgeClient
from edge.policies import Memory, ScoringPolicy


class EdgePolicy(ScoringPolicy):
    name = "edge-serve"

    def __init__(self, client: EdgeClient):
        self.client = client
        self.server_ms: list[float] = []
        self.model = ""
        self.horizon: int | None = None
        """The memory pairs the served bundle reads (``info``'s ``horizon``); None until first needed."""

    def _window(self, memory: Memory) -> list[tuple[str, str]]:
        if not memory:
            return []
        if self.horizon is None:
            info = self.client.info()
            # "horizon"; a daemon before that field sends the same number as "memory"
            self.horizon, self.model = int(info.get("horizon", info["memory"])), str(info["model"])
        return list(memory)[-self.horizon :] if self.horizon else []

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> list[float]:
        """The daemon's scores of any candidate texts (one ``act`` request, the memory sent along); their
        argmax is the daemon's own pick."""
        reply = self.client.act(instruction, state, list(candidates), memory=self._window(memory))
        if str(reply["model"]) != self.model:  # another bundle (a reload): its horizon may differ
            stale = bool(memory) and self.horizon is not None
            self.model, self.horizon = str(reply["model"]), None
            if stale:
                reply = self.client.act(instruction, state, list(candidates), memory=self._window(memory))
        self.server_ms.append(float(reply["timing"]["server_ms"]))
        return [float(x) for x in reply["scores"]]
