"""``EdgeAgent``: an edge-serve daemon as an agent (``act(instruction, observation, candidates) -> index``).

It plugs the daemon into :func:`policy.evaluate.evaluate` (TextWorldExpress rollouts) exactly as a robot
uses it: every step is one ``act`` request through :class:`edge.client.EdgeClient`. Round-trip and
server-side times of every call are kept for latency percentiles. With ``loop_guard`` the agent keeps the
episode's memory (:class:`edge.loop_guard.LoopGuard`) and picks from the reply's scores, as a robot client
should: the daemon itself is stateless. With ``placement_search`` it runs
:class:`edge.placement_search.PlacementSearch` (which wraps the guard); ranking a newly held object's places
is one more ``act`` request, with the hypothetical ``put`` candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from edge.client import EdgeClient
from edge.loop_guard import LoopGuard
from edge.placement_search import PlacementSearch


class EdgeAgent:
    name = "edge-serve"

    def __init__(
        self,
        client: EdgeClient,
        *,
        loop_guard: bool = False,
        placement_search: bool = False,
        world_key: Callable[[str], str] | None = None,
    ):
        """``world_key`` maps an observation to its world state for the guard (default: the whole text)."""
        self.client = client
        self.search = PlacementSearch(self.scores, key=world_key) if placement_search else None
        self.guard = self.search.guard if self.search else LoopGuard(world_key) if loop_guard else None
        if self.search:
            self.name = "edge-serve+search"
        elif self.guard:
            self.name = "edge-serve+guard"
        self.round_trip_ms: list[float] = []
        self.server_ms: list[float] = []
        self.model = ""

    def _request(self, instruction: str, observation: str, candidates: Sequence[str]) -> dict[str, Any]:
        import time

        t = time.perf_counter()
        reply = self.client.act(instruction, observation, list(candidates))
        self.round_trip_ms.append((time.perf_counter() - t) * 1000)
        self.server_ms.append(float(reply["timing"]["server_ms"]))
        self.model = str(reply["model"])
        return reply

    def scores(self, instruction: str, observation: str, candidates: Sequence[str]) -> list[float]:
        """The daemon's scores of any candidate texts (one ``act`` request)."""
        return [float(x) for x in self._request(instruction, observation, candidates)["scores"]]

    def act(self, instruction: str, observation: str, candidates: Sequence[str]) -> int:
        reply = self._request(instruction, observation, candidates)
        if self.search is not None:
            return self.search.choose(instruction, observation, candidates, reply["scores"])
        if self.guard is not None:
            return self.guard.choose(observation, candidates, reply["scores"])
        return int(reply["index"])

    @property
    def overrides(self) -> int:
        """Actions the loop guard chose over the daemon's argmax, over all episodes."""
        return self.guard.total_overrides if self.guard is not None else 0

    @property
    def searches(self) -> int:
        """Joint placements the search ruled out (the episode went on after them), over all episodes."""
        return self.search.searches if self.search is not None else 0

    def reset(self) -> None:
        if self.search is not None:
            self.search.reset()
        elif self.guard is not None:
            self.guard.reset()

    def close(self) -> None:
        pass

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
