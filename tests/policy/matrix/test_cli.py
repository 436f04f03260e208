"""``edgejudge matrix``: a tiny real matrix on TWC (collect, cut, build a rubric, label, train, export,
edge-serve, random and the LLM-as-agent), its JSON / Markdown / PNG, a second run that recomputes nothing, and
the plan and the errors without running anything; the label grid (``edgejudge matrix labels``) on two tiny
worlds with the real judge, resumed."""

from __future__ import annotations

import json

import pytest

from policy.matrix.labels_audit import AUDIT_VERSION


def expanded(payload: dict) -> list[dict]:
    """A rows file's rows with their configuration's fields (the file holds them once, under ``config``)."""
    return [{**r["config"], **r} for r in payload["rows"]]


@pytest.mark.real
def test_tiny_matrix_writes_json_md_png_and_resumes(tmp_path, cli):
    out = tmp_path / "res" / "m"
    cmd = [
        "matrix", "--world", "twc-easy=twx:twc@5", "--sizes", "6",
        "--seeds", "0", "--sources", "trca,trca-built", "--algos", "iql", "--clients", "guard",
        "--test-episodes", "2", "--llm-episodes", "1", "--steps", "20", "--work-dir", str(tmp_path / "work"),
        "--out", str(out),
    ]  # fmt: skip

    def run():
        p = cli(*cmd, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        return p.stdout

    first = run()
    assert "5 rows computed, 0 reused, 0 unfinished" in first
    payload = json.loads((tmp_path / "res" / "m.json").read_text())
    rows = {(r["algo"], r["source"], r["runner"]): r for r in expanded(payload)}
    assert set(rows) == {("iql", "trca", "edge-serve"), ("iql", "trca", "in-process"),
                         ("iql", "trca-built", "edge-serve"), ("random", "-", "in-process"),
                         ("llm-agent", "-", "in-process")}  # fmt: skip
    for r in rows.values():
        assert r["status"] == "ok" and r["world"] == "twc-easy" and r["episodes"] in (1, 2)
        assert 0 <= r["ci95"][0] <= r["success_rate"] <= r["ci95"][1] <= 1 and r["mean_score"] is not None
        assert {"source", "algo", "train_episodes", "seed", "client", "config"} <= set(r)
    served = rows[("iql", "trca", "edge-serve")]
    assert served["train_episodes"] == 6 and served["source"] == "trca" and served["client"] == "guard"
    assert served["train_success_rate"] <= 0.3 and served["detour_penalty"] == 0.05
    # every trained row: its decisions on the test gold paths, and the labels it learned from
    assert served["gold_decisions"]["decisions"] > 0 and "take" in served["gold_decisions"]["verbs"]
    labels = served["label_quality"]
    assert labels["channel"] == "trca.total" and 0 <= labels["auroc_progress"] <= 1
    check = rows[("iql", "trca", "in-process")]["agrees_with_edge_serve"]
    assert check == {"episodes_equal": 2, "of": 2}  # the in-process runner acts exactly as edge-serve
    md = (tmp_path / "res" / "m.md").read_text()
    assert (
        "| twc-easy | IQL, TRCA (shipped rubric) |" in md
        and "| twc-easy | IQL, TRCA (rubric built from the data, unreviewed) |" in md
        and "| twc-easy | LLM-as-agent | " in md
        and "2 of 2 episodes identical" in md
    )
    assert (tmp_path / "res" / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    full = expanded(json.loads((tmp_path / "work" / "rows" / "m.full.json").read_text()))
    assert len(full) == 5 and all(r["per_episode"] for r in full) and "per_episode" not in json.dumps(payload)
    ckpts = list((tmp_path / "work").glob("*/ckpt/*/checkpoint.json"))
    built = rows[("iql", "trca-built", "edge-serve")]
    assert built["detour_penalty"] == 0.05 and built["train_episodes"] == 6
    rubrics = list((tmp_path / "work").glob("*/rubric-n6.*.toml"))  # built from the 6-episode file alone
    assert [r.name for r in rubrics] == ["rubric-n6.twc.toml"]
    assert len(ckpts) == 2 and not list((tmp_path / "work").glob("*/bundle/*"))  # bundles removed after use
    mtime = ckpts[0].stat().st_mtime

    second = run()
    assert "0 rows computed, 5 reused, 0 unfinished" in second
    again = json.loads((tmp_path / "res" / "m.json").read_text())
    assert again["rows"] == payload["rows"] and ckpts[0].stat().st_mtime == mtime
    assert len(again["meta"]["runs"]) == 2
    assert again["meta"]["command"].startswith("edgejudge matrix --world twc-easy=twx:twc@5 --sizes 6")
    assert "--work-dir" not in again["meta"]["command"]  # where the files were is not part of the rows

    # a row made before decisions and label quality were recorded gets them from its checkpoint
    for r in again["rows"]:
        if r["config"]["source"] == "trca-built":
            del r["gold_decisions"], r["label_quality"]
    (tmp_path / "res" / "m.json").write_text(json.dumps(again))
    assert "0 rows computed, 5 reused" in run()
    third = expanded(json.loads((tmp_path / "res" / "m.json").read_text()))
    third = {(r["source"], r["runner"]): r for r in third}
    built_again = third[("trca-built", "edge-serve")]
    assert built_again["gold_decisions"] == built["gold_decisions"]
    assert built_again["label_quality"] == built["label_quality"]


@pytest.mark.real
def test_tiny_label_grid_builds_labels_measures_pools_and_resumes(tmp_path, cli):
    out, work = tmp_path / "res" / "l", tmp_path / "work"
    base = ["matrix", "labels", "--world", "twc-easy=twx:twc@8", "--episodes", "6",
            "--max-success-rate", "0.5", "--work-dir", str(work), "--out", str(out)]  # fmt: skip
    grid = ["--shapes", "full,plain", "--methods", "sparse,success,potential,trca-built"]

    def run(*args: str) -> str:
        p = cli(*base, *args, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        return p.stdout

    assert "8 rows computed, 8 of 8 rows with a result" in run(*grid)
    rows = {(r["shape"], r["method"]): r for r in expanded(json.loads(out.with_suffix(".json").read_text()))}
    for r in rows.values():
        assert r["status"] == "ok" and r["world"] == "twc-easy" and r["trajectories"] == 6
        assert r["split"] == "test" and r["successes"] <= 3 and 0 <= r["auroc_progress"] <= 1
    built = rows[("full", "trca-built")]
    assert (
        built["channel"] == "trca.total"
        and built["check"] == "in-sample"
        and "trca.foundational" in built["channels"]
    )
    assert rows[("plain", "success")]["auroc_progress"] == rows[("full", "success")]["auroc_progress"]
    assert rows[("full", "sparse")]["channel"] == "env.reward" and rows[("full", "sparse")]["check"] is None
    # one judge-built rubric per shape, from that shape's own file
    assert sorted(p.name for p in work.glob("*/rubric-n6*.toml")) == [
        "rubric-n6.plain.twc.toml",
        "rubric-n6.twc.toml",
    ]
    md = out.with_suffix(".md").read_text()
    assert "### plain text (flattened, no layout)" in md and "| twc-easy | 6 | " in md and "(in-sample)" in md

    assert "0 rows computed, 8 of 8 rows with a result" in run(*grid)  # resumed: nothing recomputed
    # a second world: its rows and the pooled ones are new, twc-easy's are reused
    both = run("--world", "cw=twx:cookingworld@8", "--shapes", "full", "--methods", "sparse,success")
    assert "4 rows computed, 6 of 6 rows with a result" in both
    payload = json.loads(out.with_suffix(".json").read_text())
    pooled = [r for r in expanded(payload) if r["world"] == "pooled"]
    assert len(pooled) == 2 and all(r["trajectories"] == 12 for r in pooled)
    assert payload["meta"]["command"].startswith("edgejudge matrix labels --world twc-easy=twx:twc@8")
    assert "| pooled, 2 worlds | 12 |" in out.with_suffix(".md").read_text()
    # the judge audits the labeled log: a new row (its key holds the audit), the same labels beside the choice
    assert "1 rows computed, 1 of 1 rows with a result" in run("--shapes", "full", "--methods", "potential",
                                                               "--audit", "12")  # fmt: skip
    payload = json.loads(out.with_suffix(".json").read_text())
    audited = next(r for r in expanded(payload) if r.get("audit_steps") == 12)
    assert audited["auroc_progress"] == rows[("full", "potential")]["auroc_progress"]
    a = audited["audit"]
    assert (
        a["by"] == "judge:gemma3-270m" and a["asked"] == 12 and a["queries"] == 24 and 0 <= a["marked"] <= 12
    )
    assert set(a["channels"]) == {"potential.delta", "potential.phi", "potential.support", "audit.spread"}
    assert a["choice"] is None or a["choice"] in a["channels"]
    assert a["version"] == AUDIT_VERSION and (a["consistency"] is None or 0 <= a["consistency"] <= 1)
    # the same audit by the log's own score progress: rows of their own, no judge asked
    truth_run = run("--shapes", "full", "--methods", "potential", "--audit", "12", "--auditor", "truth")
    assert "1 rows computed, 1 of 1 rows with a result" in truth_run
    payload = json.loads(out.with_suffix(".json").read_text())
    truth = next(r for r in expanded(payload) if r.get("auditor") == "truth")["audit"]
    assert truth["by"] == "truth" and truth["queries"] == 0 and truth["asked"] == truth["marked"] <= 12
    assert a["flag_auroc_progress"] == rows[("full", "success")]["auroc_progress"]  # the same log's flag
    heading = "### The check's choice against per-step AUROC (an audit by the log's own score progress of 12 "
    assert heading in out.with_suffix(".md").read_text()
    # a given log (any collector's) instead of a collection: rows keyed by its content, nothing collected
    pool = next(work.glob("twc-easy-*/pool-*.jsonl.gz"))
    p = cli(*base, "--pool", f"twc-easy={pool}", "--shapes", "full", "--methods", "sparse,success",
            timeout=600)  # fmt: skip
    assert p.returncode == 0 and "2 rows computed" in p.stdout, p.stderr[-3000:]
    assert "collect" not in p.stderr and "the given log" in p.stderr
    given = [r for r in expanded(json.loads(out.with_suffix(".json").read_text())) if "pool" in r]
    assert len(given) == 2 and all("behaviour" not in r and r["trajectories"] == 6 for r in given)
    same_cut = {rows[("full", m)]["auroc_progress"] for m in ("sparse", "success")}
    assert {r["auroc_progress"] for r in given} == same_cut


def test_an_empty_expert_size_list_plans_no_ceiling_rows(tmp_path, cli):
    def planned(*extra: str) -> str:
        p = cli("matrix", "--world", "twc-easy", "--sizes", "120", "--seeds", "0", "--sources", "sparse",
                "--algos", "bc", "--llm-episodes", "0", "--work-dir", str(tmp_path),
                "--out", str(tmp_path / "m"), "--dry-run", *extra)  # fmt: skip
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout

    assert "bc/expert" in planned()  # not given: the preset's ceiling sizes
    assert "bc/expert" not in planned("--expert-sizes", "")
    assert "bc/expert" not in planned("--expert-sizes", "0")
    assert not list(tmp_path.iterdir())  # a dry run writes nothing


@pytest.mark.parametrize(
    "args,message",
    [
        (["--world", "twx twc"], "bad world 'twx twc'"),
        (["--world", "nope:task"], "unknown environment adapter 'nope'"),
        (["--sizes", "10,x"], "'10,x': expected integers separated by commas"),
        (["--sources", "sparse,trcaa"], "unknown source, algorithm or client: trcaa"),
        (["--round-set", "detours=false"], "'detours=false': expected RECIPE:KEY=VALUE"),
        (["--round-set", "cred:detours=false"], "with a recipe among"),
        (
            ["--round-rubric", "extend", "--sources", "sparse,trca"],
            "no source of the plan labels with a judge-built",
        ),
    ],
)
def test_bad_input_is_one_clear_error_before_any_work(tmp_path, args, message):
    from click.testing import CliRunner

    from models.cli import main

    res = CliRunner().invoke(
        main, ["matrix", "--work-dir", str(tmp_path / "w"), "--out", str(tmp_path / "m"), *args]
    )
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output
    assert not list(tmp_path.iterdir())


def test_a_machine_without_edge_serve_is_told_what_to_install_before_any_work(tmp_path, monkeypatch):
    import importlib.util

    from click.testing import CliRunner

    from models.cli import main

    find = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "zmq" else find(name, *a)
    )
    res = CliRunner().invoke(
        main,
        ["matrix", "--world", "twx:twc", "--work-dir", str(tmp_path / "w"), "--out", str(tmp_path / "m")],
    )
    assert res.exit_code == 1 and "needs zmq: pip install 'edgejudge[edge,train,env]'" in res.output
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "args,message",
    [
        (["--shapes", "full,xml"], "unknown log shape or label method: xml"),
        (["--methods", "trca,judge"], "unknown log shape or label method: judge"),
        (["--episodes", "0"], "sizes >= 1"),
        (["--pool", "robot.jsonl"], "expected LABEL=FILE"),
        (["--pool", "cw=robot.jsonl"], "'cw' is not a --world label (twc-easy)"),
        (["--pool", "twc-easy=no/such/log.jsonl"], "no/such/log.jsonl: no such file"),
    ],
)
def test_the_label_grid_refuses_bad_input_before_any_work(tmp_path, args, message):
    from click.testing import CliRunner

    from models.cli import main

    res = CliRunner().invoke(
        main,
        ["matrix", "labels", "--world", "twc-easy", "--work-dir", str(tmp_path / "w"),
         "--out", str(tmp_path / "l"), *args],
    )  # fmt: skip
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output
    assert not list(tmp_path.iterdir())


def test_help_explains_the_command():
    from click.testing import CliRunner

    from models.cli import main

    out = CliRunner().invoke(main, ["matrix", "--help"], prog_name="edgejudge", terminal_width=120).output
    for text in ("Usage: edgejudge matrix", "[LABEL=]ADAPTER:TASK[PARAMS]@MAX_STEPS", "--sources", "--merge",
                 "--dry-run", "OUT.json"):  # fmt: skip
        assert text in out
