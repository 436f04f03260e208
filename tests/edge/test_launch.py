"""edge.launch: a daemon that cannot start is reported with its reason, and no process is left behind."""

from __future__ import annotations

import pytest

from edge.launch import LaunchError, start_daemon


def test_start_daemon_on_a_non_bundle_says_why(tmp_path):
    with pytest.raises(LaunchError, match="manifest.json: missing"):
        start_daemon(tmp_path, timeout=60)
