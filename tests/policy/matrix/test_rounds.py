"""``edgejudge matrix --rounds``: a tiny real loop on TWC (each policy deployed through edge-serve, its
episodes logged by the robot's writer, labeled with the training file, trained on again, exported and
evaluated; BC on as many expert episodes as the labeled file has successes), its report, and a second run
that recomputes nothing."""

from __future__ import annotations

import json

import pytest

from models.trajectory import read_trajectories
from tests.support.trca_rubric import put_objects


@pytest.mark.real
def test_tiny_loop_deploys_logs_labels_retrains_and_resumes(tmp_path, cli):
    out, work = tmp_path / "res" / "m", tmp_path / "work"
    cmd = [
        "matrix", "--world", "twc-easy=twx:twc@5", "--sizes", "6", "--seeds", "0", "--sources", "sparse,trca",
        "--algos", "bc,credit", "--clients", "guard", "--test-episodes", "2", "--llm-episodes", "0",
        "--expert-sizes", "0", "--steps", "20", "--rounds", "1", "--round-episodes", "3",
        "--work-dir", str(work), "--out", str(out),
    ]  # fmt: skip
    p = cli(*cmd, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = [{**r["config"], **r} for r in json.loads((tmp_path / "res" / "m.json").read_text())["rows"]]
    loop = {(r["algo"], r["source"]): r for r in rows if r.get("round") == 1}
    assert set(loop) == {("bc", "sparse"), ("credit", "trca")}
    first = {(r["algo"], r["source"]): r for r in rows if "round" not in r and r["source"] != "expert"}
    for key, r in loop.items():
        assert r["status"] == "ok" and r["round_episodes"] == 3 and r["round_temperature"] == 0.5
        assert r["deployed"]["episodes"] == 3 and 0 <= r["deployed"]["success_rate"] <= 1
        # the training file of round 1: round 0's and the 3 episodes its policy played
        assert r["train_actual_episodes"] == first[key]["train_actual_episodes"] + 3
        assert r["gold_decisions"]["decisions"] > 0 and r["episodes"] == 2
    assert loop[("credit", "trca")]["label_quality"]["channel"] == "trca.total"
    assert loop[("bc", "sparse")]["label_quality"] is None
    # the deployed policy's log is the robot writer's, in the trajectory format the labelers read
    (folder,) = [d for d in work.glob("*/rounds/credit-trca-*") if d.is_dir()]
    log = folder / "log-1.jsonl"
    assert cli("data", "validate", str(log), check=True).returncode == 0
    assert len(read_trajectories(log)) == 3 and not list(folder.glob("*.partial.*"))
    labeled = read_trajectories(folder / "train-1.jsonl.gz")
    assert len(labeled) == loop[("credit", "trca")]["train_actual_episodes"]
    assert all("trca" in s.labels for t in labeled for s in t.steps)
    # beside the labeled loop: BC on as many expert episodes as its file had successes, per round (an
    # expert cut at 5 steps may not succeed: then its row says there was nothing to clone)
    experts = {
        r["train_episodes"] for r in rows if r["source"] == "expert" and r["status"] in ("ok", "skipped")
    }
    want = {first[("credit", "trca")]["train_successes"], loop[("credit", "trca")]["train_successes"]}
    assert experts == {n for n in want if n}
    md = (tmp_path / "res" / "m.md").read_text()
    assert "### The loop: 1 round" in md and "| twc-easy | BC on successes, sparse |" in md
    assert (tmp_path / "res" / "m.rounds.png").read_bytes()[:4] == b"\x89PNG"

    again = cli(*cmd, timeout=600)
    assert again.returncode == 0 and again.stdout.startswith("0 rows computed"), again.stderr[-2000:]
    dry = cli(*cmd, "--dry-run", check=True).stdout
    assert "done  twc-easy credit/trca n=6 round 1 seed=0 guard (edge-serve) x2" in dry


@pytest.mark.real
def test_each_round_extends_the_built_rubric_by_the_judges_places_for_its_logs_new_objects(tmp_path):
    from labeler.trca.rubric import load_rubric, write_rubric
    from models.trajectory import write_trajectories
    from policy.matrix.data import WorldData
    from policy.matrix.plan import QUICK, parse_world, with_overrides
    from policy.worlds.adapters import parse_env
    from policy.worlds.collect import CollectConfig, collect

    def episodes(game: str, path):
        cfg = CollectConfig(env=parse_env(f"twx:{game}"), split="train", episodes=2, behaviour="gold-noise",
                            noise=0.3, seed=5, max_steps=20)  # fmt: skip
        write_trajectories(path, collect(cfg))
        return path

    said: list[str] = []
    wd = WorldData(tmp_path, parse_world("twc-easy"), with_overrides(QUICK, sizes=(2,)), said.append)
    log = episodes("twc", tmp_path / "log-1.jsonl")
    write_trajectories(wd.label_path("sparse", 2), read_trajectories(log))  # round 0's file, and its rubric:
    objects = put_objects(read_trajectories(log))
    # the shipped one without places for the log's objects
    base = load_rubric("labeler/rubrics/twc.toml")
    put = next(it for it in base.items if it.id == "put-where-it-belongs")
    put.pairs = {o: p for o, p in put.pairs.items() if o not in objects}
    write_rubric(wd.dir / "rubric-n2.twc.toml", base, "round 0")
    other = episodes("cookingworld", tmp_path / "log-2.jsonl")  # a round with no TWC episode

    loop = tmp_path / "loop"
    loop.mkdir()
    args = wd.extended_rubrics(2, [log, other], loop)
    assert args == ["--rubrics", str(loop / "rubric-2.twc.toml")]
    first = load_rubric(loop / "rubric-1.twc.toml")
    places = next(it for it in first.items if it.id == put.id).pairs
    assert set(places) == set(put.pairs) | objects and first.version == base.version + 1
    assert (loop / "rubric-2.twc.toml").read_text() == (loop / "rubric-1.twc.toml").read_text()
    assert said == ["twc-easy: extend the rubric of twc by log-1.jsonl"] and not list(loop.glob("*partial*"))
    assert wd.extended_rubrics(2, [log, other], loop) == args and len(said) == 1  # made once
