"""The judge audits the steps: the real embedded judge marks a sample (two prompts, marked where they agree),
cached, read by ``label quality --audit`` like a person's marks."""

from __future__ import annotations

import re

import pytest

from labeler.audit.marks import read_marks
from models.trajectory import write_trajectories
from tests.labeler.audit.helpers import labeled_log


@pytest.mark.real
def test_the_judge_marks_a_sample_and_the_check_reads_it(tmp_path, cli):
    log = tmp_path / "fleet.jsonl"
    write_trajectories(log, labeled_log(4, 4))
    cache = tmp_path / "judge.sqlite"
    args = ["label", "audit", str(log), "--auditor", "judge", "--steps", "10", "--cache", str(cache)]
    first = cli(*args, check=True, timeout=600).stdout
    m = re.search(r"judge:gemma3-270m: (\d+) of 10 steps marked \(its two prompts agreed; the others "
                  r"unsure\), (\d+) progress; 20 queries \(0 cached\)", first)  # fmt: skip
    assert m, first
    marks = read_marks(tmp_path / "fleet.audit.jsonl")
    assert len(marks) == 10 and {x.by for x in marks} == {"judge:gemma3-270m"}  # one per step asked
    assert sum(x.mark != "unsure" for x in marks) == int(m[1]) and {x.mark for x in marks} <= {
        "progress",
        "neither",
        "unsure",
    }
    assert sum(x.mark == "progress" for x in marks) == int(m[2])
    # a rerun asks nothing: every sampled step was asked (an unsure one too)
    again = cli(*args, check=True, timeout=600).stdout
    assert "was asked every one of the 10 sampled steps already" in again
    assert len(read_marks(tmp_path / "fleet.audit.jsonl")) == 10
    report = cli(
        "label", "quality", str(log), "--audit", str(tmp_path / "fleet.audit.jsonl"), check=True
    ).stdout
    assert "audit by judge:gemma3-270m:" in report and "good.r" in report
