"""Labeling on a REAL local Ray: 2 judge actors (1 CPU each) with the embedded Gemma 3 270M judge on 1 thread,
on 2 real TWC episodes of 3 steps.

* a Ray run gives bit-identical COREN answers and channels, and an identical TRCA rubric build, to the
  single-process run;
* a judge actor killed mid-run (SIGKILL of its process) is restarted by Ray, its unit retried, and nothing
  that reached the cache is computed again;
* a driver killed mid-run leaves a consistent cache; the rerun resumes from it and gives the same labels.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from models.trajectory import read_trajectories, write_trajectories
from tests.support.paths import ROOT

pytestmark = pytest.mark.real


ray = pytest.importorskip("ray", reason="the cluster extra is not installed")


N_PROMPTS = 2


@pytest.fixture(scope="module")
def ray_local():
    """A local Ray with exactly 2 CPUs, shut down after the module."""
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=100 * 1024**2,
        log_to_driver=False,
        logging_level=logging.ERROR,
    )
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def episodes(tmp_path_factory):
    from policy.worlds.adapters import parse_env
    from policy.worlds.collect import CollectConfig, collect

    cfg = CollectConfig(
        env=parse_env("twx:twc"),
        split="dev",
        episodes=2,
        behaviour="gold-noise",
        noise=0.3,
        seed=3,
        max_steps=3,
    )
    path = tmp_path_factory.mktemp("cluster") / "tiny.jsonl"
    write_trajectories(path, collect(cfg))
    return path


@pytest.fixture(scope="module")
def coren_setup():
    from labeler.coren.pipeline import CorenConfig
    from labeler.coren.prompts import load_prompts, load_templates
    from models.encoder import load_sentence_encoder

    return load_prompts(N_PROMPTS), load_templates(), CorenConfig(qa_size=2), load_sentence_encoder()


def _label_single(episodes, coren_setup, cache):
    from labeler.coren.pipeline import CorenLabeler
    from labeler.judge import open_judge

    prompts, templates, cfg, encoder = coren_setup
    with open_judge("gemma3-270m", n_threads=1, cache=cache) as judge:
        lab = CorenLabeler(judge, encoder, prompts, templates, cfg)
        return lab.label(read_trajectories(episodes)), lab


def _label_ray(episodes, coren_setup, cache, on_result=None, actors=2):
    from labeler.cluster.options import ClusterConfig
    from labeler.cluster.pool import JudgePool
    from labeler.cluster.workers import DriverJudge, coren_worker
    from labeler.coren.pipeline import CorenLabeler

    prompts, templates, cfg, encoder = coren_setup
    cc = ClusterConfig(judge_actors=actors, cpus_per_actor=1)
    kwargs = {"model": "gemma3-270m", "n_threads": 1}
    with JudgePool(cc, kwargs, coren_worker(prompts, templates, cfg), cache) as pool:
        judge = DriverJudge("gemma3-270m", pool)

        def runner(anchor, method, calls):
            def each(r):
                lab.merge_counts(**r["counts"])
                if on_result is not None:
                    on_result(pool, r)

            return pool.map(anchor, method, calls, on_result=each)

        lab = CorenLabeler(judge, encoder, prompts, templates, cfg, runner=runner)
        result = lab.label(read_trajectories(episodes))
        judge.close()
        return result, lab, pool.report()


@pytest.fixture(scope="module")
def single(episodes, coren_setup, tmp_path_factory):
    cache = tmp_path_factory.mktemp("single") / "judge.sqlite"
    result, lab = _label_single(episodes, coren_setup, cache)
    return result, lab, _entries(cache), _keys(cache)


def _assert_same(a, b):
    assert np.array_equal(a.rate, b.rate)  # every prompt's raw distribution, bit for bit
    assert np.array_equal(a.p_yes, b.p_yes)
    assert np.array_equal(a.channels, b.channels)
    assert np.array_equal(a.soft, b.soft)


def _first_trajectory_cache(episodes, coren_setup, tmp_path):
    """The answers of a run on the first trajectory alone (as a killed earlier run would have left them)."""
    first = tmp_path / "first.jsonl"
    write_trajectories(first, read_trajectories(episodes)[:1])
    cache = tmp_path / "first.sqlite"
    _label_single(first, coren_setup, cache)
    return cache


def _cli(*args, env):
    return subprocess.Popen(
        [sys.executable, "-m", "models.cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _entries(cache: Path) -> int:
    if not cache.exists():
        return 0
    try:
        with sqlite3.connect(cache, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def _keys(cache: Path) -> set[str]:
    with sqlite3.connect(cache, timeout=5) as db:
        return {r[0] for r in db.execute("SELECT key FROM entries")}


def _kill_session_leftovers(tmp: str) -> None:
    """SIGKILL the processes of the killed driver's Ray session (Ray's agents outlive a SIGKILLed driver)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith(tmp) for fd in fds):
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            continue


def _payloads(cache: Path) -> dict[str, str]:
    with sqlite3.connect(cache, timeout=5) as db:
        return dict(db.execute("SELECT key, payload FROM entries"))


def test_coren_on_two_judge_actors_gives_the_single_process_labels(
    ray_local, episodes, coren_setup, single, tmp_path
):
    result, lab, report = _label_ray(episodes, coren_setup, tmp_path / "judge.sqlite")
    _assert_same(result, single[0])
    assert lab.report.queries == single[1].report.queries
    assert report["units"] >= 2 and all(n >= 1 for n in report["units_per_actor"])  # both actors worked
    assert report["actor_restarts"] == 0 and report["actors_alive"] == 2
    assert report["answers_committed"] == report["cache_entries"] == single[2]  # every answer once


def test_a_killed_judge_actor_is_restarted_and_the_job_completes(
    ray_local, episodes, coren_setup, single, tmp_path
):
    cache = tmp_path / "judge.sqlite"
    shutil.copy(_first_trajectory_cache(episodes, coren_setup, tmp_path), cache)
    before = _entries(cache)
    reused = len(_keys(cache) & single[3])  # the first trajectory's own queries
    assert reused > 0
    killed = []

    def kill_the_busy_actor(pool, r):
        if not killed:  # the first unit is back; the other actor is still on its own unit
            other = 1 - int(r["slot"])
            pid = int(pool.infos[other]["pid"])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    result, lab, report = _label_ray(episodes, coren_setup, cache, on_result=kill_the_busy_actor)
    _assert_same(result, single[0])
    assert killed and report["actor_restarts"] == 1 and report["actors_alive"] == 2
    stats = report["judge_stats"]
    # the answers cached before the run were served, not computed; each other answer was computed once
    assert stats["cache_hits"] >= reused
    assert stats["queries"] - stats["cache_hits"] == report["answers_committed"]
    assert report["cache_entries"] - before == report["answers_committed"]
    assert single[2] <= report["cache_entries"] < single[2] + before


def test_a_killed_driver_resumes_from_the_cache(episodes, single, tmp_path):
    tmp = tempfile.mkdtemp(prefix="ejray", dir="/tmp")  # short: Ray's socket paths must stay < 108 bytes
    env = {**os.environ, "RAY_TMPDIR": tmp, "EDGEJUDGE_THREADS": "1"}
    env.pop("RAY_ADDRESS", None)
    cache, out = tmp_path / "judge.sqlite", tmp_path / "out.jsonl"
    args = ["label", "coren", str(episodes), "--out", str(out), "--prompts", str(N_PROMPTS), "--qa-size", "2"]
    args += ["--epochs", "5", "--cache", str(cache), "--threads", "1", "--no-progress"]
    try:
        proc = _cli(*args, "--report", str(tmp_path / "r1.json"), "--ray", env=env)
        deadline = time.monotonic() + 400
        while _entries(cache) == 0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        proc.kill()  # SIGKILL: no clean-up of any kind
        proc.communicate()
        _kill_session_leftovers(tmp)
        partial = _entries(cache)
        assert partial > 0 and not out.exists()
        with sqlite3.connect(cache) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

        report = tmp_path / "r2.json"
        rerun = _cli(*args, "--report", str(report), "--ray", env=env)
        _, err = rerun.communicate(timeout=500)
        assert rerun.returncode == 0, err[-2000:]
    finally:
        _kill_session_leftovers(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
    rep = json.loads(report.read_text())
    assert rep["cluster"]["cache_entries_before"] == partial
    assert rep["cluster"]["answers_committed"] == rep["cluster"]["cache_entries"] - partial  # none twice
    assert rep["cluster"]["cache_entries"] == single[2]
    assert rep["judge_stats"]["cache_hits"] >= partial
    ref = single[0]
    steps = [s for t in read_trajectories(out) for s in t.steps]
    assert len(steps) == ref.channels.shape[0]
    for k, s in enumerate(steps):
        lab = s.labels["coren"]
        assert [lab["contextual"], lab["structural"], lab["temporal"]] == ref.channels[k].tolist()
        for n in range(N_PROMPTS):
            assert lab[f"dist_p{n}"] == [round(float(x), 5) for x in ref.rate[n, k]]


def test_rubric_build_on_judge_actors_matches_the_single_process_build(ray_local, episodes, tmp_path):
    from labeler.cluster.options import ClusterConfig
    from labeler.cluster.pool import JudgePool
    from labeler.cluster.units import UnitScorer
    from labeler.cluster.workers import PoolRunner, score_worker
    from labeler.judge import open_judge
    from labeler.trca.build import BuildConfig, build_rubric

    trajs = read_trajectories(episodes)
    cfg = BuildConfig("twc", min_count=1, max_templates=6, prompt_orders=1)
    with open_judge("gemma3-270m", n_threads=1, cache=tmp_path / "single.sqlite") as judge:
        local = build_rubric(trajs, UnitScorer.local(judge), cfg)
    cc = ClusterConfig(judge_actors=2, cpus_per_actor=1)
    kwargs = {"model": "gemma3-270m", "n_threads": 1}
    with JudgePool(cc, kwargs, score_worker(), tmp_path / "ray.sqlite") as pool:
        scorer = UnitScorer(pool.infos[0]["model_sha256"], PoolRunner(pool))
        remote = build_rubric(trajs, scorer, cfg)
        report = pool.report()
    assert remote.queries == local.queries
    assert remote.rubric.items == local.rubric.items  # same items, notes carry the judge's scores
    assert remote.rejected == local.rejected
    assert report["units"] == sum(report["units_per_actor"]) >= 2


def test_trca_item_judge_on_judge_actors_matches_the_single_process_run(ray_local, episodes, tmp_path):
    from labeler.cluster.options import ClusterConfig
    from labeler.cluster.pool import JudgePool
    from labeler.cluster.workers import PoolRunner, trca_item_worker
    from labeler.judge import open_judge
    from labeler.trca.pipeline import RubricSet, TRCAConfig, label_file

    rub = tmp_path / "judge-only.toml"
    rub.write_text(
        'format = "edgejudge.rubrics"\nformat_version = 1\ntask_type = "twc"\nversion = 1\n\n'
        '[[items]]\nid = "progress"\ncategory = "execution"\n'
        'text = "The action picked up or put away an object."\njudge = true\n'
    )
    cfg = TRCAConfig(item_judge="llm")
    with open_judge("gemma3-270m", n_threads=1, cache=tmp_path / "single.sqlite") as judge:
        local = label_file(episodes, tmp_path / "single.jsonl", RubricSet([rub]), cfg, judge=judge)
    cc = ClusterConfig(judge_actors=2, cpus_per_actor=1)
    worker = trca_item_worker([str(rub)], cfg)
    with JudgePool(cc, {"model": "gemma3-270m", "n_threads": 1}, worker, tmp_path / "ray.sqlite") as pool:
        remote = label_file(episodes, tmp_path / "ray.jsonl", RubricSet([rub]), cfg, runner=PoolRunner(pool))
        report = pool.report()
    assert remote.judge_queries == local.judge_queries == 6 and remote.item_hits == local.item_hits
    assert report["units_per_actor"] == [1, 1]  # one trajectory each
    assert _payloads(tmp_path / "ray.sqlite") == _payloads(
        tmp_path / "single.sqlite"
    )  # same answers, bitwise
    ref = [s.labels["trca"] for t in read_trajectories(tmp_path / "single.jsonl") for s in t.steps]
    assert [s.labels["trca"] for t in read_trajectories(tmp_path / "ray.jsonl") for s in t.steps] == ref
