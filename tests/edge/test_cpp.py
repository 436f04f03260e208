"""The C++ client (edge/cpp, built by the top-level CMakeLists.txt) against the shared protocol vectors and a
real edge-serve daemon. The build directory is reused between runs (.pytest_cache/edge-cpp-build)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading

import pytest

from edge.client import EdgeClient
from tests.support.serving import ROOT, Daemon, exported_bundle

pytestmark = pytest.mark.real


BUILD = ROOT / ".pytest_cache" / "edge-cpp-build"


INSTR = "put the apple in the fridge"


OBS = "Inventory: empty\nRecent actions: none\nRoom: You are in the kitchen."


CANDS = ["take apple", "open fridge", "look around"]


# The episode so far, oldest first: (action, the observation it led to); the last observation is OBS.
MEMORY = [
    ("look around", "Inventory: empty\nRecent actions: none\nRoom: You are in the hall."),
    ("go west", OBS),
]


def run(cmd: list[str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def cpp_build():
    assert shutil.which("cmake"), "cmake is missing: apt-get install cmake (or run make cpp)"
    conf = run(["cmake", "-S", str(ROOT), "-B", str(BUILD), "-DCMAKE_BUILD_TYPE=Release"])
    assert conf.returncode == 0, (
        f"cmake configure failed (make cpp installs libzmq/cppzmq/msgpack-c):\n{conf.stderr}"
    )
    build = run(["cmake", "--build", str(BUILD), "-j2"])
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return BUILD


@pytest.fixture(scope="module")
def daemon():
    with Daemon(exported_bundle()) as d:
        yield d


def query(build, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return run([str(build / "edge_query"), *args], timeout=timeout)


def act_args(endpoint: str, memory: list[tuple[str, str]] = ()) -> list[str]:
    args = ["--connect", endpoint, "--instruction", INSTR, "--observation", OBS]
    for c in CANDS:
        args += ["--candidate", c]
    for action, obs in memory:
        args += ["--memory", action, obs]
    return args


def info_of(build, endpoint: str) -> dict:
    p = query(build, "--connect", endpoint, "--op", "info")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def assert_same_reply(cpp: dict, py: dict) -> None:
    assert cpp["ok"] and cpp["action"] == py["action"] and cpp["index"] == py["index"]
    assert cpp["scores"] == pytest.approx(py["scores"], abs=1e-6) and cpp["model"] == py["model"]


def _guard_episodes(path, episodes: int = 60, seed: int = 0) -> int:
    """Random episodes through the Python LoopGuard(world_key), written for edge_loop_guard_test: small pools
    of rooms, inventories and actions so that world states (and, without history, whole observations) repeat,
    scores with ties, and world_key cases. Returns how often the guard overrode the argmax."""
    import random

    from edge.loop_guard import LoopGuard
    from policy.envs.twx import compose_state, world_key

    rng = random.Random(seed)
    rooms = ["You are in the kitchen. A fridge.", "You are in the kitchen. A fridge that contains an apple."]
    items = ["apple", "dirty mug", "pen"]
    actions = ["take apple", "put apple in fridge", "open fridge", "look around", "take pen", "inventory"]
    feedback = ["", "You take the apple.", "That is already open."]
    from policy.envs.twx import TWXAdapter

    hx = str.encode
    # the layout's world parts, as a client reads them from its adapter or the daemon's info reply
    lines = [f"part {hx(p.label).hex()} {int(p.unordered)}" for p in TWXAdapter.layout.parts if p.world]
    key_cases = ["Inventory: pen apple\nRoom: x", "no world lines", "Inventory:\r\nRoom: y\r\nFeedback: z"]
    key_cases.append("Inventory: a pen, an apple,b\nRoom: x")  # twx/2 lists: commas separate words
    key_cases.append("")
    for obs in key_cases:
        lines.append(f"key {hx(obs).hex()} {hx(world_key(obs)).hex()}")
    guard = LoopGuard(world_key)
    picks = 0
    for _ in range(episodes):
        guard.reset()
        lines.append("reset")
        history: list[str] = []
        keep_history = rng.random() < 0.5  # without it, exact observations repeat (rule 2)
        for _ in range(rng.randint(3, 25)):
            inv = " ".join(f"a {x}" for x in rng.sample(items, rng.randint(0, 2))) or "empty"
            obs = compose_state(rng.choice(feedback), rng.choice(rooms), inv, history)
            cands = rng.sample(actions, rng.randint(1, len(actions)))
            scores = [round(rng.uniform(-1, 1), 1) for _ in cands]  # one decimal: ties happen
            pick = guard.choose(obs, cands, scores)
            lines.append(
                f"step {hx(obs).hex()} {pick} {len(cands)} "
                + " ".join(hx(c).hex() for c in cands)
                + " "
                + " ".join(repr(x) for x in scores)
            )
            if keep_history:
                history.append(cands[pick])
            picks += pick != max(range(len(cands)), key=lambda i: (scores[i], -i))
    path.write_text("\n".join(lines) + "\n")
    return picks


def test_cpp_encoder_matches_the_shared_vectors(cpp_build):
    p = run(["ctest", "--test-dir", str(cpp_build), "--output-on-failure"], timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(
        [str(cpp_build / "edge_protocol_test"), str(ROOT / "edge/protocol_vectors/vectors.txt")], timeout=60
    )
    assert p.returncode == 0 and "all match" in p.stdout, p.stderr


def test_cpp_client_round_trip_matches_python_client(cpp_build, daemon):
    with EdgeClient(daemon.endpoint, timeout=10) as c:
        py = c.act(INSTR, OBS, CANDS)
        py_memory = c.act(INSTR, OBS, CANDS, memory=MEMORY)
    p = query(cpp_build, *act_args(daemon.endpoint))
    assert p.returncode == 0, p.stderr
    assert_same_reply(json.loads(p.stdout), py)
    p = query(cpp_build, *act_args(daemon.endpoint, MEMORY))
    assert p.returncode == 0, p.stderr
    assert_same_reply(json.loads(p.stdout), py_memory)
    info = info_of(cpp_build, daemon.endpoint)
    assert info["embedding_dim"] == 384
    err = query(cpp_build, "--connect", daemon.endpoint, "--instruction", INSTR, "--observation", OBS)
    assert err.returncode == 1 and json.loads(err.stdout)["code"] == "no_skills"
    bad = query(cpp_build, "--connect", daemon.endpoint, "--bogus", "1")
    assert bad.returncode == 2 and "unknown option --bogus" in bad.stderr


def test_cpp_client_retries_after_timeout_without_stale_replies(cpp_build, daemon):
    daemon.signal(signal.SIGSTOP)
    timer = threading.Timer(0.6, daemon.signal, args=(signal.SIGCONT,))
    timer.start()
    try:
        p = query(cpp_build, *act_args(daemon.endpoint), "--timeout-ms", "250", "--retries", "5")
    finally:
        timer.join()
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["action"] in CANDS
    daemon.signal(signal.SIGSTOP)
    try:
        t = query(
            cpp_build, "--connect", daemon.endpoint, "--op", "health", "--timeout-ms", "200", "--retries", "1"
        )
    finally:
        daemon.signal(signal.SIGCONT)
    assert t.returncode == 1 and "no reply" in t.stderr and "2 attempt(s)" in t.stderr


def test_cpp_loop_guard_matches_the_python_guard(cpp_build, tmp_path):
    episodes = tmp_path / "guard_episodes.txt"
    overrides = _guard_episodes(episodes)
    assert overrides > 20  # the episodes exercise the guard, not only the argmax
    p = run([str(cpp_build / "edge_loop_guard_test"), str(episodes)], timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    r = json.loads(p.stdout)
    assert r["failures"] == 0 and r["keys"] == 5 and r["steps"] > 500


def test_cpp_bench_tool(cpp_build, daemon):
    fmt = info_of(cpp_build, daemon.endpoint).get("bundle_format", 1)
    p = run(
        [str(cpp_build / "edge_bench"), "--connect", daemon.endpoint, "--n", "50", "--warmup", "5"],
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["n"] == 50 and r["bundle_format"] == fmt and 0 < r["p50_us"] <= r["p99_us"] and r["rps"] > 0
    assert r["input"] == ("embedding" if fmt == 1 else "text")  # format 2 takes text only


@pytest.mark.parametrize("bundle_format", [1, 2])
def test_cpp_tools_follow_the_bundle_format(cpp_build, tmp_path, bundle_format):
    """info reports the bundle format and how much memory the bundle reads; edge_bench sends embeddings to a
    format-1 bundle and text with the episode memory to a format-2 one; the C++ client's text requests with
    memory get the Python client's scores on both."""
    from policy.export import export_random_bundle

    bundle = tmp_path / "b"
    export_random_bundle(bundle, bundle_format=bundle_format, encoder="static")
    with Daemon(bundle) as d:
        info = info_of(cpp_build, d.endpoint)
        assert info["bundle_format"] == bundle_format
        assert (info["memory"] > 0) == (bundle_format == 2)
        bench = [str(cpp_build / "edge_bench"), "--connect", d.endpoint]
        p = run([*bench, *"--n 30 --warmup 2 --k 3 --episode 7".split()], timeout=120)
        assert p.returncode == 0, p.stderr
        r = json.loads(p.stdout)
        assert r["n"] == 30 and r["bundle_format"] == bundle_format
        assert r["input"] == ("embedding" if bundle_format == 1 else "text")
        with EdgeClient(d.endpoint, timeout=30) as c:
            py = c.act(INSTR, OBS, CANDS)
            py_memory = c.act(INSTR, OBS, CANDS, memory=MEMORY)
        if bundle_format == 2:  # the memory reaches the policy, so a client that dropped it would show
            assert py_memory["scores"] != pytest.approx(py["scores"], abs=1e-6)
        for memory, want in (([], py), (MEMORY, py_memory)):
            p = query(cpp_build, *act_args(d.endpoint, memory))
            assert p.returncode == 0, p.stderr
            assert_same_reply(json.loads(p.stdout), want)


def test_cpp_embedding_input_with_argument_features(cpp_build, tmp_path):
    """A bundle on action+arguments features takes K x 3D candidate embeddings; the C++ client sends them
    (edge_bench sizes them from info's candidate_dim)."""
    from policy.export import export_bundle
    from policy.model import ScorerConfig, build_scorer

    model = build_scorer(ScorerConfig(embedding_dim=384, hidden=16, candidate_features="action+arguments"), 0)
    export_bundle(model, tmp_path / "b")
    with Daemon(tmp_path / "b") as d:
        info = json.loads(query(cpp_build, "--connect", d.endpoint, "--op", "info").stdout)
        assert info["embedding_dim"] == 384 and info["candidate_dim"] == 3 * 384
        p = run(
            [str(cpp_build / "edge_bench"), "--connect", d.endpoint, "--n", "5", "--warmup", "1", "--k", "3"],
            timeout=120,
        )
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["n"] == 5


def test_cpp_client_with_curve(cpp_build, tmp_path):
    from tests.support.serving import build_tiny_bundle

    keys, allowed = tmp_path / "keys", tmp_path / "allowed"
    allowed.mkdir()
    for name in ("server", "robot", "other"):
        assert (
            run(
                [sys.executable, "-m", "edge.serve", "keygen", "--out", str(keys), "--name", name], timeout=60
            ).returncode
            == 0
        )
    shutil.copy(keys / "robot.key", allowed)
    with Daemon(
        build_tiny_bundle(tmp_path / "b"),
        "--curve-secret",
        str(keys / "server.key_secret"),
        "--curve-allowed",
        str(allowed),
    ) as d:
        ok = query(
            cpp_build,
            *act_args(d.endpoint),
            "--curve-server-key",
            str(keys / "server.key"),
            "--curve-client-cert",
            str(keys / "robot.key_secret"),
        )
        assert ok.returncode == 0 and json.loads(ok.stdout)["action"] in CANDS, ok.stderr
        refused = query(
            cpp_build,
            *act_args(d.endpoint),
            "--curve-server-key",
            str(keys / "server.key"),
            "--curve-client-cert",
            str(keys / "other.key_secret"),
            "--timeout-ms",
            "500",
            "--retries",
            "0",
        )
        assert refused.returncode == 1 and "no reply" in refused.stderr


@pytest.mark.parametrize("kind", ["transformer", "static"])
def test_each_encoder_kind_serves_through_edge_serve_and_the_cpp_client(cpp_build, tmp_path, kind):
    """A bundle of each encoder kind: edge-serve answers the C++ client's text request with the Python
    client's scores, and reports the kind."""
    if kind == "static":
        from policy.export import export_random_bundle

        bundle = tmp_path / "static"
        export_random_bundle(bundle, encoder="static", candidate_features="action+arguments")
    else:
        bundle = exported_bundle()
    with Daemon(bundle) as d:
        with EdgeClient(d.endpoint, timeout=30) as c:
            py = c.act(INSTR, OBS, CANDS)
            assert c.info()["encoder_kind"] == kind
        p = query(cpp_build, *act_args(d.endpoint))
        assert p.returncode == 0, p.stderr
        cpp = json.loads(p.stdout)
        assert cpp["ok"] and cpp["index"] == py["index"] and cpp["model"] == py["model"]
        assert cpp["scores"] == pytest.approx(py["scores"], abs=1e-6)
