from __future__ import annotations

import pytest

from edge.client import EdgeClient


def test_client_rejects_bad_arguments():
    with pytest.raises(ValueError, match="timeout"):
        EdgeClient("tcp://127.0.0.1:1", timeout=0)
    with pytest.raises(ValueError, match="retries"):
        EdgeClient("tcp://127.0.0.1:1", retries=-1)
    with pytest.raises(ValueError, match="both"):
        EdgeClient("tcp://127.0.0.1:1", curve_server_key="x" * 40)
