"""The labeling report: counts of queries by kind, cache hits, timings, truncations, fallbacks and the
checks' pass rates (written by ``edgejudge label coren --report``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Report:
    trajectories: int = 0
    steps: int = 0
    queries: dict[str, int] = field(default_factory=dict)
    cache_hits: int = 0
    seconds: float = 0.0
    judge_seconds: float = 0.0
    truncations: dict[str, int] = field(default_factory=dict)
    structural_fallbacks: int = 0
    temporal_fallbacks: int = 0
    temporal_violations: int = 0
    backward_pass_rate: list[float] = field(default_factory=list)
    qa_pass_rate: list[float] = field(default_factory=list)
    qa_entries: int = 0
    mean_weights: list[float] = field(default_factory=list)
    orchestrator_losses: tuple[float, float] | None = None
    orchestrator_check: dict[str, Any] | None = None

    @property
    def total_queries(self) -> int:
        return sum(self.queries.values())

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["total_queries"] = self.total_queries
        d["steps_per_second"] = self.steps / self.seconds if self.seconds else None
        d["queries_per_step"] = self.total_queries / self.steps if self.steps else None
        return d
