"""The robot's episode log (edge.episode_log): the trajectory format a labeler reads, one synced line per
finished episode, and a log that survives the robot (kill -9 mid-episode, a file cut at every byte of its
last line, a writer that reopens a torn file)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from edge.episode_log import EpisodeLog, EpisodeLogError, cut_torn_tail
from models.state_layout import StateLayout
from models.trajectory import ReadReport, read_trajectories
from tests.support.paths import ROOT

LAYOUT = StateLayout.from_dict(
    {"parts": [{"name": "feedback", "label": "Feedback"}, {"name": "room", "label": "Room", "world": True}]}
)
WORLD = {"state_format": "robot/1", "state_layout": LAYOUT.to_dict(), "adapter": "ignored"}


def _episode(log: EpisodeLog, n: int, success: bool, eid: str | None = None):
    with log.episode("tidy the kitchen", episode_id=eid) as ep:
        for i in range(n):
            state = f"Feedback: step {i}\nRoom: kitchen"
            ep.step(
                state,
                ["take cup", "look"],
                "take cup" if i % 2 else "look",
                f"Feedback: did {i}\nRoom: kitchen",
            )
        return ep.end(success)


def test_finished_episodes_read_back_as_written_with_the_bundles_layout(tmp_path, cli):
    path = tmp_path / "log.jsonl"
    log = EpisodeLog(path, world=WORLD, task_type="tidy", meta={"robot": "r2"}, fsync=False)
    written = [_episode(log, 3, True), _episode(log, 2, False)]
    assert log.written == 2
    back = read_trajectories(path)
    assert [t.to_dict() for t in back] == [t.to_dict() for t in written]
    first = back[0]
    assert first.task_type == "tidy" and first.success and not back[1].success
    assert first.meta["state_layout"] == LAYOUT.to_dict() and first.meta["state_format"] == "robot/1"
    assert first.meta["robot"] == "r2" and "adapter" not in first.meta  # only what the states need
    assert first.view.layout == LAYOUT  # the labelers read the states as the policy did
    assert [s.action for s in first.steps] == ["look", "take cup", "look"]
    assert len({t.id for t in back}) == 2
    proc = cli("data", "validate", str(path))
    assert proc.returncode == 0, proc.stderr


def test_what_the_format_refuses_is_refused_at_the_step_and_nothing_is_written(tmp_path):
    path = tmp_path / "log.jsonl"
    log = EpisodeLog(path, fsync=False)
    ep = log.episode("i")
    with pytest.raises(EpisodeLogError, match="'jump' is not among its 2 candidates"):
        ep.step("s", ["a", "b"], "jump", "t")
    with pytest.raises(EpisodeLogError, match="no step recorded"):
        ep.end(True)
    with pytest.raises(EpisodeLogError, match="reward nan is not finite"):
        ep.step("s", ["a", "b"], "a", "t", reward=float("nan"))
    ep.step("s", ["a", "b"], "a", "t", info={"bad": float("inf")})
    with pytest.raises(EpisodeLogError, match="not JSON compliant"):
        ep.end(True)
    assert not path.exists() or path.read_bytes() == b""
    with pytest.raises(EpisodeLogError, match=r"\.jsonl\); compress it after the run"):
        EpisodeLog(tmp_path / "log.jsonl.gz")


def test_an_episode_left_by_an_exception_is_dropped_and_one_left_without_an_outcome_is_an_error(tmp_path):
    path = tmp_path / "log.jsonl"
    log = EpisodeLog(path, fsync=False)
    with pytest.raises(RuntimeError), log.episode("i") as ep:
        ep.step("s", ["a"], "a", "t")
        raise RuntimeError("the arm stalled")
    with pytest.raises(EpisodeLogError, match="left without end"), log.episode("i") as ep:
        ep.step("s", ["a"], "a", "t")
    _episode(log, 1, True)
    assert len(read_trajectories(path)) == 1


WRITER = """
import os, sys
from edge.episode_log import EpisodeLog
log = EpisodeLog(sys.argv[1])
for n in range(3):
    with log.episode("tidy", episode_id=f"e{n}") as ep:
        ep.step("Feedback: x\\nRoom: kitchen", ["a", "b"], "a", "Feedback: y\\nRoom: kitchen")
        ep.end(n % 2 == 0)
ep = log.episode("tidy", episode_id="e3")
ep.step("Feedback: x\\nRoom: kitchen", ["a", "b"], "b", "Feedback: y\\nRoom: kitchen")
print("mid-episode", flush=True)
sys.stdin.read()
"""


def test_a_writer_killed_mid_episode_leaves_every_finished_episode(tmp_path):
    path = tmp_path / "log.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "mid-episode"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    report = ReadReport()
    assert [t.id for t in read_trajectories(path, report=report)] == ["e0", "e1", "e2"]
    assert report.torn is None


def test_a_file_cut_at_every_byte_of_its_last_line_keeps_every_complete_episode(tmp_path, capfd):
    path = tmp_path / "log.jsonl"
    log = EpisodeLog(path, fsync=False)
    for n in range(3):
        _episode(log, 2, n == 0, eid=f"e{n}")
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1  # the last line's first byte
    last = len(data) - start
    for cut in range(last + 1):
        torn = tmp_path / f"cut{cut}.jsonl"
        torn.write_bytes(data[: start + cut])
        report = ReadReport()
        ids = [t.id for t in read_trajectories(torn, report=report)]
        complete = cut >= last - 1  # the whole line, with or without its newline
        assert ids == (["e0", "e1", "e2"] if complete else ["e0", "e1"]), cut
        err = capfd.readouterr().err
        if complete or cut == 0:
            assert report.torn is None and "torn line" not in err, cut
        else:
            assert report.torn == 3 and f"cut{cut}.jsonl:3: torn line" in err, cut
            assert err.count("torn line") == 1


def test_a_log_reopened_on_a_torn_file_cuts_the_torn_bytes_and_appends_after_the_last_complete_line(
    tmp_path, capfd
):
    path = tmp_path / "log.jsonl"
    log = EpisodeLog(path, fsync=False)
    for n in range(2):
        _episode(log, 2, True, eid=f"e{n}")
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"format": 1, "id": "e2", "instr')  # a power loss inside the third line
    again = EpisodeLog(path, fsync=False)
    assert f"{path}:3: torn line (32 bytes" in capfd.readouterr().err
    assert path.read_bytes() == whole  # the complete lines, byte for byte
    _episode(again, 1, False, eid="e3")
    report = ReadReport()
    assert [t.id for t in read_trajectories(path, report=report)] == ["e0", "e1", "e3"]
    assert report.torn is None
    assert cut_torn_tail(path) == 0  # a file that ends with a newline is left alone


def _hex(text: str) -> str:
    return text.encode().hex() or "-"


KITCHEN = [
    ('Feedback: "hi"\tthere\nRoom: kitchen', ["take cup", "look"], "look", "Feedback: ok\\\nRoom: x", 0.0)
]
HALL = [("", [], "wave", "Room: hall \u2603 \U0001f916", -0.25), ("\x01ctl\x1f", ["a"], "a", "end", 1e-17)]
EPISODES = [("r-1", "tidy the kitchen \u2014 \u00e9t\u00e9", True, KITCHEN), ("r-2", "", False, HALL)]
"""Quotes, backslashes, tabs, newlines, control characters, accents, emoji, an empty instruction and state, a
step without candidates, negative and tiny rewards."""


@pytest.mark.real
def test_the_cpp_writer_writes_the_python_writers_episodes(cpp_build, tmp_path, cli):
    """The same episodes through edge::EpisodeLog and edge.episode_log.EpisodeLog, each appended to a file
    whose last line an earlier run tore: both cut the torn bytes, and the files are equal after parsing (but
    for who recorded them); a text that is not UTF-8 is refused by the C++ writer at its step."""
    import json

    from tests.edge.conftest import run

    py, cpp = tmp_path / "py.jsonl", tmp_path / "cpp.jsonl"
    for torn in (py, cpp):
        torn.write_bytes(b'{"format": 1, "id": "old')
    meta = {"state_format": WORLD["state_format"], "state_layout": WORLD["state_layout"]}
    script = [f"open {_hex(str(cpp))} {_hex('tidy')} {_hex(json.dumps(meta))}"]
    log = EpisodeLog(py, world=WORLD, task_type="tidy", fsync=False)
    for eid, instruction, success, steps in EPISODES:
        ep = log.episode(instruction, episode_id=eid)
        script.append(f"episode {_hex(eid)} {_hex(instruction)}")
        for state, cands, action, nxt, reward in steps:
            ep.step(state, cands, action, nxt, reward=reward)
            script.append(
                f"step {_hex(state)} {_hex(action)} {_hex(nxt)} {reward!r} {len(cands)} "
                + " ".join(_hex(c) for c in cands)
            )
        script.append("bad " + bytes([0x66, 0xC3, 0x28]).hex())  # "f", then a broken 2-byte sequence
        ep.end(success)
        script.append(f"end {int(success)}")
    (tmp_path / "script.txt").write_text("\n".join(script) + "\n")
    p = run([str(cpp_build / "edge_episode_log_test"), str(tmp_path / "script.txt")], timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    assert json.loads(p.stdout) == {"episodes": 2, "refused": 2}
    assert f"{cpp}:1: torn line (24 bytes" in p.stderr

    def parsed(path):
        out = []
        for t in read_trajectories(path):
            d = t.to_dict()
            assert d["meta"].pop("recorded_by") in ("edge.episode_log", "edge::EpisodeLog")
            out.append(d)
        return out

    assert parsed(cpp) == parsed(py) and len(parsed(py)) == 2
    assert cli("data", "validate", str(cpp)).returncode == 0
