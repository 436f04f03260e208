from __future__ import annotations

import pytest

from tests.support.cli import run_cli


def test_llama_cpp_errors_still_reach_stderr_but_its_harmless_notes_do_not():
    from labeler.llama_log import shows_on_stderr

    swa = "llama_kv_cache_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/13194)"
    token = (
        "load: control-looking token:    212 '</s>' was not control-type; this is probably a bug in the model"
    )
    assert not shows_on_stderr(3, swa) and not shows_on_stderr(3, token)
    assert shows_on_stderr(3, "llama_model_load: error loading model: tensor 'x' data is not within bounds")
    assert not shows_on_stderr(2, "llama_model_loader: - kv   0: general.architecture str = gemma3")
    assert not shows_on_stderr(1, "print_info: n_ctx_train = 32768")


@pytest.mark.real
def test_judge_cli_stderr_has_no_llama_cpp_load_log():
    from labeler.llama_log import llama_log_path

    p = run_cli(
        "judge",
        "score",
        "--prefix",
        "Question: Is the sun hot?\nAnswer:",
        "--choice",
        " Yes",
        "--choice",
        " No",
        check=True,
    )
    assert '"probs"' in p.stdout
    for noise in ("SWA cache", "llama_model_loader", "llama_context", "control-looking token"):
        assert noise not in p.stderr
    with open(llama_log_path(), "rb") as f:  # ... they went to the log file
        f.seek(max(0, f.seek(0, 2) - 200_000))
        assert b"full-size SWA cache" in f.read()
