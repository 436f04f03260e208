"""tools.bench.serve_baselines: a baseline server started in its own process answers on loopback and stops."""

from __future__ import annotations

import socket

import pytest

from tools.bench.serve_baselines import Proc, free_port, serve_echo, start_zmq_server, wait_port

pytestmark = pytest.mark.real


def test_the_echo_floor_sends_every_payload_back_and_stops():
    zmq = pytest.importorskip("zmq")
    servers: list[Proc] = []
    try:
        endpoint = start_zmq_server(servers, serve_echo, timeout=120)
        s = zmq.Context.instance().socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.connect(endpoint)
        s.send(b"payload")
        assert s.poll(30_000) and s.recv() == b"payload"
        s.close()
    finally:
        for p in servers:
            p.stop()
    assert len(servers) == 1 and not servers[0].p.is_alive()


def test_wait_port_returns_once_something_listens_and_gives_up_otherwise():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        wait_port(listener.getsockname()[1], timeout=5)
    with pytest.raises(RuntimeError, match="no server"):
        wait_port(free_port(), timeout=0.5)
