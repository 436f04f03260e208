"""``edgejudge label audit`` as a person uses it: a terminal session (a pseudo-terminal) driven by keystrokes,
marks that survive the session and resume it, and ``label quality --audit`` reading them."""

from __future__ import annotations

import os
import pty
import select
import sys
import termios
import time

import pytest

from labeler.audit.marks import current, read_marks
from models.trajectory import write_trajectories
from tests.labeler.audit.helpers import labeled_log, mark_truly
from tests.support.paths import ROOT

PROMPT = b"Did this step move the episode toward its task?"  # once per screen


def drive(args: list[str], keys: str, timeout: float = 60.0) -> str:
    """Run ``edgejudge label audit ARGS`` on a pseudo-terminal, pressing each of ``keys`` once the screen
    asks for it; everything the terminal showed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, its terminal the pty
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "models.cli", "label", "audit", *args])
    out = b""
    deadline = time.monotonic() + timeout

    def read_until(pred) -> None:
        nonlocal out
        while not pred() and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # the child closed the terminal
                    return
                if not chunk:
                    return
                out += chunk

    def raw() -> bool:  # the command waits for one key (a key typed before that is flushed, as on a tty)
        return not termios.tcgetattr(fd)[3] & termios.ICANON

    for k, key in enumerate(keys, start=1):
        read_until(lambda k=k: out.count(PROMPT) >= k and raw())
        assert out.count(PROMPT) >= k, out.decode(errors="replace")[-2000:]
        os.write(fd, key.encode())
    read_until(lambda: False)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out.decode(errors="replace")[-2000:]
    os.close(fd)
    return out.decode(errors="replace")


def test_a_person_marks_undoes_skips_quits_and_resumes(tmp_path):
    log = tmp_path / "fleet.jsonl"
    write_trajectories(log, labeled_log(6, 4))
    marks = tmp_path / "fleet.audit.jsonl"
    # step 1 progress, step 2 harmful, a wrong key, undo (back to step 2), neither, skip step 3, step 4
    # progress, quit
    screen = drive([str(log), "--steps", "6"], "phxunspq")
    assert "Task    put every thing in the box" in screen and "(press one key:" in screen
    assert "(undone)" in screen
    assert "3 marks made, 3 steps marked by person in" in screen and "label quality" in screen
    standing = current(read_marks(marks), "person")
    assert sorted(m.mark for m in standing.values()) == ["neither", "progress", "progress"]
    assert [m.mark for m in read_marks(marks)].count("undone") == 1
    again = drive([str(log), "--steps", "6"], "q")  # the marked steps are not shown again
    assert "step 4 of 6 (3 marked)" in again and "0 marks made, 3 steps marked" in again


def test_label_quality_reads_the_audit_and_names_the_channel_it_supports(tmp_path, cli):
    log = tmp_path / "fleet.jsonl"
    trajs = labeled_log(6, 4)
    write_trajectories(log, trajs)
    marks = tmp_path / "marks.jsonl"
    mark_truly(marks, trajs)
    p = cli("label", "quality", str(log), "--check", "--audit", str(marks), check=True)
    assert "train on good.r: the audit supports its step credit (1.000)" in p.stdout
    assert "bad.r" in p.stdout and "audit disagrees" in p.stdout  # the check never vouches for it
    assert "warning: bad.r: the steps an audit marked as progress are not the ones" in p.stdout
    import json

    d = json.loads(cli("label", "quality", str(log), "--audit", str(marks), "--json", check=True).stdout)
    by_channel = {a["channel"]: a for a in d["audit"]}
    assert by_channel["good.r"]["verdict"] == "supported" and by_channel["bad.r"]["verdict"] == "contradicted"


@pytest.mark.real
def test_train_reward_auto_trains_on_the_channel_the_audit_supports(tmp_path, cli):
    log = tmp_path / "fleet.jsonl"
    trajs = labeled_log(6, 4)
    write_trajectories(log, trajs)
    args = ["train", str(log), "--algo", "iql", "--reward", "auto", "--steps", "2", "--set", "hidden=8"]
    refused = cli(*args, "--out", str(tmp_path / "a"))
    assert (
        refused.returncode == 2
        and "no channel chosen for" in refused.stderr
        and "label audit" in refused.stderr
    )
    marks = tmp_path / "marks.jsonl"
    mark_truly(marks, trajs)
    cli("label", "quality", str(log), "--audit", str(marks), check=True)
    p = cli(*args, "--out", str(tmp_path / "b"), "--no-progress", check=True)
    assert "reward auto: good.r (the audit by person supports it: AUROC 1.000" in p.stderr
    assert "reward good.r" in p.stdout
