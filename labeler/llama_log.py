"""llama.cpp's log lines go to a file, not the terminal; its real errors still reach stderr.

llama.cpp reports through one process-wide callback: hundreds of model-loader lines, and some harmless notes
at *error* level (the full-size SWA cache the judge asks for, a tokenizer note on Gemma's ``</s>``). The
default callback of llama-cpp-python prints error-level lines even with ``verbose=False``.
:func:`route_llama_logs` replaces it: every line is appended to ``$EDGEJUDGE_CACHE/logs/llama.log``
(default ``~/.cache/edgejudge/logs/``), and error-level lines that are not known to be harmless are also
written to stderr. Call it before loading a model; calling it again changes nothing.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any

from models import settings

KNOWN_HARMLESS = re.compile(r"using full-size SWA cache|control-looking token: .* was not control-type")
"""Error- or warning-level llama.cpp lines that say nothing is wrong."""

_ERROR, _CONT = 3, 5  # ggml_log_level: GGML_LOG_LEVEL_ERROR, GGML_LOG_LEVEL_CONT
_lock = threading.Lock()
_state: dict[str, Any] = {}


def shows_on_stderr(level: int, line: str) -> bool:
    """Whether a llama.cpp log line also goes to stderr: error level and not known to be harmless."""
    return level == _ERROR and bool(line.strip()) and not KNOWN_HARMLESS.search(line)


def llama_log_path() -> Path:
    """Where llama.cpp's log lines go."""
    return settings.cache_dir() / "logs" / "llama.log"


def route_llama_logs(path: str | os.PathLike[str] | None = None) -> Path:
    """Install the file-routing callback (once per process); returns the log file's path."""
    with _lock:
        if "callback" in _state:
            return _state["path"]
        import llama_cpp

        target = Path(path) if path is not None else llama_log_path()
        target.parent.mkdir(parents=True, exist_ok=True)
        stream = open(target, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - lives as long as the process
        atexit.register(stream.close)
        last = {"level": 0}

        @llama_cpp.llama_log_callback
        def callback(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
            line = text.decode("utf-8", errors="replace")
            level = last["level"] if level == _CONT else level
            last["level"] = level
            try:
                stream.write(line)
            except (OSError, ValueError):
                pass
            if shows_on_stderr(level, line):
                sys.stderr.write(line)

        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
        _state.update(callback=callback, stream=stream, path=target)  # the callback must stay referenced
        return target
