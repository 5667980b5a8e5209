"""The ``dovecote`` command line (click): ``serve`` and ``status``.

Every ``serve`` flag has a ``DOVECOTE_*`` environment variable; a malformed value, or every
front end off, is a usage error (exit 2) that names the flag.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from dovecote.gateway._config import (
    GatewayConfig,
    parse_address,
    parse_duration,
    parse_size,
)
from dovecote.gateway._errors import ConfigError

__all__ = ["main"]

T = TypeVar("T")
_SCHEMES = ("sqlite::memory:", "sqlite://", "postgresql://", "postgres://")


def _parsed(parse: Callable[..., T]) -> Callable[[click.Context, click.Parameter, Any], T]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> T:
        try:
            return parse(str(value), flag=f"--{(param.name or '').replace('_', '-')}")
        except ConfigError as exc:
            raise click.BadParameter(str(exc)) from None

    return callback


def _db(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not value.startswith(_SCHEMES):
        raise click.BadParameter(
            f"unsupported store URL {value!r}: use sqlite::memory:, sqlite:///abs/path.db, "
            "sqlite://./rel.db or postgresql://user@host:port/db"
        )
    return value


def _positive_seconds(text: str, *, flag: str) -> float:
    seconds = parse_duration(text, flag=flag)
    if seconds is None:
        raise ConfigError(f"{flag}: expected a duration such as 10s, got {text!r}")
    return seconds


def _configure_logging(verbosity: int) -> None:
    from dovecote.observability import configure_logging

    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbosity, 2)]
    logging.basicConfig(
        stream=sys.stderr, level=level, format="%(levelname)s %(name)s: %(message)s"
    )
    configure_logging(level)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dovecote", prog_name="dovecote")
def main() -> None:
    """dovecote: an actor runtime for asyncio, and the Postbox-compatible broker."""


_DB = click.option(
    "--db", envvar="DOVECOTE_DB", default="sqlite::memory:", show_default=True, callback=_db,
    help="Store URL: sqlite::memory:, sqlite:///path.db or postgresql://user@host:port/db.",
)  # fmt: skip


@main.command()
@_DB
@click.option(
    "--http", envvar="DOVECOTE_HTTP", default="127.0.0.1:8080", show_default=True,
    callback=_parsed(parse_address), help="HTTP listen address HOST:PORT, or off.",
)  # fmt: skip
@click.option(
    "--grpc", envvar="DOVECOTE_GRPC", default="127.0.0.1:50051", show_default=True,
    callback=_parsed(parse_address), help="gRPC listen address HOST:PORT, or off.",
)  # fmt: skip
@click.option(
    "--mcp", envvar="DOVECOTE_MCP", default="off", show_default=True,
    type=click.Choice(["stdio", "off"]), help="MCP server on stdin/stdout (stdio), or off.",
)  # fmt: skip
@click.option(
    "--sweep-interval", envvar="DOVECOTE_SWEEP_INTERVAL", default="5s", show_default=True,
    callback=_parsed(parse_duration),
    help="Sweeper tick (5s, 100ms, 1m), or off: expired leases, TTL expiry, DLQ retention.",
)  # fmt: skip
@click.option(
    "--token", envvar="DOVECOTE_TOKEN", default=None,
    help="Require this bearer token on HTTP (all but /healthz) and gRPC (authorization).",
)  # fmt: skip
@click.option(
    "--max-body-bytes", envvar="DOVECOTE_MAX_BODY_BYTES", default="2MiB", show_default=True,
    callback=_parsed(parse_size), help="Largest HTTP request body / gRPC message accepted.",
)  # fmt: skip
@click.option(
    "--drain-timeout", envvar="DOVECOTE_DRAIN_TIMEOUT", default="10s", show_default=True,
    callback=_parsed(_positive_seconds),
    help="On SIGTERM/SIGINT, how long in-flight requests may take to finish.",
)  # fmt: skip
@click.option("-v", "--verbose", count=True, help="-v info, -vv debug and access logs.")
def serve(
    db: str,
    http: Any,
    grpc: Any,
    mcp: str,
    sweep_interval: float | None,
    token: str | None,
    max_body_bytes: int,
    drain_timeout: float,
    verbose: int,
) -> None:
    """Run the broker: HTTP, gRPC and/or MCP stdio over one store."""
    try:
        config = GatewayConfig(
            db=db, http=http, grpc=grpc, mcp=mcp == "stdio", sweep_interval=sweep_interval,
            token=token, max_body_bytes=max_body_bytes, drain_seconds=drain_timeout,
            verbosity=verbose,
        )  # fmt: skip
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    _configure_logging(verbose)
    from dovecote.durable import StoreError
    from dovecote.gateway._serve import serve as run

    try:
        # uvloop when installed (a core dependency), as the rest of dovecote runs;
        # DOVECOTE_NO_UVLOOP=1 picks the default loop
        from dovecote.dispatch._loop import loop_factory

        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(run(config))
    except StoreError as exc:
        raise click.ClickException(f"the store failed: {exc}") from None
    except OSError as exc:
        raise click.ClickException(f"cannot listen: {exc}") from None


@main.command()
@_DB
def status(db: str) -> None:
    """Print every mailbox with its counts as a table."""
    from dovecote.durable import StoreError

    try:
        rows = asyncio.run(_status_rows(db))
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    header = ("MAILBOX", "ORDERING", "CAPACITY", "PENDING", "CLAIMED", "COMMITTED", "DEAD")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        cells = [str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in
                 enumerate(zip(row, widths, strict=True))]  # fmt: skip
        click.echo("  ".join(cells).rstrip())
    click.echo(f"{len(rows)} mailbox{'es' if len(rows) != 1 else ''}")


async def _status_rows(db: str) -> list[tuple[Any, ...]]:
    from dovecote.durable import open_store

    rows: list[tuple[Any, ...]] = []
    async with open_store(db, sweep_interval=None) as store:
        after: str | None = None
        while page := await store.list_mailboxes(limit=500, after=after):
            for m in page:
                s = await store.stats(m.agent_id)
                rows.append((
                    m.agent_id, m.ordering_mode, m.capacity, s.pending_count, s.claimed_count,
                    s.committed_count, s.dead_lettered_count,
                ))  # fmt: skip
            after = page[-1].agent_id
    return rows
