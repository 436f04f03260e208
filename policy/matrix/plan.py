"""What the matrix runs: worlds, sizes and the configuration of every row.

A world is a preset name (``twc-easy``) or ``[LABEL=]ADAPTER:TASK[PARAMS]@MAX_STEPS`` for any registered
adapter, e.g. ``cw-large=twx:cookingworld[level=large]@80``. The matrix knows worlds only through the
command line (``edgejudge collect/label/train/export/eval``, ``eval --serve`` included, take ``--env`` and
``--params``), so any adapter the commands accept works here.

Rows per world:

- trained rows: reward source x algorithm x training episodes x training seed x client, each evaluated
  through edge-serve (``runner=edge-serve``); BC learns from the successful episodes, so it has one source,
  ``sparse``;
- the imitation ceiling: BC on ``expert_sizes`` pure expert episodes (gold paths, no noise; source
  ``expert``), what the policy class can copy before any reward is involved;
- one in-process row beside the headline edge-serve row (``runner=in-process``), which must agree with it
  episode by episode;
- ``random`` (uniform over the candidates) and ``llm-agent`` (the judge picking by log-prob), in process.
"""

from __future__ import annotations

import functools
import re
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from policy.matrix.recipes import EXPERT, RECIPES, SOURCES


@dataclass(frozen=True)
class World:
    label: str
    env: str
    params: str | None = None
    max_steps: int = 40
    metric: str = "success"
    """What the target is on: ``success`` (rate) or ``score`` (mean normalised score)."""
    target: float | None = None
    pool: str | None = None
    """A log of the world's episodes (any collector's, with ground truth under ``info``) that the label grid
    cuts its files from instead of collecting (``matrix labels --pool``)."""

    def spec_args(self) -> list[str]:
        return ["--env", self.env] + (["--params", self.params] if self.params else [])

    @property
    def key_params(self) -> str:
        """The parameters as the adapter resolves them (its defaults filled in): what row keys and work
        directories record, so that a change of an adapter's defaults makes new rows instead of reusing the
        ones made under the old defaults."""
        from policy.worlds.adapters.registry import parse_env

        return self.params if self.params is not None else parse_env(self.env).params

    @property
    def pool_digest(self) -> str | None:
        """The pool file's content hash (what row keys and work folders record, not its path)."""
        return None if self.pool is None else _digest(self.pool)


def episode_source(w: World, s: Sizes, seed_key: str = "collect_seed") -> dict[str, Any]:
    """The keys that say where a world's episodes come from: the given log's content hash (``pool``), or the
    collection's behaviour, noise and seed (named ``seed_key``)."""
    if w.pool is not None:
        return {"pool": w.pool_digest}
    return {"behaviour": s.behaviour, "noise": s.noise, seed_key: s.collect_seed}


@functools.lru_cache(maxsize=64)
def _digest(path: str) -> str:
    from models.bundle import sha256_file

    return sha256_file(path)[:16]


PRESETS: dict[str, World] = {
    w.label: w
    for w in (
        World("twc-easy", "twx:twc", "level=easy", 40, "success", 0.90),
        World("twc-medium", "twx:twc", "level=medium", 60, "success", 0.75),
        World("twc-hard", "twx:twc", "level=hard", 80, "success", 0.60),
        World("cookingworld-small", "twx:cookingworld", "level=small", 40, "success", 0.70),
        World("cookingworld-large", "twx:cookingworld", "level=large", 80),
        World("scienceworld-find-animal", "scienceworld:find-animal", None, 60, "score", 0.50),
        World(
            "scienceworld-lifespan-longest-lived",
            "scienceworld:lifespan-longest-lived",
            None,
            20,
            "score",
            0.50,
        ),
    )
}

_WORLD = re.compile(
    r"^((?P<label>[\w.-]+)=)?(?P<env>[\w.-]+:[\w.-]+)(\[(?P<params>[^\]]*)\])?(@(?P<steps>\d+))?$"
)


def parse_world(text: str) -> World:
    """A preset name, or ``[LABEL=]ADAPTER:TASK[PARAMS]@MAX_STEPS`` (label, params and step limit optional;
    without a label the world is named after its adapter, task and parameters, e.g. ``twx-twc-level-easy``).
    ValueError for anything else."""
    text = text.strip()
    if text in PRESETS:
        return PRESETS[text]
    m = _WORLD.match(text)
    if not m:
        raise ValueError(
            f"bad world {text!r}: expected a preset ({', '.join(PRESETS)}) or "
            "[LABEL=]ADAPTER:TASK[PARAMS]@MAX_STEPS, e.g. 'cw=twx:cookingworld[level=small]@40'"
        )
    label = m["label"] or re.sub(r"[^\w.]+", "-", f"{m['env']}-{m['params'] or ''}").strip("-")
    return World(label, m["env"], m["params"] or None, int(m["steps"] or 40))


@dataclass(frozen=True)
class Sizes:
    worlds: tuple[str, ...]
    sizes: tuple[int, ...]
    seeds: tuple[int, ...]
    sources: tuple[str, ...]
    algos: tuple[str, ...]
    clients: tuple[str, ...]
    test_episodes: int
    llm_episodes: int
    steps: int
    coren_max_episodes: int
    """COREN labels only the data sizes up to this (the judge labels about one step per second)."""
    expert_sizes: tuple[int, ...] = ()
    """Expert episodes of the imitation-ceiling rows (BC on gold paths); empty: none."""
    behaviour: str = "gold-noise=0.3,random=0.7"
    noise: float = 0.3
    collect_seed: int = 0
    split: str = "train"
    """The split the pool is collected on (the label grid measures on held-out ``dev`` or ``test`` seeds)."""
    max_success_rate: float = 0.3
    detour_penalty: float = 0.05
    """Dense sources only (the recipe of the policy tables); sparse rows keep the success flag alone."""
    coren_prompts: int = 2
    judge: str = "gemma3-270m"
    encoder: str | None = None
    """The text encoder the trained policies learn on (``edgejudge train --encoder``); None: the default."""
    check_runner: bool = True
    rounds: int = 0
    """Rounds of the loop after the training files (``--rounds``): each trained policy of the largest size
    (not the imitation ceiling) deployed through edge-serve on the train split, its episodes logged, labeled
    with everything before and trained on again (:mod:`policy.matrix.rounds`)."""
    round_episodes: int = 100
    """Episodes the deployed policy plays per round."""
    round_temperature: float = 0.5
    """Its exploration while it collects: a draw from softmax(scores / T) at every step."""
    round_init: bool = False
    """Start each round's training from the last round's checkpoint (``edgejudge train --init``)."""
    round_set: tuple[str, ...] = ()
    """``RECIPE:KEY=VALUE`` settings of a recipe's training from round 1 on (``edgejudge train --set
    KEY=VALUE``, e.g. ``credit:detours=false``); round 0 keeps the recipe's own."""
    round_rubric: str = "first"
    """The judge-built rubric (``trca-built``) a round labels with: ``first``, the training file's, reused;
    ``extend``, the last round's with the judge's places for the objects of this round's log it does not
    place yet (``edgejudge rubrics build --base``): no full rebuild, no reviewed item changed."""
    audit_steps: int = 0
    """Steps of each labeled log the judge audits in the label grid (``matrix labels --audit``); 0: none."""
    auditor: str = "judge"
    """Who marks those steps: the local judge, or ``truth`` (the log's own score progress: an auditor who is
    always right, the upper bound of a person's audit)."""
    augment: int = 0
    """Renamed copies of each episode every policy also trains on (``edgejudge train --augment``); 0: none."""
    extra: dict[str, Any] = field(default_factory=dict)


QUICK = Sizes(
    worlds=("twc-easy",),
    sizes=(30, 120),
    seeds=(0,),
    sources=("sparse", "trca"),
    algos=("iql", "bc"),
    clients=("argmax", "guard"),
    test_episodes=20,
    llm_episodes=2,
    steps=1000,
    coren_max_episodes=0,
    expert_sizes=(50,),
)
FULL = Sizes(
    worlds=tuple(PRESETS),
    sizes=(30, 60, 120, 250),
    seeds=(0, 1, 2),
    sources=("sparse", "trca", "trca-built", "coren"),
    algos=("iql", "bc"),
    clients=("argmax", "guard"),
    test_episodes=100,
    llm_episodes=20,
    steps=2000,
    coren_max_episodes=60,
    expert_sizes=(50, 200),
)
SIZES = {"quick": QUICK, "full": FULL}


def with_overrides(base: Sizes, **kw: Any) -> Sizes:
    return replace(base, **{k: v for k, v in kw.items() if v is not None})


@dataclass(frozen=True)
class Unit:
    """One trained policy (world, source, algorithm, training episodes, seed) and the rows it is scored in."""

    world: World
    source: str
    algo: str
    episodes: int
    seed: int
    rows: tuple[dict[str, Any], ...]

    @property
    def name(self) -> str:
        return f"{self.algo}-{self.source}-n{self.episodes}-s{self.seed}"


def _world_config(w: World, s: Sizes, episodes: int) -> dict[str, Any]:
    return {
        "world": w.label,
        "env": w.env,
        "params": w.key_params,
        "split": "test",
        "max_steps": w.max_steps,
        "test_episodes": episodes,
    }


def train_config(w: World, s: Sizes, source: str, algo: str, n: int, seed: int) -> dict[str, Any]:
    if source == EXPERT:
        return {
            "source": EXPERT,
            "algo": algo,
            "train_episodes": n,
            "seed": seed,
            "steps": s.steps,
            "detour_penalty": 0.0,
            "behaviour": "gold-noise",
            "noise": 0.0,
            "collect_seed": s.collect_seed,
            "bc_filter": "all",
            **({"augment": s.augment} if s.augment else {}),  # only when set: earlier rows keep their keys
        }
    cfg = {
        "source": source,
        "algo": algo,
        "train_episodes": n,
        "seed": seed,
        "steps": s.steps,
        "detour_penalty": s.detour_penalty if source != "sparse" else 0.0,
        "behaviour": s.behaviour,
        "noise": s.noise,
        "collect_seed": s.collect_seed,
        "max_success_rate": s.max_success_rate,
    }
    recipe = RECIPES[algo]
    if recipe.bc_filter:
        cfg["bc_filter"] = recipe.bc_filter
    if s.encoder:  # only when set: the rows of the default encoder keep their keys
        cfg["encoder"] = s.encoder
    if s.augment:
        cfg["augment"] = s.augment
    cfg.update(recipe.settings)
    if SOURCES[source].per_step_judge:
        cfg["coren_prompts"] = s.coren_prompts
        cfg["judge"] = s.judge
    return cfg


def units(w: World, s: Sizes) -> list[Unit]:
    """The trained policies of world ``w``, each with its edge-serve rows (and the in-process check row on
    the headline unit: the largest size, the first seed, IQL on the first dense source)."""
    pairs = [(algo, src) for algo in s.algos for src in RECIPES[algo].sources(s.sources)]
    pairs += [("bc", EXPERT)] if s.expert_sizes and "bc" in s.algos else []
    dense = [src for src in s.sources if SOURCES[src].dense]
    head_src = dense[0] if dense else s.sources[0]
    out = []
    for algo, src in pairs:
        for n in s.expert_sizes if src == EXPERT else s.sizes:
            if SOURCES[src].per_step_judge and n > s.coren_max_episodes:
                continue
            for seed in s.seeds:
                headline = (algo, src, n, seed) == ("iql", head_src, max(s.sizes), s.seeds[0])
                out.append(unit(w, s, algo, src, n, seed, check_runner=s.check_runner and headline))
    return out


def unit(w: World, s: Sizes, algo: str, src: str, n: int, seed: int, *, check_runner: bool = False) -> Unit:
    """One trained policy and its edge-serve rows (one per client), with the in-process row beside the guard
    row when ``check_runner``."""
    base = {**_world_config(w, s, s.test_episodes), **train_config(w, s, src, algo, n, seed)}
    rows = [{**base, "client": c, "runner": "edge-serve"} for c in s.clients]
    if check_runner and "guard" in s.clients:
        rows.append({**base, "client": "guard", "runner": "in-process"})
    return Unit(w, src, algo, n, seed, tuple(rows))


@dataclass(frozen=True)
class RoundUnit:
    """Round ``round`` (1, 2, ...) of the loop of a trained policy ``unit`` (its round 0): the policy trained
    on the unit's training file and the episodes its earlier rounds' policies played."""

    unit: Unit
    round: int
    rows: tuple[dict[str, Any], ...]

    @property
    def name(self) -> str:
        return f"{self.unit.name}-round{self.round}"


def round_settings(s: Sizes, recipe: str) -> list[str]:
    """The ``KEY=VALUE`` training settings ``--round-set`` gives recipe ``recipe`` from round 1 on."""
    return [kv for entry in s.round_set for name, _, kv in [entry.partition(":")] if name == recipe]


def extends_rubric(s: Sizes, source: str) -> bool:
    """Whether the rounds of a policy on ``source`` extend its judge-built rubric (``--round-rubric
    extend``)."""
    return s.round_rubric == "extend" and SOURCES[SOURCES[source].label_source].labeling == "built"


def round_config(s: Sizes, r: int, recipe: str, source: str) -> dict[str, Any]:
    """The keys a row of round ``r`` of a ``recipe`` policy on ``source`` adds to its unit's configuration."""
    cfg: dict[str, Any] = {
        "round": r,
        "round_episodes": s.round_episodes,
        "round_temperature": s.round_temperature,
    }
    if s.round_init:  # only when set: the rows without it keep their keys
        cfg["round_init"] = True
    return cfg | _policy_round_keys(s, recipe, source)


def _policy_round_keys(s: Sizes, recipe: str, source: str) -> dict[str, Any]:
    """What a run changed in the rounds of one policy (a ``recipe`` on ``source``) alone: its training
    settings (``--round-set``), its rubric extended (``--round-rubric extend``); only the keys set."""
    keys: dict[str, Any] = {}
    if settings := round_settings(s, recipe):
        keys["round_set"] = settings
    if extends_rubric(s, source):
        keys["round_rubric"] = "extend"
    return keys


def loop_settings(s: Sizes, recipe: str, source: str) -> dict[str, Any]:
    """The settings that shape the loop files of a ``recipe`` policy on ``source`` beyond its round-0 policy
    (the deployed episodes, their labels, the checkpoints), those a run changed from the defaults only: a
    loop's folder is named by them, so a run with other settings never reuses another's checkpoints, and
    default runs keep their folders' names."""
    defaults = {f.name: f.default for f in fields(Sizes)}
    keys = ("round_episodes", "round_temperature", "round_init")
    changed = {k: getattr(s, k) for k in keys if getattr(s, k) != defaults[k]}
    return changed | _policy_round_keys(s, recipe, source)


def looped_units(w: World, s: Sizes) -> list[Unit]:
    """The trained policies the loop continues: every one of the largest size but the imitation ceiling."""
    return [u for u in units(w, s) if u.source != EXPERT and u.episodes == max(s.sizes)]


def round_units(w: World, s: Sizes) -> list[RoundUnit]:
    """Rounds 1..``s.rounds`` of every looped policy of world ``w``, in round order per policy; each round's
    rows are its unit's edge-serve rows with the round's keys."""
    return [
        RoundUnit(
            u,
            r,
            tuple(
                {**row, **round_config(s, r, u.algo, u.source)}
                for row in u.rows
                if row["runner"] == "edge-serve"
            ),
        )
        for u in (looped_units(w, s) if s.rounds > 0 else [])
        for r in range(1, s.rounds + 1)
    ]


def baseline_rows(w: World, s: Sizes) -> list[dict[str, Any]]:
    """Random (one row per seed) and the LLM-as-agent (deterministic: one seed) rows of world ``w``."""
    rows = []
    for seed in s.seeds:
        rows.append(
            {
                **_world_config(w, s, s.test_episodes),
                "source": "-",
                "algo": "random",
                "train_episodes": 0,
                "seed": seed,
                "client": "argmax",
                "runner": "in-process",
            }
        )
    if s.llm_episodes > 0:
        for client in s.clients:
            rows.append(
                {
                    **_world_config(w, s, s.llm_episodes),
                    "source": "-",
                    "algo": "llm-agent",
                    "judge": s.judge,
                    "train_episodes": 0,
                    "seed": 0,
                    "client": client,
                    "runner": "in-process",
                }
            )
    return rows


def describe(s: Sizes) -> dict[str, Any]:
    d = asdict(s)
    d.pop("extra")
    return d
