"""TRCA with real components: TextWorldExpress episodes, the embedded GGUF judge building rubrics, labeling.

Tiny data: 2 episodes per game; the judge answers a few dozen queries per game on 1 thread.
"""

from __future__ import annotations

import math

import pytest

from labeler.trca.rubric import load_rubric, write_rubric
from models.registry import resolve_judge
from models.trajectory import read_trajectories, write_trajectories
from tests.support.trca_rubric import put_objects

pytestmark = pytest.mark.real


@pytest.fixture(scope="module")
def episodes(tmp_path_factory):
    """2 gold-path-with-noise episodes per game, collected for real."""
    from policy.worlds.adapters import parse_env
    from policy.worlds.collect import CollectConfig, collect

    root = tmp_path_factory.mktemp("trca-real")
    out = {}
    for game in ("twc", "cookingworld"):
        cfg = CollectConfig(
            env=parse_env(f"twx:{game}"),
            split="train",
            episodes=2,
            behaviour="gold-noise",
            noise=0.3,
            seed=5,
            max_steps=20,
        )
        path = root / f"{game}.jsonl.gz"
        write_trajectories(path, collect(cfg))
        out[game] = path
    return out


def _check_labels(path, task_type, rubric_sha):
    trajs = read_trajectories(path)
    assert trajs and all(t.task_type == task_type for t in trajs)
    for t in trajs:
        prov = t.provenance["trca"]
        assert prov["rubric_sha256"] == rubric_sha and prov["lambda"] == 0.8 and prov["gamma"] == 0.95
        for s in t.steps:
            lab = s.labels["trca"]
            assert set(lab) == {
                "foundational",
                "breakthrough",
                "total",
                "return",
                "adv_episode",
                "adv_step",
                "advantage",
            }
            assert all(math.isfinite(v) for v in lab.values())
    return trajs


@pytest.mark.parametrize("game", ["twc", "cookingworld"])
def test_real_judge_builds_a_rubric_that_labels_real_episodes(episodes, tmp_path, cli, game):
    data = episodes[game]
    rub = tmp_path / f"{game}.toml"
    proc = cli(
        "rubrics",
        "build",
        "--dataset",
        str(data),
        "--task-type",
        game,
        "--out",
        str(rub),
        "--cache",
        f"{rub}.cache.sqlite",
        "--no-progress",
        # TWC runs the default 4-order vote; CookingWorld one order (faster: the suite shares 2 cores)
        *(["--prompt-orders", "1"] if game == "cookingworld" else []),
        check=True,
        timeout=240,
    )
    assert "judge queries" in proc.stdout
    assert cli("rubrics", "validate", str(rub)).returncode == 0
    r = load_rubric(rub)
    assert r.build["judge_sha256"] == resolve_judge("gemma3-270m").sha256 and r.build["judge_queries"] > 0
    assert r.build["trajectories"] == 2
    sizes = r.category_sizes()
    assert sizes["invalidity"] >= 1 and sizes["evidence"] + sizes["execution"] >= 1
    ids = {it.id for it in r.items}
    if game == "twc":  # the instruction is about where things go: the judge picked a place per object
        put = next(it for it in r.items if it.id == "put-where-it-belongs")
        objects = put_objects(read_trajectories(data))
        assert set(put.pairs) == objects and all(len(p) == 1 for p in put.pairs.values())
        # extend a reviewed rubric that lacks these objects (the shipped one, with them removed from its
        # table): the judge places only them (its answers come from the build's cache), the rest is kept
        base_file, ext = tmp_path / "base.toml", tmp_path / "ext.toml"
        base = load_rubric("labeler/rubrics/twc.toml")
        base_put = next(it for it in base.items if it.id == put.id)
        base_put.pairs = {o: p for o, p in base_put.pairs.items() if o not in objects}
        write_rubric(base_file, base, "reviewed")
        proc = cli(
            "rubrics",
            "build",
            "--dataset",
            str(data),
            "--task-type",
            game,
            "--base",
            str(base_file),
            "--cache",
            f"{rub}.cache.sqlite",
            "--out",
            str(ext),
            "--no-progress",
            check=True,
            timeout=240,
        )
        assert f"+ {len(objects)} objects placed by the judge" in proc.stdout
        extended = load_rubric(ext)
        ext_put = next(it for it in extended.items if it.id == put.id)
        assert ext_put.pairs == {**base_put.pairs, **put.pairs}  # the judge's places, same as in the build
        assert [it.id for it in extended.items] == [it.id for it in base.items] and extended.version == 3
        # run again on the extended file: nothing new, no judge call
        again = cli(
            "rubrics",
            "build",
            "--dataset",
            str(data),
            "--task-type",
            game,
            "--base",
            str(ext),
            "--out",
            str(tmp_path / "again.toml"),
            check=True,
        )
        assert "unchanged" in again.stdout and "no judge query" in again.stdout
    else:
        assert "put-where-it-belongs" not in ids
    out = tmp_path / "labeled.jsonl.gz"
    proc = cli(
        "label", "trca", str(data), "--rubrics", str(rub), "--out", str(out), "--no-progress", check=True
    )
    assert "0 judge queries" in proc.stdout
    trajs = _check_labels(out, game, r.sha256)
    # gold-path episodes take objects: some step earns positive credit, and breakthroughs never exceed r^F's
    # positive part (an item is credited at most once per step)
    steps = [s.labels["trca"] for t in trajs for s in t.steps]
    assert any(lab["foundational"] > 0 for lab in steps)
    assert all(lab["breakthrough"] >= 0 for lab in steps)
    stats = cli("rubrics", "stats", str(rub), "--dataset", str(data), check=True)
    assert "transitions of task type" in stats.stdout


def test_embedded_rubrics_label_a_mixed_real_dataset_and_keep_other_labels(episodes, tmp_path, cli):
    trajs = read_trajectories(episodes["twc"]) + read_trajectories(episodes["cookingworld"])
    trajs[0].steps[0].labels["coren"] = {"contextual": 0.5}
    mixed, out = tmp_path / "mixed.jsonl", tmp_path / "out.jsonl"
    write_trajectories(mixed, trajs)
    dry = cli("label", "trca", str(mixed), "--dry-run", check=True)
    assert "4 trajectories" in dry.stdout and not out.exists()
    cli("label", "trca", str(mixed), "--out", str(out), "--no-progress", check=True)
    got = read_trajectories(out)
    assert {t.provenance["trca"]["rubric_task_type"] for t in got} == {"twc", "cookingworld"}
    assert {t.provenance["trca"]["rubric_version"] for t in got} == {2}
    assert got[0].steps[0].labels["coren"] == {"contextual": 0.5}
    for t in got:
        assert all(math.isfinite(s.labels["trca"]["advantage"]) for s in t.steps)


def test_item_judge_llm_asks_the_real_judge(episodes, tmp_path, cli):
    trajs = read_trajectories(episodes["twc"])[:1]
    trajs[0].steps = trajs[0].steps[:3]
    data = tmp_path / "one.jsonl"
    write_trajectories(data, trajs)
    rub = tmp_path / "judge-only.toml"
    rub.write_text(
        'format = "edgejudge.rubrics"\nformat_version = 1\ntask_type = "twc"\nversion = 1\n\n'
        '[[items]]\nid = "progress"\ncategory = "execution"\n'
        'text = "The action picked up or put away an object."\njudge = true\n\n'
        '[[items]]\nid = "failed"\ncategory = "invalidity"\ntext = "Parser failure"\n'
        'feedback = "not sure what you mean"\n'
    )
    out = tmp_path / "o.jsonl"
    proc = cli(
        "label",
        "trca",
        str(data),
        "--rubrics",
        str(rub),
        "--item-judge",
        "llm",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--no-progress",
        check=True,
        timeout=240,
    )
    assert "3 judge queries" in proc.stdout
    t = read_trajectories(out)[0]
    assert t.provenance["trca"]["judge_sha256"] == resolve_judge("gemma3-270m").sha256
    assert {s.labels["trca"]["foundational"] for s in t.steps} <= {0.0, 1.0}
    # a rerun is answered from the cache
    again = tmp_path / "o2.jsonl"
    cli(
        "label",
        "trca",
        str(data),
        "--rubrics",
        str(rub),
        "--item-judge",
        "llm",
        "--out",
        str(again),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--no-progress",
        check=True,
        timeout=240,
    )
    assert [s.labels for s in read_trajectories(again)[0].steps] == [s.labels for s in t.steps]
