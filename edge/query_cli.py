"""``edgejudge query``: send one request to a running edge-serve and print the reply as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--connect", default="tcp://127.0.0.1:5555", show_default=True, help="edge-serve endpoint.")
@click.option(
    "--op", type=click.Choice(["act", "info", "health", "reload"]), default="act", show_default=True
)
@click.option("--instruction", help="Task instruction (act).")
@click.option(
    "--observation", help="State text (act), composed by the adapter of the world the policy was trained in."
)
@click.option(
    "--candidate",
    "candidates",
    multiple=True,
    help="A candidate action; repeat. Omit to use the bundle's skill list.",
)
@click.option(
    "--bundle", "reload_bundle", help="reload: another bundle directory (server needs --allow-reload-path)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.001, 600),
    default=2.0,
    show_default=True,
    help="Seconds to wait for a reply per attempt.",
)
@click.option("--retries", type=click.IntRange(0, 10), default=2, show_default=True)
@click.option(
    "--curve-server-key",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Server's public certificate (SERVER.key).",
)
@click.option(
    "--curve-client-cert",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="This client's secret certificate (CLIENT.key_secret).",
)
def query(
    connect: str,
    op: str,
    instruction: str | None,
    observation: str | None,
    candidates: tuple[str, ...],
    reload_bundle: str | None,
    timeout: float,
    retries: int,
    curve_server_key: Path | None,
    curve_client_cert: Path | None,
) -> None:
    """Ask a running edge-serve daemon; prints the reply map as one JSON line (exit 1 on an error reply).

    \b
    edgejudge query --instruction "put the apple in the fridge" --observation "Room: kitchen" \\
        --candidate "take apple" --candidate "look around"
    edgejudge query --op info
    """
    from edge.client import EdgeClient, EdgeError, EdgeTimeout

    if op == "act" and (instruction is None or observation is None):
        raise click.UsageError("--op act needs --instruction and --observation")
    if op != "act" and (instruction or observation or candidates):
        raise click.UsageError(f"--op {op} takes no --instruction/--observation/--candidate")
    if reload_bundle is not None and op != "reload":
        raise click.UsageError("--bundle goes with --op reload")
    try:
        with EdgeClient(
            connect,
            timeout=timeout,
            retries=retries,
            curve_server_key=curve_server_key,
            curve_client_cert=curve_client_cert,
        ) as client:
            if op == "act":
                assert instruction is not None and observation is not None
                reply = client.act(instruction, observation, list(candidates) or None)
            elif op == "reload":
                reply = client.reload(reload_bundle, timeout=max(timeout, 60.0))
            else:
                reply = client.request({"v": 1, "op": op})
    except EdgeError as e:
        click.echo(json.dumps(e.reply, default=str))
        raise SystemExit(1) from None
    except (EdgeTimeout, ValueError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(json.dumps(reply, default=str))
