"""tools/setup/gpu_check.sh without a GPU (syntax, arguments, the dry run's plan)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support.paths import ROOT

SCRIPT = ROOT / "tools" / "setup" / "gpu_check.sh"


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)


def test_the_script_parses_and_is_shellcheck_clean():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0
    if shutil.which("shellcheck"):
        sc = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
        assert sc.returncode == 0, sc.stdout


def test_dry_run_plans_the_cuda_build_and_both_benchmarks_and_writes_nothing(tmp_path):
    res = _run("--dry-run", "--results", str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "CMAKE_ARGS=-DGGML_CUDA=on" in out and ".venv-gpu" in out
    lines = {ln.split()[0]: ln for ln in out.splitlines()[1:]}
    assert list(lines) == ["build", "offload", "bench_cpu", "bench_gpu"]
    assert "bootstrap.sh label,env" in lines["build"]
    assert "--gpu-layers 0" in lines["bench_cpu"] and "--gpu-layers -1" in lines["bench_gpu"]
    assert str(tmp_path / "out" / "bench_judge_gpu.json") in lines["bench_gpu"]
    assert not (tmp_path / "out").exists()


def test_dry_run_with_a_model_labels_a_small_file_on_the_gpu_and_on_ray_actors(tmp_path):
    from models.registry import resolve_judge

    gguf = resolve_judge("gemma3-270m").path
    res = _run(
        "--dry-run", "--results", str(tmp_path), "--model", str(gguf), "--ray-actors", "2", "--episodes", "3"
    )
    assert res.returncode == 0, res.stderr
    lines = {ln.split()[0]: ln for ln in res.stdout.splitlines()[1:]}
    assert list(lines)[4:] == ["bench_model_gpu", "collect", "label_gpu", "label_gpu_ray", "same_labels"]
    assert "bootstrap.sh label,env,cluster" in lines["build"]
    assert f"--model {gguf}" in lines["bench_model_gpu"] and "--episodes 3" in lines["collect"]
    assert f"--judge {gguf} --gpu-layers -1" in lines["label_gpu"]
    assert "--judge-actors 2 --gpus-per-actor 0.5000 --ray=local" in lines["label_gpu_ray"]
    assert "-m tools.setup.compare_labels coren" in lines["same_labels"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--steps", "0"], "--steps needs an integer >= 1, got '0'"),
        (["--episodes", "x"], "--episodes needs an integer >= 1, got 'x'"),
        (["--model", "/nonexistent/m.gguf"], "no such file"),
        (["--model"], "--model needs a .gguf file"),
        (["--frobnicate"], "unknown argument '--frobnicate'"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args, message):
    res = _run(*args, "--dry-run")
    assert res.returncode == 2 and message in res.stderr and res.stderr.count("\n") == 1


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    fake = tmp_path / "fake.gguf"
    fake.write_text("not a model")
    res = _run("--model", str(fake), "--dry-run")
    assert res.returncode == 2 and "not a GGUF file" in res.stderr


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU machine runs the real check")
def test_without_a_gpu_the_check_stops_before_building(tmp_path):
    res = _run("--results", str(tmp_path / "r"))
    assert res.returncode == 2 and "no nvidia-smi on PATH" in res.stderr
    assert not (tmp_path / "r" / "logs" / "build.log").exists()
