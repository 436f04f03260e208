"""`make demo-loop`'s round table from the files its stages write."""

from __future__ import annotations

import json

from tools.demo.demo_summary import loop_main


def test_the_round_table_compares_each_learner_with_itself_and_with_the_other(tmp_path, capsys):
    def drive(name, rate):
        r = {"env": "twx:twc", "episodes": 100, "success_rate": rate, "ci95": [rate - 0.1, rate + 0.1]}
        (tmp_path / name).write_text(json.dumps(r))

    drive("drive.json", 0.54)
    drive("drive.bc.json", 0.60)
    drive("round-1.drive.credit.json", 0.66)
    drive("round-1.drive.bc.json", 0.62)
    drive("drive.expert.json", 0.88)
    for who, flags in (("credit", [True, False, True]), ("bc", [False, True, False])):
        lines = [json.dumps({"success": f}) for f in flags]
        (tmp_path / f"round-1.{who}.jsonl").write_text("\n".join(lines) + "\n")
    loop_main(str(tmp_path))
    out = capsys.readouterr().out
    assert "100 twx:twc test games through edge-serve" in out
    assert "credit on TRCA (the recipe)" in out and "54% [44%, 64%]" in out and "2 of 3 succeeded" in out
    assert "ceiling: BC on all expert episodes" in out and "teacher" not in out  # no file: no row
    assert "the recipe +12 points on its own episodes, self-imitation +2; the recipe +4 points" in out
