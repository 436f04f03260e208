"""``edge-serve``: the policy daemon's command line (serve a bundle; ``keygen`` for CURVE certificates)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from edge.logs import LEVELS, JsonLogger
from edge.protocol import DEFAULT_MAX_MESSAGE_BYTES
from edge.runtime import RuntimeConfig
from edge.serve_config import ServeConfig
from edge.server import Server
from models.cli_options import threads_option


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--bundle",
    type=click.Path(file_okay=False, path_type=Path),
    help="Bundle directory to serve (from 'edgejudge export').",
)
@click.option(
    "--bind",
    "binds",
    multiple=True,
    default=("tcp://127.0.0.1:5555",),
    show_default=True,
    help="ZeroMQ endpoint to bind; repeat for several (tcp://127.0.0.1:PORT, tcp://127.0.0.1:*, ipc://PATH).",
)
@threads_option()
@click.option(
    "--spinning/--no-spinning",
    default=False,
    show_default=True,
    help="Let onnxruntime threads spin while idle (lower latency, burns CPU other processes need).",
)
@click.option(
    "--cache-size",
    type=click.IntRange(0, 1_000_000),
    default=4096,
    show_default=True,
    help="Embeddings of candidate/skill/instruction texts kept in the LRU cache.",
)
@click.option(
    "--max-batch",
    type=click.IntRange(1, 1024),
    default=32,
    show_default=True,
    help="Most act requests scored in one policy call.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=2,
    show_default=True,
    help="Threads scoring act requests side by side. A request heavy in never-seen text (a long memory "
    "through a MiniLM encoder: ~100 ms) then holds up its own worker only; 2 keeps a cheap client served "
    "beside one heavy one on a 2-core robot (onnxruntime runs outside the GIL). 1: one batch at a time.",
)
@click.option(
    "--worker-processes/--worker-threads",
    default=False,
    show_default=True,
    help="Workers as processes (each its own interpreter and onnxruntime session, behind an ipc:// socket: "
    "a request heavy in Python work, say a long memory of never-seen text through a static encoder, holds "
    "up its own worker only; each worker costs its own copy of the bundle in memory; a worker that dies is "
    "replaced and its requests are answered with an error) or as threads of the daemon (less memory; "
    "onnxruntime runs outside the interpreter lock, the rest of a request does not).",
)
@click.option(
    "--batch-wait-ms",
    type=click.FloatRange(0, 100),
    default=0.5,
    show_default=True,
    help="Bounded wait for more requests once concurrent clients are seen.",
)
@click.option(
    "--max-message-bytes",
    type=click.IntRange(1024, 1 << 30),
    default=DEFAULT_MAX_MESSAGE_BYTES,
    show_default=True,
    help="ZMQ_MAXMSGSIZE: larger messages disconnect their sender.",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Serve Prometheus metrics at http://HOST:PORT/metrics (0 picks a free port).",
)
@click.option("--metrics-host", default="127.0.0.1", show_default=True, help="Address of the metrics server.")
@click.option(
    "--curve-secret",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Server secret certificate (SERVER.key_secret from 'edge-serve keygen'); enables CURVE.",
)
@click.option(
    "--curve-allowed",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Directory of allowed clients' public certificates (*.key); others are refused.",
)
@click.option("--allow-reload-path", is_flag=True, help="Let a reload request name another bundle directory.")
@click.option("--no-remote-reload", is_flag=True, help="Refuse the reload op (SIGHUP still reloads).")
@click.option("--log-level", type=click.Choice(list(LEVELS)), default="info", show_default=True)
@click.pass_context
def main(
    ctx: click.Context,
    bundle: Path | None,
    binds: tuple[str, ...],
    threads: int | None,
    spinning: bool,
    cache_size: int,
    max_batch: int,
    workers: int,
    worker_processes: bool,
    batch_wait_ms: float,
    max_message_bytes: int,
    metrics_port: int | None,
    metrics_host: str,
    curve_secret: Path | None,
    curve_allowed: Path | None,
    allow_reload_path: bool,
    no_remote_reload: bool,
    log_level: str,
) -> None:
    """Serve a policy bundle over ZeroMQ + msgpack (ROUTER socket; DEALER or REQ clients).

    \b
    edge-serve --bundle out/bundle --bind tcp://127.0.0.1:5555 --metrics-port 9100
    edge-serve keygen --out keys --name server        # CURVE certificates
    kill -HUP PID                                     # reload the bundle (old model kept on failure)

    Logs are JSON lines on stderr; SIGTERM/SIGINT answer what was received, stop the workers, close the
    sockets and exit 0.
    """
    if ctx.invoked_subcommand is not None:
        return
    if bundle is None:
        raise click.UsageError("--bundle is required to serve (or run 'edge-serve keygen')")
    if (curve_secret is None) != (curve_allowed is None):
        raise click.UsageError("--curve-secret and --curve-allowed go together")
    for b in binds:
        if not b.startswith(("tcp://", "ipc://", "inproc://")):
            raise click.UsageError(f"--bind {b!r}: expected tcp://HOST:PORT or ipc://PATH")
    cfg = ServeConfig(
        bundle=bundle,
        binds=list(binds),
        runtime=RuntimeConfig(threads=threads, spinning=spinning, cache_size=cache_size),
        max_batch=max_batch,
        workers=workers,
        worker_processes=worker_processes,
        batch_wait_ms=batch_wait_ms,
        max_message_bytes=max_message_bytes,
        metrics_host=metrics_host,
        metrics_port=metrics_port,
        curve_secret=curve_secret,
        curve_allowed=curve_allowed,
        allow_reload_path=allow_reload_path,
        remote_reload=not no_remote_reload,
    )
    log = JsonLogger(log_level)
    server = Server(cfg, log)
    try:
        code = server.run()
    except Exception as e:  # BundleError and friends: one line, no traceback
        log.error("fatal", error=f"{type(e).__name__}: {e}")
        click.echo(f"edge-serve: error: {e}", err=True)
        sys.exit(1)
    sys.exit(code)


@main.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Directory for NAME.key (public, give to the other side) and NAME.key_secret (keep).",
)
@click.option(
    "--name", default="server", show_default=True, help="Certificate name, e.g. server or robot-arm-1."
)
@click.option("--force", is_flag=True, help="Overwrite existing certificates of that name.")
def keygen(out_dir: Path, name: str, force: bool) -> None:
    """Make a CURVE certificate pair (zmq.auth) for the server or a client.

    \b
    Server: edge-serve keygen --out keys --name server
            edge-serve --bundle B --curve-secret keys/server.key_secret --curve-allowed allowed/
    Client: edge-serve keygen --out keys --name client; copy keys/client.key into allowed/
    """
    from zmq.auth import create_certificates

    if not name.replace("-", "").replace("_", "").isalnum():
        raise click.BadParameter(f"{name!r}: use letters, digits, - and _ only", param_hint="--name")
    out_dir.mkdir(parents=True, exist_ok=True)
    pub, sec = out_dir / f"{name}.key", out_dir / f"{name}.key_secret"
    if (pub.exists() or sec.exists()) and not force:
        raise click.ClickException(f"{pub} or {sec} exists; pass --force to overwrite")
    pub_file, sec_file = create_certificates(str(out_dir), name)
    os.chmod(sec_file, 0o600)
    click.echo(f"public: {pub_file}\nsecret: {sec_file}")


if __name__ == "__main__":
    main()
