"""What the robot side's tests share: the C++ client built once per run (edge/cpp, the top-level
CMakeLists.txt), reused between runs in .pytest_cache/edge-cpp-build; pytest-xdist workers take turns on the
build under a file lock."""

from __future__ import annotations

import fcntl
import shutil
import subprocess

import pytest

from tests.support.paths import ROOT

BUILD = ROOT / ".pytest_cache" / "edge-cpp-build"


def run(cmd: list[str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def cpp_build():
    assert shutil.which("cmake"), "cmake is missing: apt-get install cmake (or run make cpp)"
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(BUILD.parent / "edge-cpp-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        conf = run(["cmake", "-S", str(ROOT), "-B", str(BUILD), "-DCMAKE_BUILD_TYPE=Release"])
        assert conf.returncode == 0, (
            f"cmake configure failed (make cpp installs libzmq/cppzmq/msgpack-c):\n{conf.stderr}"
        )
        build = run(["cmake", "--build", str(BUILD), "-j2"])
        assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return BUILD
