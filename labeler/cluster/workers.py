"""What the judge actors run for each labeler, and the driver-side judge that stands in for them.

* :class:`CorenWorker` — a COREN labeler around the actor's judge: one trajectory's rating and candidate
  queries, one QA entry's answers, one backward check per unit.
* :class:`TrcaItemWorker` — TRCA's judge-only rubric items on one trajectory per unit.
* :class:`labeler.cluster.units.ScoreWorker` — a rubric build's tagging and placement queries, in chunks.
* :class:`DriverJudge` — on the driver: the judge's tokenizer, context size and identity (a vocabulary-only
  load, no weights), the actors' summed stats; its queries run on the actors.
* :func:`judge_pool` — the session and the pool for a command, as one context manager.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from labeler.cluster.options import ClusterConfig, ClusterError


class CorenWorker:
    """The units of :class:`labeler.coren.pipeline.CorenLabeler` on a judge actor."""

    def __init__(self, judge: Any, prompts: Sequence[Any], templates: Any, cfg: Any):
        from labeler.coren.pipeline import CorenLabeler

        self.labeler = CorenLabeler(judge, None, prompts, templates, cfg)  # type: ignore[arg-type]

    def rate_trajectory(self, instruction: str, texts: list[Any]) -> Any:
        return self.labeler.rate_trajectory(instruction, texts)

    def answer_all(self, entry: Any) -> list[str]:
        return self.labeler.answer_all(entry)

    def backward(self, prompt: Any, instruction: str, plan: list[str]) -> float:
        return self.labeler.backward(prompt, instruction, plan)

    def counters(self) -> dict[str, dict[str, int]]:
        return {"queries": dict(self.labeler.report.queries), "truncations": dict(self.labeler.trunc.counts)}


class TrcaItemWorker:
    """TRCA rewards of one trajectory with the judge asked about judge-only items."""

    def __init__(self, judge: Any, rubric_files: Sequence[str], cfg: Any):
        from labeler.trca.pipeline import RubricSet

        self.judge = judge
        self.rubrics = RubricSet(rubric_files)
        self.cfg = cfg

    def rewards(self, traj: Any) -> tuple[list, list[float], int, dict[str, int]]:
        from labeler.trca.pipeline import label_trajectory_rewards

        hits: Counter = Counter()
        rewards, returns, q = label_trajectory_rewards(
            traj, self.rubrics.get(traj.task_type), self.cfg, self.judge, hits
        )
        return rewards, returns, q, dict(hits)


class DriverJudge:
    """The judge as the driver sees it: tokenizer and identity here, queries on the judge actors."""

    def __init__(self, model_ref: str, pool: Any):
        import llama_cpp
        from llama_cpp import _internals

        from labeler.llama_log import route_llama_logs
        from models.registry import resolve_judge

        route_llama_logs()  # llama.cpp's load lines to the log file, as for the judges
        self.model = resolve_judge(model_ref)
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True  # the tokenizer only: no weights, no context
        self._vocab = _internals.LlamaModel(path_model=str(self.model.path), params=params, verbose=False)
        self.pool = pool
        info = pool.infos[0]
        self.n_ctx = int(info["n_ctx"])
        self._provenance = dict(info["provenance"])

    @property
    def stats(self) -> dict[str, float]:
        return self.pool.stats

    @property
    def model_sha256(self) -> str:
        return self.model.sha256

    def provenance(self) -> dict[str, Any]:
        return dict(self._provenance)

    def tokenize(self, text: str, *, bos: bool = False) -> list[int]:
        return list(self._vocab.tokenize(text.encode("utf-8"), bos, False))

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    def score_many(self, *a: Any, **kw: Any) -> Any:
        raise ClusterError("with --ray the judge's queries run on the judge actors, not on the driver")

    generate = score_many

    def close(self) -> None:
        if self._vocab is not None:
            self._vocab.close()
            self._vocab = None  # type: ignore[assignment]


class PoolRunner:
    """A labeler's runner (``runner(anchor, method, calls)``) over a judge pool; ``merge`` receives each
    unit's counts on the driver (e.g. :meth:`CorenLabeler.merge_counts`)."""

    def __init__(self, pool: Any, merge: Callable[[dict[str, Any]], None] | None = None):
        self.pool = pool
        self.merge = merge

    def __call__(self, anchor: str, method: str, calls: list[tuple]) -> list[Any]:
        on_result = (lambda r: self.merge(r["counts"])) if self.merge else None  # type: ignore[misc]
        return self.pool.map(anchor, method, calls, on_result=on_result)


@contextlib.contextmanager
def judge_pool(
    cfg: ClusterConfig,
    judge_kwargs: dict[str, Any],
    make_worker: Callable[[Any], Any],
    cache_path: str,
) -> Iterator[Any]:
    """A Ray session and a :class:`labeler.cluster.pool.JudgePool` for the ``with`` block."""
    from labeler.cluster.pool import JudgePool
    from labeler.cluster.session import ray_session

    with ray_session(cfg) as info:
        if info["cpus"] < cfg.judge_actors * cfg.cpus_per_actor and cfg.address is not None:
            raise ClusterError(
                f"the cluster has {info['cpus']:g} CPUs; {cfg.judge_actors} judge actors x "
                f"{cfg.cpus_per_actor:g} CPUs do not fit"
            )
        if info["gpus"] < cfg.judge_actors * cfg.gpus_per_actor:
            raise ClusterError(
                f"the cluster has {info['gpus']:g} GPUs; {cfg.judge_actors} judge actors x "
                f"{cfg.gpus_per_actor:g} GPUs do not fit"
            )
        with JudgePool(cfg, judge_kwargs, make_worker, cache_path) as pool:
            pool.session = info
            yield pool


def coren_worker(prompts: Sequence[Any], templates: Any, cfg: Any) -> Callable[[Any], CorenWorker]:
    return functools.partial(CorenWorker, prompts=list(prompts), templates=templates, cfg=cfg)


def trca_item_worker(rubric_files: Sequence[str], cfg: Any) -> Callable[[Any], TrcaItemWorker]:
    return functools.partial(TrcaItemWorker, rubric_files=list(rubric_files), cfg=cfg)


def score_worker() -> Callable[[Any], Any]:
    from labeler.cluster.units import ScoreWorker

    return ScoreWorker
