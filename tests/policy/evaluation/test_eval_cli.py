"""``edgejudge eval --serve`` and ``--connect``: real TextWorldExpress episodes (JVM) driven through a real
edge-serve daemon on a tiny bundle, with the same result as the same bundle in process; and what the two
options refuse."""

from __future__ import annotations

import json

import pytest

from tests.support.serving import Daemon, build_tiny_bundle

pytestmark = pytest.mark.real


EPISODES = ("--env", "twx:twc", "--split", "test", "--episodes", "2", "--json")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return build_tiny_bundle(tmp_path_factory.mktemp("tiny") / "bundle")


def evaluate(cli, *args: str) -> dict:
    proc = cli("eval", *args, *EPISODES, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_serve_drives_episodes_through_edge_serve_as_in_process(cli, bundle):
    served = evaluate(cli, str(bundle), "--serve", "--max-steps", "3")
    assert served["episodes"] == 2 and served["split"] == "test" and served["env"] == "twx:twc"
    assert served["actions"] == served["latency"]["n"] and 1 <= served["actions"] <= 6
    assert served["invalid_action_rate"] == 0.0  # the daemon's scores rank exactly the admissible actions
    assert 0 < served["latency"]["server_ms_p50"] <= served["latency"]["round_trip_ms_p50"]
    assert len(served["model"]) == 64 and served["endpoint"].startswith("tcp://127.0.0.1:")
    assert served["loop_guard"] is True and served["guard_overrides"] >= 0  # the default: the client's guard
    assert served["policy"] == "edge-serve+guard" and served["state_format"] == "twx/1"
    assert all("trace" not in e for e in served["per_episode"])
    # the same bundle in process, under the same default: the same episodes, step for step (--trace: the
    # actions taken, what the world said and the score after each)
    local = evaluate(cli, str(bundle), "--max-steps", "3", "--trace")
    assert local["loop_guard"] is True and "latency" not in local and "endpoint" not in local
    assert [{k: v for k, v in e.items() if k != "trace"} for e in local["per_episode"]] == served[
        "per_episode"
    ]
    assert local["actions"] == served["actions"]
    for e in local["per_episode"]:
        assert len(e["trace"]) == e["steps"] and e["trace"][-1]["score"] == e["score"]
        for step in e["trace"]:
            assert isinstance(step["action"], str) and step["candidates"] >= 1
            assert isinstance(step["feedback"], str)


def test_connect_reaches_a_running_daemon_and_no_loop_guard_takes_the_argmax(cli, bundle):
    with Daemon(bundle) as d:
        out = evaluate(cli, "--connect", d.endpoint, "--max-steps", "2", "--no-loop-guard")
    assert out["endpoint"] == d.endpoint and out["latency"]["n"] == out["actions"] >= 1
    assert out["loop_guard"] is False and out["guard_overrides"] == 0 and out["policy"] == "edge-serve"


def test_serve_with_the_placement_strategy_asks_the_daemon_for_every_score(cli, bundle):
    out = evaluate(cli, str(bundle), "--serve", "--max-steps", "4", "--strategy", "placement-search")
    assert out["strategy"] == "placement-search" and out["loop_guard"] is True and out["searches"] >= 0
    assert out["invalid_action_rate"] == 0.0
    # the tiny bundle takes an object in both episodes: ranking its places is one more request to the daemon
    assert out["latency"]["n"] >= out["actions"] + 2


def test_serve_and_connect_refuse_what_they_cannot_run(cli, bundle, tmp_path):
    proc = cli("eval", "--serve", "--episodes", "1")
    assert proc.returncode == 2 and "--connect ADDRESS" in proc.stderr
    proc = cli("eval", str(bundle), "--serve", "--connect", "tcp://127.0.0.1:1", "--episodes", "1")
    assert proc.returncode == 2 and "not both" in proc.stderr
    proc = cli("eval", str(bundle), "--connect", "tcp://127.0.0.1:1", "--episodes", "1")
    assert proc.returncode == 2 and "takes no POLICY_PATH" in proc.stderr
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "checkpoint.json").write_text("{}")
    proc = cli("eval", str(tmp_path / "ckpt"), "--serve", "--episodes", "1")
    assert proc.returncode == 2 and "--serve runs a bundle" in proc.stderr
    proc = cli("eval", "--baseline", "random", "--serve", "--episodes", "1")
    assert proc.returncode == 2 and "--baseline random takes no POLICY_PATH, --serve" in proc.stderr
    proc = cli("eval", "--baseline", "random", "--loop-guard", "--episodes", "1")
    assert proc.returncode == 2 and "--loop-guard needs a policy" in proc.stderr
    proc = cli("eval", str(bundle), "--episodes", "1", "--trace")
    assert proc.returncode == 2 and "give --json too" in proc.stderr
    proc = cli("eval", "--help")
    assert "[default: on" in " ".join(proc.stdout.split())
