"""``EdgeAgent``: an edge-serve daemon as a policy (:mod:`edge.policies`), through the Python client.

Every ``scores`` or ``act`` call is one ``act`` request, exactly as a robot uses the daemon; round-trip and
server-side times of every call are kept for latency percentiles. The daemon is stateless: an episode's
memory belongs to the client, which sends it with every request and composes the episode wrappers over this
policy, e.g.
``Guarded(EdgeAgent(client), world_key)`` with the world key of its environment adapter.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from edge.client import EdgeClient
from edge.policies import Memory, ScoringPolicy


class EdgeAgent(ScoringPolicy):
    name = "edge-serve"

    def __init__(self, client: EdgeClient):
        self.client = client
        self.round_trip_ms: list[float] = []
        self.server_ms: list[float] = []
        self.model = ""

    def _request(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory
    ) -> dict[str, Any]:
        t = time.perf_counter()
        reply = self.client.act(instruction, state, list(candidates), memory=memory)
        self.round_trip_ms.append((time.perf_counter() - t) * 1000)
        self.server_ms.append(float(reply["timing"]["server_ms"]))
        self.model = str(reply["model"])
        return reply

    def scores(
        self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()
    ) -> list[float]:
        """The daemon's scores of any candidate texts (one ``act`` request, the memory sent along)."""
        return [float(x) for x in self._request(instruction, state, candidates, memory)["scores"]]

    def act(self, instruction: str, state: str, candidates: Sequence[str], memory: Memory = ()) -> int:
        """The daemon's own pick (its argmax)."""
        return int(self._request(instruction, state, candidates, memory)["index"])

    def latency(self) -> dict[str, Any]:
        """p50/p99 of the client round trip and of the daemon's own receive-to-reply time, in ms."""

        def pct(values: list[float], q: float) -> float | None:
            if not values:
                return None
            s = sorted(values)
            return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]

        return {
            "n": len(self.round_trip_ms),
            "round_trip_ms_p50": pct(self.round_trip_ms, 0.5),
            "round_trip_ms_p99": pct(self.round_trip_ms, 0.99),
            "server_ms_p50": pct(self.server_ms, 0.5),
            "server_ms_p99": pct(self.server_ms, 0.99),
        }
