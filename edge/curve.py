"""CURVE for edge-serve's socket: the server's secret certificate and an authenticator of allowed clients.

Certificates come from ``edge-serve keygen`` (zmq.auth's format). The authenticator (zmq.auth's
ThreadAuthenticator) admits only clients whose public ``*.key`` file is in the allowed directory; SIGHUP
re-reads that directory. Refusals are logged as ``auth_denied`` lines in the daemon's JSON log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import zmq

from edge.logs import JsonLogger


def enable_curve(
    ctx: zmq.Context, sock: zmq.Socket, secret: Path, allowed: Path | None, log: JsonLogger
) -> Any:
    """Make ``sock`` a CURVE server with the certificate ``secret``; returns the started authenticator.

    Raises ValueError (a one-line reason) when ``allowed`` is not a directory or ``secret`` holds no
    secret key.
    """
    from zmq.auth import load_certificate
    from zmq.auth.thread import ThreadAuthenticator

    if allowed is None or not allowed.is_dir():
        raise ValueError(f"CURVE needs a directory of allowed client keys (--curve-allowed), got {allowed}")
    public, secret_key = load_certificate(str(secret))
    if not secret_key:
        raise ValueError(f"{secret}: not a secret certificate (use the .key_secret file)")
    auth = ThreadAuthenticator(ctx, log=AuthLog(log))
    auth.start()
    auth.configure_curve(domain="*", location=str(allowed))
    sock.curve_secretkey = secret_key
    sock.curve_publickey = public
    sock.curve_server = True
    return auth


def reload_allowed_keys(auth: Any, allowed: Path, log: JsonLogger) -> None:
    """Re-read the allowed client keys (a key added to or removed from the directory)."""
    auth.configure_curve(domain="*", location=str(allowed))
    log.info("allowed_keys_reloaded", directory=str(allowed))


class AuthLog:
    """Routes zmq.auth's logging calls into the JSON log."""

    def __init__(self, log: JsonLogger):
        self._log = log

    def debug(self, msg: str, *args: Any) -> None:
        text = msg % args if args else msg
        if "DENIED" in text or "denied" in text.lower():
            self._log.warning("auth_denied", detail=text)

    def info(self, msg: str, *args: Any) -> None:
        self.debug(msg, *args)

    def warning(self, msg: str, *args: Any) -> None:
        self._log.warning("auth", detail=msg % args if args else msg)

    def error(self, msg: str, *args: Any) -> None:
        self._log.error("auth", detail=msg % args if args else msg)

    def exception(self, msg: str, *args: Any) -> None:
        self.error(msg, *args)
