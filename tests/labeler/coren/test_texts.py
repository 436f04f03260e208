from __future__ import annotations

import torch

from labeler.coren.texts import fit_head, fit_plan

torch.set_num_threads(1)


def _count(text: str) -> int:
    return len(text.split())


def test_fit_head_keeps_head_and_reports_cut():
    text = " ".join(f"w{i}" for i in range(50))
    out, cut = fit_head(text, 10, _count)
    assert cut and _count(out) <= 10 and out.startswith("w0 w1") and out.endswith(" ...")
    assert fit_head("short text", 10, _count) == ("short text", False)
    assert fit_head("a b c", 0, _count) == ("", True)


def test_fit_plan_drops_the_middle():
    actions = [f"a{i} x" for i in range(20)]
    text, cut = fit_plan(actions, 16, _count)
    assert cut and _count(text) <= 16 and text.startswith("a0 x") and text.endswith("a19 x") and "..." in text
    assert fit_plan(["a", "b"], 16, _count) == ("a; b", False)
