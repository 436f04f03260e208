"""``edgejudge label coren`` bad input: each fails fast with one clear line and writes nothing."""

from __future__ import annotations

from models.trajectory import Step, Trajectory, write_trajectories


def _write(path, candidates=("look around", "take plate")):
    steps = [
        Step(
            observation="Room: kitchen",
            action="look around",
            candidates=list(candidates),
            next_observation="Room: kitchen",
            info={"progress": 0.0, "gold": False},
        )
    ]
    write_trajectories(
        path, [Trajectory(id="t0", instruction="Tidy up.", task_type="twc", success=False, steps=steps)]
    )


def test_no_candidates_names_the_fix(cli, tmp_path):
    src = tmp_path / "in.jsonl"
    steps = [Step(observation="o", action="go", candidates=[], next_observation="o2")]
    write_trajectories(src, [Trajectory(id="t0", instruction="i", task_type="x", success=False, steps=steps)])
    out = tmp_path / "out.jsonl"
    proc = cli("label", "coren", str(src), "--out", str(out))
    assert proc.returncode == 1
    assert "trajectory 't0' step 0 has no candidates" in proc.stderr and "'candidates' list" in proc.stderr
    assert not out.exists()


def test_malformed_qa_file_is_file_line(cli, tmp_path):
    src = tmp_path / "in.jsonl"
    _write(src)
    qa = tmp_path / "qa.jsonl"
    qa.write_text(
        '{"instruction": "i", "observation": "o", "answer": "a"}\n{"instruction": "i", "answer": "a"}\n'
    )
    proc = cli("label", "coren", str(src), "--out", str(tmp_path / "o.jsonl"), "--qa", str(qa))
    assert proc.returncode == 1 and f"{qa}:2: observation: missing" in proc.stderr


def test_bad_options_and_inputs(cli, tmp_path):
    src = tmp_path / "in.jsonl"
    _write(src)
    proc = cli("label", "coren", str(src), "--out", str(tmp_path / "o.jsonl"), "--bogus")
    assert proc.returncode == 2 and "--bogus" in proc.stderr
    proc = cli("label", "coren", str(src), "--out", str(tmp_path / "o.jsonl"), "--prompts", "9")
    assert proc.returncode == 1 and "--prompts must be between 1 and 5" in proc.stderr
    proc = cli("label", "coren", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o.jsonl"))
    assert proc.returncode == 1 and "does not exist" in proc.stderr
    proc = cli(
        "label",
        "coren",
        str(src),
        "--out",
        str(tmp_path / "o.jsonl"),
        "--orchestrator",
        str(tmp_path / "none.safetensors"),
    )
    assert proc.returncode == 1 and "no such file" in proc.stderr
    empty = tmp_path / "no-prompts"
    empty.mkdir()
    proc = cli("label", "coren", str(src), "--out", str(tmp_path / "o.jsonl"), "--prompt-dir", str(empty))
    assert proc.returncode == 1 and "--prompts must be between 1 and 0" in proc.stderr
    help_text = cli("label", "coren", "--help", check=True).stdout
    assert "--dry-run" in help_text and "--orchestrator" in help_text and "--prompt-dir" in help_text


def test_dry_run_with_either_prompt_layout(cli, tmp_path):
    """The shipped layout (one shared preamble) and the first one (a header per variant) both load and plan
    (the dry run tokenizes with the real judge); nothing is written."""
    src = tmp_path / "in.jsonl"
    _write(src)
    est: dict[str, str] = {}
    layouts = (
        ("v2", []),
        ("v1", ["--prompt-dir", "labeler/prompts/coren/v1"]),
        ("data", ["--examples", "data"]),
    )
    for name, extra in layouts:
        proc = cli("label", "coren", str(src), "--out", str(tmp_path / "o.jsonl"), "--prompts", "4",
                   "--dry-run", *extra, check=True, timeout=300)  # fmt: skip
        assert not (tmp_path / "o.jsonl").exists()
        est[name] = proc.stdout + proc.stderr
    assert "progress, progress_towards, task_progress, good_step" in est["v2"]
    assert "plain, examples_kitchen, examples_bedroom, examples_bathroom" in est["v1"]
    assert "examples: 1 built from the data" in est["data"]  # the one step changed nothing: a "No" example
