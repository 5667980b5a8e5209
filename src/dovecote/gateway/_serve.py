"""``dovecote serve``: open the store, start the enabled front ends, drain on a signal.

Each listening front end is announced on stderr as ``dovecote: <protocol> listening on
HOST:PORT`` (the bound port, so ``--http 127.0.0.1:0`` is usable), then ``dovecote: ready``.
SIGTERM / SIGINT stop accepting, let in-flight requests finish (up to ``drain_seconds``),
close the store and return; in MCP mode the client closing stdin does the same.
"""

from __future__ import annotations

import asyncio
import math
import signal
import socket
import sys
from typing import Any
from urllib.parse import parse_qsl, urlencode

from dovecote.durable import MailboxStore
from dovecote.gateway._config import Address, GatewayConfig
from dovecote.gateway._metrics import GatewayMetrics

__all__ = ["serve", "store_options"]


def store_options(url: str) -> tuple[str, dict[str, Any]]:
    """Split ``?schema=NAME`` off a PostgreSQL URL into the store's ``schema`` option.

    Several brokers (or tenants) can share one database in schemas of their own; asyncpg
    would take an unknown query parameter for a server setting, so it never reaches it.
    """
    if not url.startswith(("postgresql://", "postgres://")) or "?" not in url:
        return url, {}
    base, query = url.split("?", 1)
    pairs = parse_qsl(query, keep_blank_values=True)
    schemas = [v for k, v in pairs if k == "schema"]
    rest = urlencode([(k, v) for k, v in pairs if k != "schema"])
    return (f"{base}?{rest}" if rest else base), ({"schema": schemas[-1]} if schemas else {})


def _announce(text: str) -> None:
    print(f"dovecote: {text}", file=sys.stderr, flush=True)


def _bind(address: Address) -> socket.socket:
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    # proto must say TCP: asyncio only sets TCP_NODELAY on sockets whose proto is
    # IPPROTO_TCP, and without it every keep-alive response waits ~40 ms on delayed ACKs
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((address.host, address.port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


async def serve(config: GatewayConfig, *, store: MailboxStore | None = None) -> None:
    """Run the gateway until SIGTERM / SIGINT (or MCP stdin closing); then drain and return.

    ``store`` serves an already open store (left open on return); by default the gateway
    opens ``config.db`` and closes it on the way out.
    """
    from dovecote.durable import open_store

    owned = store is None
    if store is None:
        url, options = store_options(config.db)
        store = await open_store(url, sweep_interval=config.sweep_interval, **options)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    metrics = GatewayMetrics(store.metrics)
    tasks: list[asyncio.Task[Any]] = []
    http_server: Any = None
    grpc_server: Any = None
    try:
        if config.http is not None:
            http_server, task = await _start_http(config, store, metrics)
            tasks.append(task)
        if config.grpc is not None:
            from dovecote.gateway._grpc import create_grpc_server

            grpc_server = create_grpc_server(
                store, token=config.token, max_message_bytes=config.max_body_bytes,
                metrics=metrics,
            )  # fmt: skip
            port = grpc_server.add_port(str(config.grpc))
            await grpc_server.start()
            _announce(f"grpc listening on {Address(config.grpc.host, port)}")
        if config.mcp:
            from dovecote.gateway._mcp import create_mcp_server, serve_mcp_stdio

            mcp = asyncio.create_task(serve_mcp_stdio(create_mcp_server(store, metrics=metrics)))
            mcp.add_done_callback(lambda _: stop.set())  # the client went away
            tasks.append(mcp)
            _announce("mcp serving on stdio")
        _announce("ready")
        waiter = asyncio.create_task(stop.wait())
        await asyncio.wait([waiter, *tasks], return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        for t in tasks:  # a front end that died is a failure, not a quiet exit
            if t.done() and not t.cancelled() and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
    finally:
        _announce("draining")
        if http_server is not None:
            http_server.should_exit = True
        if grpc_server is not None:
            await grpc_server.stop(config.drain_seconds)
        for t in tasks:
            if t.get_name() != "http":
                t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        if owned:
            await store.close()
        _announce("stopped")


async def _start_http(
    config: GatewayConfig, store: MailboxStore, metrics: GatewayMetrics
) -> tuple[Any, asyncio.Task[None]]:
    import uvicorn

    from dovecote.gateway._http import create_http_app

    assert config.http is not None
    app = create_http_app(
        store, token=config.token, max_body_bytes=config.max_body_bytes, metrics=metrics
    )
    sock = _bind(config.http)
    uv_config = uvicorn.Config(
        app,
        log_config=None,
        access_log=config.verbosity >= 2,
        # X-Forwarded-* only feed the access log's client address; without the log, skip
        # the middleware that reads them on every request
        proxy_headers=config.verbosity >= 2,
        lifespan="off",
        timeout_graceful_shutdown=math.ceil(config.drain_seconds),
        server_header=False,
    )
    uv_config.load()
    server = uvicorn.Server(uv_config)
    # uvicorn's serve() would take over SIGINT/SIGTERM; run its phases here instead so
    # serve() owns the signals and the listening socket is known once startup returns.
    server.lifespan = uv_config.lifespan_class(uv_config)
    await server.startup(sockets=[sock])

    async def run() -> None:
        await server.main_loop()
        await server.shutdown(sockets=[sock])

    task = asyncio.create_task(run(), name="http")
    host, port = sock.getsockname()[:2]
    _announce(f"http listening on {Address(host, port)}")
    return server, task
