"""A small HTTP endpoint serving a system's metrics in the prometheus text format."""

from __future__ import annotations

import socket
import threading
from socketserver import ThreadingMixIn
from types import TracebackType
from typing import Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from dovecote._errors import OptionsError

__all__ = ["MetricsServer", "SupportsMetrics", "serve_metrics"]

# How often the serving thread checks for close(); bounds how long close() blocks.
_POLL_INTERVAL = 0.05


class SupportsMetrics(Protocol):
    """Anything with a ``metrics`` registry, such as an ``ActorSystem``."""

    @property
    def metrics(self) -> CollectorRegistry:
        """The registry to serve."""
        ...


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    # One daemon thread per request: a hung scraper never blocks close().
    daemon_threads = True


class _ThreadingServerV6(_ThreadingServer):
    address_family = socket.AF_INET6


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Scrapes are frequent; do not log each one to stderr."""


class MetricsServer:
    """A running ``/metrics`` endpoint; :meth:`close` (or ``with``) stops it.

    Created by :func:`serve_metrics`. Requests are served on daemon threads,
    so an open server never keeps the process alive.
    """

    def __init__(self, httpd: WSGIServer, thread: threading.Thread) -> None:
        self._httpd = httpd
        self._thread = thread
        self._closed = False
        self._close_lock = threading.Lock()

    @property
    def addr(self) -> str:
        """The address the server is bound to."""
        return str(self._httpd.server_address[0])

    @property
    def port(self) -> int:
        """The TCP port actually bound (useful after asking for port 0)."""
        return self._httpd.server_port

    @property
    def url(self) -> str:
        """The full URL of the metrics page, e.g. ``http://127.0.0.1:9100/metrics``."""
        host = f"[{self.addr}]" if ":" in self.addr else self.addr
        return f"http://{host}:{self.port}/metrics"

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def close(self) -> None:
        """Stop serving and release the port; safe to call more than once."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join()

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<MetricsServer {self.url} {state}>"


def serve_metrics(
    system: SupportsMetrics | CollectorRegistry, port: int, addr: str = "127.0.0.1"
) -> MetricsServer:
    """Serve *system*'s metrics over HTTP on a daemon thread and return the server.

    *system* is anything with a ``.metrics`` registry (or a registry itself).
    Every path answers with the prometheus text format; ``/metrics`` is the
    conventional one. ``port=0`` picks a free port (see :attr:`MetricsServer.port`).
    The default *addr* only accepts local connections; pass ``"0.0.0.0"`` to
    expose it. Raises :class:`~dovecote.OptionsError` for a port outside
    0-65535 and ``OSError`` if the address cannot be bound.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise OptionsError(f"port must be an int in 0-65535, got {port!r}")
    registry = system if isinstance(system, CollectorRegistry) else system.metrics
    family = socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    server_class = _ThreadingServerV6 if family == socket.AF_INET6 else _ThreadingServer
    httpd = make_server(
        addr, port, make_wsgi_app(registry), server_class=server_class, handler_class=_QuietHandler
    )
    thread = threading.Thread(
        target=httpd.serve_forever,
        kwargs={"poll_interval": _POLL_INTERVAL},
        name=f"dovecote-metrics:{httpd.server_port}",
        daemon=True,
    )
    thread.start()
    return MetricsServer(httpd, thread)
