from __future__ import annotations

import pytest
import torch

from labeler.coren.prompts import PROMPT_DIR, PromptError, load_prompt, load_prompts, load_templates

torch.set_num_threads(1)


def test_prompt_files_load_and_validate(tmp_path):
    prompts = load_prompts(5)
    assert [p.style for p in prompts] == ["few-shot", "few-shot", "few-shot", "few-shot", "cot"]
    t = load_templates()
    assert t.choices == (" No", " Yes") and t.values == (-1, 1) and t.version == 3
    # layout 2: one shared preamble, the variants differ only in their tails
    assert "Progress: Yes" in t.preamble and all(p.header == "" for p in prompts)
    assert len({p.rate_tail for p in prompts[:4]}) == 4 and all(all(p.tails()) for p in prompts)
    # layout 1 stays loadable for comparison: a header per variant, the templates' own tails
    old = load_prompts(5, PROMPT_DIR / "v1")
    assert [p.style for p in old] == ["plain", "few-shot", "few-shot", "few-shot", "cot"]
    assert all(p.header and not any(p.tails()) for p in old)
    t1 = load_templates(PROMPT_DIR / "v1")
    assert t1.version == 1 and t1.preamble == "" and t1.choose.endswith("option")
    with pytest.raises(PromptError, match="between 1 and 5"):
        load_prompts(6)
    bad = tmp_path / "p9_x.v1.toml"
    bad.write_text('name = "x"\nversion = 1\nstyle = "poem"\nheader = "h"\n')
    with pytest.raises(PromptError, match="style"):
        load_prompt(bad, 0)
    bad.write_text('name = "x"\nversion = 1\nstyle = "plain"\n')
    with pytest.raises(PromptError, match="header: missing"):
        load_prompt(bad, 0)
