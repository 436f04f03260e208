"""``EdgeClient``: a DEALER client for edge-serve with request ids, timeouts and Lazy Pirate retries.

Every call sends a request with a fresh id and waits at most ``timeout`` seconds for the reply with that id
(replies with other ids, e.g. late answers to an earlier call, are discarded). After a timeout the socket is
closed and rebuilt before the retry, so a late reply can never be read as the answer to a later request. After
``retries`` retries the call raises :class:`EdgeTimeout`.

    with EdgeClient("tcp://127.0.0.1:5555", timeout=1.0) as c:
        reply = c.act("put the apple in the fridge", observation, ["take apple", "look around"])
        reply["action"], reply["index"], reply["scores"]
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import zmq

from edge.protocol import ProtocolError, act_embeddings, act_text, make_request, pack, unpack_reply


class EdgeError(RuntimeError):
    """The server answered with an error reply: ``code`` is the stable error code."""

    def __init__(self, code: str, message: str, reply: dict[str, Any]):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.reply = reply


class EdgeTimeout(TimeoutError):
    """No reply within the timeout after all retries."""


class EdgeClient:
    def __init__(
        self,
        connect: str,
        *,
        timeout: float = 2.0,
        retries: int = 2,
        curve_server_key: str | os.PathLike[str] | bytes | None = None,
        curve_client_cert: str | os.PathLike[str] | None = None,
        context: zmq.Context | None = None,
    ):
        """``curve_server_key``: the server's public certificate file (SERVER.key) or its Z85 key;
        ``curve_client_cert``: this client's secret certificate (CLIENT.key_secret). Both or neither."""
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        if (curve_server_key is None) != (curve_client_cert is None):
            raise ValueError("CURVE needs both curve_server_key and curve_client_cert")
        self.connect_addr = connect
        self.timeout = timeout
        self.retries = retries
        self._curve: tuple[bytes, bytes, bytes] | None = None
        if curve_client_cert is not None:
            from zmq.auth import load_certificate

            server_pub = _server_key(curve_server_key)
            pub, sec = load_certificate(str(curve_client_cert))
            if not sec:
                raise ValueError(f"{curve_client_cert}: not a secret certificate (use the .key_secret file)")
            self._curve = (server_pub, pub, sec)
        self._own_ctx = context is None
        self.ctx = context or zmq.Context()
        self._next_id = random.randrange(1 << 30)
        self.sock: zmq.Socket | None = None
        self.reconnects = 0
        self.stale_dropped = 0
        self._open()

    def _open(self) -> None:
        s = self.ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        self._rcvtimeo = -1
        if self._curve is not None:
            s.curve_serverkey, s.curve_publickey, s.curve_secretkey = self._curve
        s.connect(self.connect_addr)
        self.sock = s

    def _reopen(self) -> None:
        if self.sock is not None:
            self.sock.close(linger=0)
        self.reconnects += 1
        self._open()

    def request(
        self,
        msg: dict[str, Any],
        *,
        timeout: float | None = None,
        retries: int | None = None,
        check: bool = True,
    ) -> dict[str, Any]:
        """Send ``msg`` (an id is set) and return the reply map; raises :class:`EdgeError` on an error reply
        (``check``) and :class:`EdgeTimeout` when every attempt timed out."""
        if self.sock is None:
            raise RuntimeError("EdgeClient is closed")
        timeout = self.timeout if timeout is None else timeout
        retries = self.retries if retries is None else retries
        for attempt in range(retries + 1):
            self._next_id += 1
            req_id = self._next_id
            msg = {**msg, "id": req_id}
            self.sock.send(pack(msg))
            reply = self._wait(req_id, timeout)
            if reply is not None:
                if check and not reply.get("ok"):
                    raise EdgeError(str(reply.get("code")), str(reply.get("message")), reply)
                return reply
            if attempt < retries:
                self._reopen()  # Lazy Pirate: a late reply goes to the closed socket, never to the next call
        self._reopen()
        raise EdgeTimeout(
            f"no reply from {self.connect_addr} within {timeout:g} s after {retries + 1} attempt(s) "
            f"(op {msg.get('op')!r})"
        )

    def _wait(self, req_id: int, timeout: float) -> dict[str, Any] | None:
        assert self.sock is not None
        deadline = time.monotonic() + timeout
        while True:
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                return None
            if left_ms != self._rcvtimeo:  # one blocking receive with a timeout: no extra poll round trip
                self.sock.setsockopt(zmq.RCVTIMEO, left_ms)
                self._rcvtimeo = left_ms
            try:
                payload = self.sock.recv()
                while self.sock.getsockopt(zmq.RCVMORE):  # a stray multi-part message: keep its last part
                    payload = self.sock.recv()
            except zmq.Again:
                return None
            try:
                reply = unpack_reply(payload)
            except ProtocolError:
                self.stale_dropped += 1
                continue
            if reply.get("id") == req_id:
                return reply
            self.stale_dropped += 1  # an answer to an earlier request: never returned as this one's

    # ------------------------------------------------------------------------------------------------ ops

    def act(
        self,
        instruction: str,
        observation: str,
        candidates: list[str] | None = None,
        *,
        memory: Sequence[tuple[str, str]] | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        """Score candidate action texts (or the bundle's skill list when ``candidates`` is None).

        ``memory``: the episode so far, ``(action, observation it led to)`` per earlier step, oldest first
        (the daemon keeps no episode state; a memoryful bundle reads it, see ``edge.protocol``)."""
        return self.request(act_text(instruction, observation, candidates, memory=memory), **kw)

    def act_embeddings(
        self,
        instruction_emb: Any,
        observation_emb: Any,
        candidates_emb: Any,
        candidates: list[str] | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        """Score pre-computed float32 embeddings ([D], [D], [K, D])."""
        return self.request(
            act_embeddings(instruction_emb, observation_emb, candidates_emb, candidates), **kw
        )

    def info(self, **kw: Any) -> dict[str, Any]:
        return self.request(make_request("info"), **kw)

    def health(self, **kw: Any) -> dict[str, Any]:
        return self.request(make_request("health"), **kw)

    def reload(
        self, bundle: str | os.PathLike[str] | None = None, *, timeout: float = 60.0, **kw: Any
    ) -> dict[str, Any]:
        """Ask the server to load (``bundle`` or its own) bundle; waits for the outcome, no retry."""
        return self.request(
            make_request("reload", bundle=str(bundle) if bundle is not None else None),
            timeout=timeout,
            retries=kw.pop("retries", 0),
            **kw,
        )

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close(linger=0)
            self.sock = None
        if self._own_ctx:
            self.ctx.term()

    def __enter__(self) -> EdgeClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _server_key(key: str | os.PathLike[str] | bytes | None) -> bytes:
    from zmq.auth import load_certificate

    if isinstance(key, bytes):
        return key
    p = Path(str(key))
    if p.is_file():
        pub, _ = load_certificate(str(p))
        return pub
    if isinstance(key, str) and len(key) == 40:
        return key.encode()
    raise ValueError(f"curve_server_key {key!r}: not a certificate file or a 40-character Z85 key")
