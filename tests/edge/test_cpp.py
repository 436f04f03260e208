"""The C++ client (edge/cpp, built by the top-level CMakeLists.txt: the ``cpp_build`` fixture of
tests/edge/conftest.py) against the shared protocol vectors and a real edge-serve daemon."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading

import pytest

from edge.client import EdgeClient
from tests.edge.conftest import run
from tests.support.serving import ROOT, Daemon, exported_bundle

pytestmark = pytest.mark.real


INSTR = "put the apple in the fridge"


OBS = "Inventory: empty\nRecent actions: none\nRoom: You are in the kitchen."


CANDS = ["take apple", "open fridge", "look around"]


# The episode so far, oldest first: (action, the observation it led to); the last observation is OBS.
MEMORY = [
    ("look around", "Inventory: empty\nRecent actions: none\nRoom: You are in the hall."),
    ("go west", OBS),
]


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


def _hx(text: str) -> str:
    """A text as one token of the episodes file: its UTF-8 bytes in hex, "-" for the empty text."""
    return text.encode().hex() or "-"


class _Watched:
    """A world key called as the loop guard calls it, remembering the last key it gave."""

    def __init__(self, key) -> None:
        self.key, self.last = key, ""

    def __call__(self, text: str, actions) -> str:
        self.last = self.key(text, actions)
        return self.last


def _step_line(obs: str, pick: int, cands: list[str], scores: list[float], world: str) -> str:
    return (
        f"step {_hx(obs)} {pick} {len(cands)} "
        + " ".join(_hx(c) for c in cands)
        + " "
        + " ".join(repr(x) for x in scores)
        + f" {_hx(world)}"
    )


def _keyed_guard(lines: list[str], layout, cases):
    """One ``key`` line per ``(state text, actions)`` case (the text, the layout's key and the actions), then
    a Python guard keyed by the layout's world key, watched: ``(key, guard)``."""
    from edge.loop_guard import LoopGuard

    for obs, taken in cases:
        want = layout.world_key(obs, taken)
        lines.append(f"key {_hx(obs)} {_hx(want)} " + " ".join(_hx(a) for a in taken))
    key = _Watched(layout.world_key)
    return key, LoopGuard(key=key)


def _guarded_step(lines: list[str], guard, key, rng, obs: str, cands: list[str]) -> tuple[str, bool]:
    """The guard's pick among ``cands`` under random scores (one decimal: ties happen), logged as a ``step``
    line with the key it used; the action picked and whether it overrode the argmax."""
    scores = [round(rng.uniform(-1, 1), 1) for _ in cands]
    pick = guard.choose(obs, cands, scores)
    lines.append(_step_line(obs, pick, cands, scores, key.last))
    return cands[pick], pick != max(range(len(cands)), key=lambda i: (scores[i], -i))


def _twx_episodes(lines: list[str], rng, episodes: int) -> int:
    """TextWorld-shaped states (a layout with world parts): small pools of rooms, inventories and actions so
    that world states (and, without history, whole observations) repeat, scores with ties, and key cases."""
    from policy.worlds.adapters.twx import TWXAdapter, compose_state

    layout = TWXAdapter.layout
    rooms = ["You are in the kitchen. A fridge.", "You are in the kitchen. A fridge that contains an apple."]
    items = ["apple", "dirty mug", "pen"]
    actions = ["take apple", "put apple in fridge", "open fridge", "look around", "take pen", "inventory"]
    feedback = ["", "You take the apple.", "That is already open."]
    # the layout's world parts, as a client reads them from its adapter or the daemon's info reply
    lines.append("layout")
    lines += [f"part {_hx(p.label)} {int(p.unordered)}" for p in layout.parts if p.world]
    key_cases = ["Inventory: pen apple\nRoom: x", "no world lines", "Inventory:\r\nRoom: y\r\nFeedback: z"]
    key_cases.append("Inventory: a pen, an apple,b\nRoom: x")  # twx/2 lists: commas separate words
    key_cases += ["", "  Room:\tx  y \nInventory:pen\nRoom : z\n:Room: w\x0bInventory: \xa0Pen\u2028"]
    cases = [(obs, taken) for obs in key_cases for taken in ([], ["look around", "take pen"])]
    key, guard = _keyed_guard(lines, layout, cases)
    picks = 0
    for _ in range(episodes):
        guard.reset()
        lines.append("reset")
        history: list[str] = []
        keep_history = rng.random() < 0.5  # without it, exact observations repeat (rule 2)
        for _ in range(rng.randint(3, 25)):
            inv = " ".join(f"a {x}" for x in rng.sample(items, rng.randint(0, 2))) or "empty"
            obs = compose_state(rng.choice(feedback), rng.choice(rooms), inv, history)
            action, overrode = _guarded_step(
                lines, guard, key, rng, obs, rng.sample(actions, rng.randint(1, 6))
            )
            if keep_history:
                history.append(action)
            picks += overrode
    return picks


def _plain_episodes(lines: list[str], rng, episodes: int) -> int:
    """A plain log (no world parts) whose states echo the actions the guard took: the key of every state is
    the layout's with the episode's actions so far (tests/support/plain_logs.py). The world moves between a
    few fixed texts by a per-episode table, so repeated no-ops and loops happen."""
    from models.state_layout import PLAIN_LAYOUT
    from tests.support.plain_logs import ACTIONS, BREAKS, SENTENCES, echo, plain_state

    lines.append("layout")  # no parts: the plain layout
    cases = []
    for _ in range(40):
        taken = [rng.choice(ACTIONS) for _ in range(rng.randint(0, 4))]
        cases.append((taken, plain_state(rng, taken)))
    for c in map(chr, range(0x3001)):  # every white space character of Python's str, line breaks included
        if c.isspace():
            cases.append((["Take  cup", "wait"], f"{c}A.{c}take{c}cup,{c}WAIT.{c}b!{c}{c}none{c}c?x{c}"))
    key, guard = _keyed_guard(lines, PLAIN_LAYOUT, [(obs, taken) for taken, obs in cases])
    picks = 0
    for _ in range(episodes):
        guard.reset()
        lines.append("reset")
        worlds = [" ".join(rng.sample(SENTENCES, rng.randint(1, 3))) for _ in range(3)]
        moves = {(w, a): rng.choice([w, w, rng.randrange(3)]) for w in range(3) for a in ACTIONS}
        world, history = 0, []
        for _ in range(rng.randint(3, 25)):
            obs = worlds[world] + rng.choice(BREAKS) + echo(rng, history)
            if rng.random() < 0.2:
                obs = plain_state(rng, history)
            action, overrode = _guarded_step(
                lines, guard, key, rng, obs, rng.sample(ACTIONS, rng.randint(1, len(ACTIONS)))
            )
            history.append(action)
            world = moves[world, action]
            picks += overrode
    return picks


def _guard_episodes(path, episodes: int = 60, seed: int = 0) -> tuple[int, int]:
    """Random episodes through the Python LoopGuard, keyed by the layout's world key with the episode's
    actions, written for edge_loop_guard_test: TextWorld-shaped states, then a plain log that echoes its
    actions. Returns how often the guard overrode the argmax in each."""
    import random

    rng = random.Random(seed)
    lines: list[str] = []
    overrides = _twx_episodes(lines, rng, episodes), _plain_episodes(lines, rng, episodes)
    path.write_text("\n".join(lines) + "\n")
    return overrides


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
    structured, plain = _guard_episodes(episodes)
    assert structured > 20 and plain > 20  # the episodes exercise the guard, not only the argmax
    p = run([str(cpp_build / "edge_loop_guard_test"), str(episodes)], timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    r = json.loads(p.stdout)
    keys = sum(line.startswith("key ") for line in episodes.read_text().splitlines())
    assert r["failures"] == 0 and r["keys"] == keys > 60 and r["steps"] > 1000


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


@pytest.mark.parametrize("bundle_format", [1, 2, 3])
def test_cpp_tools_follow_the_bundle_format(cpp_build, tmp_path, bundle_format):
    """info reports the bundle format and how much memory the bundle reads; edge_bench sends embeddings to a
    format-1 bundle and text with the episode memory to a format-2 or 3 one; the C++ client's text requests
    with memory get the Python client's scores on all three."""
    from policy.export.assemble import export_random_bundle

    bundle = tmp_path / "b"
    export_random_bundle(bundle, bundle_format=bundle_format, encoder="static")
    with Daemon(bundle) as d:
        info = info_of(cpp_build, d.endpoint)
        assert info["bundle_format"] == bundle_format
        assert (info["horizon"] > 0) == (bundle_format >= 2)
        bench = [str(cpp_build / "edge_bench"), "--connect", d.endpoint]
        p = run([*bench, *"--n 30 --warmup 2 --k 3 --episode 7".split()], timeout=120)
        assert p.returncode == 0, p.stderr
        r = json.loads(p.stdout)
        assert r["n"] == 30 and r["bundle_format"] == bundle_format
        assert r["input"] == ("embedding" if bundle_format == 1 else "text")
        with EdgeClient(d.endpoint, timeout=30) as c:
            py = c.act(INSTR, OBS, CANDS)
            py_memory = c.act(INSTR, OBS, CANDS, memory=MEMORY)
        if bundle_format >= 2:  # the memory reaches the policy, so a client that dropped it would show
            assert py_memory["scores"] != pytest.approx(py["scores"], abs=1e-6)
        for memory, want in (([], py), (MEMORY, py_memory)):
            p = query(cpp_build, *act_args(d.endpoint, memory))
            assert p.returncode == 0, p.stderr
            assert_same_reply(json.loads(p.stdout), want)


def test_cpp_embedding_input_with_argument_features(cpp_build, tmp_path):
    """A bundle on action+arguments features takes K x 3D candidate embeddings; the C++ client sends them
    (edge_bench sizes them from info's candidate_dim)."""
    from policy.export.assemble import export_bundle
    from policy.scorer.model import ScorerConfig, build_scorer

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
        from policy.export.assemble import export_random_bundle

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


def test_a_client_keeping_only_the_horizon_gets_the_same_scores_as_one_sending_everything(
    cpp_build, tmp_path
):
    """On a real 60-step TWC medium episode, a format-2 bundle behind edge-serve: the Python client sending
    the whole episode, the Python client sending the last ``info['memory']`` pairs, the C++ client sending
    everything and the C++ client following the documented recipe (edge::EpisodeMemory kept at
    info().memory) get bit-identical scores at every step past the horizon."""
    from policy.export.assemble import export_random_bundle
    from policy.worlds.adapters import parse_env
    from policy.worlds.collect import CollectConfig, collect

    (episode,) = collect(
        CollectConfig(env=parse_env("twx:twc", "level=medium"), episodes=1, behaviour="random", max_steps=60)
    )
    assert len(episode.steps) == 60
    pairs = [(s.action, s.next_observation) for s in episode.steps]
    bundle = tmp_path / "b"
    export_random_bundle(bundle, bundle_format=2, encoder="static", seed=1)
    with Daemon(bundle) as d, EdgeClient(d.endpoint, timeout=30) as c:
        horizon = int(c.info()["horizon"])
        assert 0 < horizon < 40
        for t in (horizon + 1, 45, 59):
            s = episode.steps[t]
            full = c.act(episode.instruction, s.observation, s.candidates, memory=pairs[:t])
            kept = c.act(episode.instruction, s.observation, s.candidates, memory=pairs[:t][-horizon:])
            assert kept["scores"] == full["scores"]  # bit for bit
            assert c.act(episode.instruction, s.observation, s.candidates)["scores"] != full["scores"]  # read
            args = [
                "--connect",
                d.endpoint,
                "--instruction",
                episode.instruction,
                "--observation",
                s.observation,
            ]
            args += [x for cand in s.candidates for x in ("--candidate", cand)]
            args += [x for a, o in pairs[:t] for x in ("--memory", a, o)]
            replies = [query(cpp_build, *args, *extra) for extra in ([], ["--keep", "info"])]
            assert all(p.returncode == 0 for p in replies), [p.stderr for p in replies]
            sent_all, kept_cpp = (json.loads(p.stdout)["scores"] for p in replies)
            assert kept_cpp == sent_all  # the same printed digits of the same float32 scores
            assert sent_all == pytest.approx(full["scores"], abs=1e-9)  # the C++ client prints ~10 digits
