"""What a SIGKILLed ``--ray`` driver leaves behind, and how the next local Ray reports it.

The real test starts a local Ray (1 CPU) in a driver process, SIGKILLs the driver, finds its raylet's two
agents still running, and checks that the next local session names them; every process it made is ended."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from labeler.cluster.session import StaleProcess, describe_stale, stale_ray_processes
from tests.support.paths import ROOT

SESSION = """
import json, sys, time
from labeler.cluster.options import ClusterConfig
from labeler.cluster.session import ray_session
with ray_session(ClusterConfig(address=None, judge_actors=1, cpus_per_actor=1.0)) as info:
    print(json.dumps(info), flush=True)
    if sys.argv[1] == "wait":
        time.sleep(600)
"""


def _fake_proc(root, pid: int, cmdline: bytes, environ: bytes) -> None:
    d = root / str(pid)
    d.mkdir()
    (d / "cmdline").write_bytes(cmdline)
    (d / "environ").write_bytes(environ)


def _pids_of_raylet(raylet: int) -> list[int]:
    return [p.pid for p in stale_ray_processes() if p.raylet_pid == raylet]


def _children(pid: int) -> dict[int, str]:
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            with open(f"/proc/{d}/cmdline", "rb") as f:
                exe = os.path.basename(f.read().split(b"\0", 1)[0]).decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out[int(d)] = exe
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_stale_processes_are_ray_processes_whose_raylet_is_gone(tmp_path):
    _fake_proc(tmp_path, 10, b"/opt/ray/core/src/ray/raylet/raylet\0--node", b"HOME=/root\0")
    _fake_proc(tmp_path, 11, b"ray::DashboardAgent\0", b"A=1\0RAY_RAYLET_PID=10\0")  # its raylet runs
    _fake_proc(tmp_path, 21, b"ray::DashboardAgent\0", b"RAY_RAYLET_PID=20\0")  # raylet 20 is gone
    _fake_proc(tmp_path, 22, b"ray::RuntimeEnvAgent   \0", b"RAY_RAYLET_PID=20\0X=y=z\0")
    _fake_proc(tmp_path, 23, b"python\0train.py\0", b"RAY_RAYLET_PID=20\0")  # not a Ray process
    _fake_proc(tmp_path, 24, b"ray::IDLE\0", b"RAY_RAYLET_PID=11\0")  # pid 11 is no raylet
    # no RAY_RAYLET_PID (agents of some Ray versions): the parent decides
    _fake_proc(tmp_path, 1, b"/sbin/init\0", b"")
    _fake_proc(tmp_path, 31, b"ray::DashboardAgent\0", b"A=1\0")
    (tmp_path / "31" / "stat").write_text("31 (ray::Dashboard) S 1 31 31 0")  # orphaned: init adopted it
    _fake_proc(tmp_path, 32, b"ray::RuntimeEnvAgent\0", b"A=1\0")
    (tmp_path / "32" / "stat").write_text("32 (ray::RuntimeEnv) S 10 32 32 0")  # its raylet (10) runs
    (tmp_path / "self").mkdir()
    found = sorted(stale_ray_processes(str(tmp_path)), key=lambda p: p.pid)
    assert found == [
        StaleProcess(21, "ray::DashboardAgent", 20),
        StaleProcess(22, "ray::RuntimeEnvAgent", 20),
        StaleProcess(24, "ray::IDLE", 11),
        StaleProcess(31, "ray::DashboardAgent", 0),
    ]
    line = describe_stale(found[:2])
    assert "ray::DashboardAgent (pid 21), ray::RuntimeEnvAgent (pid 22)" in line and "\n" not in line
    assert stale_ray_processes(str(tmp_path / "missing")) == []


@pytest.mark.real
def test_the_next_local_ray_reports_what_a_killed_driver_left():
    pytest.importorskip("ray", reason="the cluster extra is not installed")
    tmp = tempfile.mkdtemp(prefix="ejst", dir="/tmp")  # short: Ray's socket paths must stay < 108 bytes
    env = {**os.environ, "RAY_TMPDIR": tmp, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(ROOT)}
    env.pop("RAY_ADDRESS", None)
    raylet, left, agent_pids = 0, [], set()
    driver = subprocess.Popen(
        [sys.executable, "-c", SESSION, "wait"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        info = json.loads(driver.stdout.readline())
        assert info["stale_processes"] == [] or all(isinstance(p, int) for p in info["stale_processes"])
        raylet = next(p for p, exe in _children(driver.pid).items() if exe == "raylet")
        # Wait until both agents carry their Ray titles: on a loaded box an agent is a plain python process
        # for seconds after it starts, and an untitled process is not recognisable as Ray's.
        agents = {"ray::DashboardAgent", "ray::RuntimeEnvAgent"}
        deadline = time.monotonic() + 120
        while not agents <= set(_children(raylet).values()) and time.monotonic() < deadline:
            time.sleep(0.5)
        agent_pids = {p for p, exe in _children(raylet).items() if exe in agents}
        assert len(agent_pids) == 2, _children(raylet)
        driver.kill()  # SIGKILL: no clean-up of any kind
        driver.wait()
        while _alive(raylet) and time.monotonic() < deadline:  # the raylet shares the driver's fate
            time.sleep(0.2)
        assert not _alive(raylet)
        time.sleep(3)  # the raylet's workers exit at once; its agents stay
        left = [p.pid for p in stale_ray_processes() if p.pid in agent_pids]
        names = {p.name for p in stale_ray_processes() if p.pid in left}
        assert agents <= names, names

        nxt = subprocess.run(
            [sys.executable, "-c", SESSION, "exit"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert nxt.returncode == 0, nxt.stderr[-2000:]
        assert set(left) <= set(json.loads(nxt.stdout.splitlines()[-1])["stale_processes"])
        warning = next(ln for ln in nxt.stderr.splitlines() if ln.startswith("warning: "))
        assert "whose driver was killed" in warning and all(f"(pid {p})" in warning for p in left)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        for pid in set(left) | agent_pids | set(_pids_of_raylet(raylet) if raylet else []):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in left) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(p) for p in left)
