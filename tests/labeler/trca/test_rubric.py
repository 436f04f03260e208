"""Rubric files (parse, file:line errors, round trip, ``rubrics validate``) and the embedded rubrics."""

from __future__ import annotations

import pytest

from labeler.trca.rubric import (
    RUBRICS_DIR,
    RubricError,
    dump_rubric,
    load_rubric,
    parse_rubric,
    write_rubric,
)
from tests.support.trca_rubric import GOOD


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def test_parse_good_rubric():
    r = parse_rubric(GOOD, "toy.toml")
    assert r.task_type == "toy" and r.version == 3 and len(r.items) == 8
    assert r.category_sizes() == {"evidence": 2, "execution": 3, "invalidity": 3}
    assert r.items[1].pairs == {"apple": ["fridge"], "dirty sock": ["laundry basket"]}
    assert r.items[7].judge and not r.items[7].has_check and r.items[2].pairs_mismatch
    assert r.build == {"judge_sha256": "abc"} and len(r.sha256) == 64


def test_round_trip_dump_parse(tmp_path):
    r = parse_rubric(GOOD, "toy.toml")
    text = write_rubric(tmp_path / "out.toml", r, header="reviewed\nby hand")
    assert text.startswith("# reviewed\n# by hand\n")
    back = load_rubric(tmp_path / "out.toml")
    assert [vars(a) for a in back.items] == [vars(b) for b in r.items]
    assert back.version == r.version and back.build == r.build
    assert dump_rubric(back, "reviewed\nby hand") == text


@pytest.mark.parametrize(
    "old, new, needle, message",
    [
        ('category = "invalidity"', 'category = "badness"', 'category = "badness"', "is not one of evidence"),
        ('feedback = "not sure what you mean"', 'feedback = "(unclosed"', "(unclosed", "invalid regex"),
        (
            'appears = ["pear", "apple"]',
            'appears = ["pear", "apple"]\ncolour = "red"',
            "colour",
            "unknown key",
        ),
        ('id = "noop"', 'id = "take"', 'id = "take"\ncategory = "invalidity"', "duplicate id 'take'"),
        (
            "'^put (?P<object>.+?) in (?P<place>.+)$'",
            "'^put (.+)$'",
            "[items.pairs]",
            "needs an 'action' regex",
        ),
        ('inventory = "gain"', 'inventory = "more"', 'inventory = "more"', "is not one of gain"),
        ("repeat = true", "repeat = 1", "repeat = 1", "expected true or false"),
        ("judge = true", "judge = true\nfeedback = 'x'", "judge = true", "must not also have"),
        ("version = 3", "version = 0", "version = 0", "expected an integer >= 1"),
        ("format_version = 1", "format_version = 9", "format_version = 9", "unsupported"),
    ],
)
def test_semantic_errors_report_file_and_line(old, new, needle, message):
    bad = GOOD.replace(old, new, 1)
    assert bad != GOOD
    with pytest.raises(RubricError) as ei:
        parse_rubric(bad, "bad.toml")
    e = ei.value
    if needle == 'id = "take"\ncategory = "invalidity"':  # the second occurrence of the id
        lines = [i for i, line in enumerate(bad.splitlines(), start=1) if line == 'id = "take"']
        assert e.line == lines[1]
    else:
        assert e.line == _line_of(bad, needle)
    assert message in str(e)
    assert str(e).startswith(f"bad.toml:{e.line}: ")


def test_build_table_holds_plain_values_only():
    bad = GOOD.replace('judge_sha256 = "abc"', 'judge_sha256 = "abc"\nwhen = 2026-11-30')
    with pytest.raises(RubricError, match="build.when: expected a string") as ei:
        parse_rubric(bad, "bad.toml")
    assert ei.value.line == _line_of(bad, "when = 2026-11-30")


def test_item_without_check_points_at_its_header():
    bad = GOOD.replace("repeat = true\nunchanged = true\n", "")
    with pytest.raises(RubricError, match="no check") as ei:
        parse_rubric(bad, "bad.toml")
    assert ei.value.line == _line_of(bad, 'id = "noop"') - 1  # the [[items]] line


def test_toml_syntax_error_has_line():
    bad = GOOD.replace('text = "Parser failure"', 'text = "Parser failure')
    with pytest.raises(RubricError) as ei:
        parse_rubric(bad, "bad.toml")
    assert ei.value.line == _line_of(bad, 'text = "Parser failure')
    assert "bad.toml:" in str(ei.value) and "toml" in str(ei.value)


def test_missing_file_and_no_items(tmp_path):
    with pytest.raises(RubricError, match="does not exist"):
        load_rubric(tmp_path / "nope.toml")
    head = GOOD.split("[[items]]")[0]
    with pytest.raises(RubricError, match="no \\[\\[items\\]\\]"):
        parse_rubric(head, "x.toml")


def test_validate_cli_reports_file_line(tmp_path, cli):
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text(GOOD)
    bad.write_text(GOOD.replace("'^take (?P<object>.+)$'", "'^take (?P<object>.+$'"))
    ok = cli("rubrics", "validate", str(good))
    assert ok.returncode == 0 and "OK" in ok.stdout and "8 items" in ok.stdout
    proc = cli("rubrics", "validate", str(good), str(bad))
    assert proc.returncode == 1
    line = _line_of(bad.read_text(), "'^take (?P<object>.+$'")
    assert f"{bad}:{line}: items[0].action: invalid regex" in proc.stderr


def test_embedded_rubrics_are_valid():
    files = sorted(RUBRICS_DIR.glob("*.toml"))
    assert {f.stem for f in files} >= {"twc", "cookingworld"}
    for f in files:
        r = load_rubric(f)
        assert r.task_type == f.stem
        assert all(r.category_sizes()[c] >= 1 for c in ("evidence", "execution", "invalidity"))
