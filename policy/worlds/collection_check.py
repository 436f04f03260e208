"""The adapter contract in full, as ``edgejudge envs check NAME`` runs it (:mod:`policy.worlds.envs_cli`): the
world's own checks (:mod:`policy.worlds.adapters.contract`) and ``collection``: collection records the world
in every trajectory, and the labelers never read ``info``. That check runs the collector
(:mod:`policy.worlds.collect`) and the labelers over a few tiny real episodes, so it lives here, above the
world package.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from policy.worlds.adapters.base import EnvAdapter
from policy.worlds.adapters.contract import CHECKS as WORLD_CHECKS
from policy.worlds.adapters.contract import EPISODES, Check, ContractError, require


class _Poisoned(dict):
    """Ground truth that raises on any read: labelers must never look at ``info``."""

    def _no(self, *a: Any, **k: Any) -> Any:
        raise ContractError("a labeler read the ground truth under info")

    __getitem__ = get = keys = items = values = __iter__ = __contains__ = __len__ = _no  # type: ignore[assignment]


GENERIC_RUBRIC = """
format = "edgejudge.rubrics"
format_version = 1
task_type = "*"
version = 1

[[items]]
id = "inventory-gain"
category = "execution"
text = "Something was picked up"
inventory = "gain"

[[items]]
id = "no-effect"
category = "invalidity"
text = "Nothing changed"
unchanged = true
"""


def check_collection(env: EnvAdapter) -> None:
    """Collection records the world in every trajectory; TRCA, its miner and COREN's texts never read
    ``info`` (they run on data whose ``info`` raises on any read and give the same labels)."""
    from labeler.coren.pipeline import CorenLabeler
    from labeler.coren.prompts import load_prompts, load_templates
    from labeler.trca.checks import CompiledRubric
    from labeler.trca.mine import mine
    from labeler.trca.pipeline import TRCAConfig, label_trajectory_rewards
    from labeler.trca.rubric import parse_rubric
    from policy.worlds.collect import CollectConfig, collect

    has_gold = _has_gold(env)
    cfg = CollectConfig(
        env=env.spec,
        split=env.splits[0],
        episodes=EPISODES,
        noise=0.3,
        behaviour="gold-noise" if has_gold else "random",
        max_steps=env.step_limit,
        seed=1,
    )
    trajs = list(collect(cfg, env))
    for t in trajs:
        require(
            t.meta["env"] == env.spec.name and t.meta["params"] == env.spec.params,
            f"trajectory {t.id} records {t.meta['env']}[{t.meta['params']}]",
        )
        require(t.meta["state_format"] == type(env).state_format, f"trajectory {t.id}: another state format")
        require(t.view.layout == type(env).layout, f"trajectory {t.id}: another layout")
        require(
            all(s.action in s.candidates for s in t.steps), f"trajectory {t.id}: an action not a candidate"
        )

    poisoned = [
        dataclasses.replace(t, steps=[dataclasses.replace(s, info=_Poisoned()) for s in t.steps])
        for t in trajs
    ]
    rubric = CompiledRubric(parse_rubric(GENERIC_RUBRIC))
    for clean, dirty in zip(trajs, poisoned, strict=True):
        a = label_trajectory_rewards(clean, rubric, TRCAConfig())
        b = label_trajectory_rewards(dirty, rubric, TRCAConfig())
        require(a[1] == b[1], "TRCA's labels change when info is hidden")
    require(mine(poisoned).steps == sum(len(t.steps) for t in trajs), "the rubric miner skipped steps")

    class Counter:  # the two judge properties COREN's text building uses
        n_ctx = 2048

        @staticmethod
        def count_tokens(text: str) -> int:
            return len(text.split())

    coren = CorenLabeler(Counter(), None, load_prompts(1), load_templates())
    for t in poisoned:
        _, texts = coren.step_texts(t)
        require(len(texts) == len(t.steps), "COREN's step texts do not cover every step")


def _has_gold(env: EnvAdapter) -> bool:
    split = env.splits[0]
    env.reset(env.episodes(split)[0], split, gold=True)
    return env.gold_path() is not None


CHECKS: dict[str, Check] = {
    **{name: check for name, check in WORLD_CHECKS.items() if name != "no-score-in-state"},
    "collection": check_collection,
    "no-score-in-state": WORLD_CHECKS["no-score-in-state"],
}
"""Every check of the contract, in the order ``envs check`` runs them."""
