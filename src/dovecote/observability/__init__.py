"""Observability for dovecote: structlog loggers and per-system prometheus metrics.

The runtime counts in plain ints on :class:`ClassStats` objects; a custom
collector on :class:`RuntimeMetrics` (a ``CollectorRegistry``) exports them on
scrape, and :func:`serve_metrics` serves them over HTTP.
"""

from ._logging import configure_logging, get_logger
from ._metrics import DEFAULT_MESSAGE_SECONDS_BUCKETS, ClassStats, MailboxSizeSource, RuntimeMetrics
from ._server import MetricsServer, SupportsMetrics, serve_metrics

__all__ = [
    "DEFAULT_MESSAGE_SECONDS_BUCKETS",
    "ClassStats",
    "MailboxSizeSource",
    "MetricsServer",
    "RuntimeMetrics",
    "SupportsMetrics",
    "configure_logging",
    "get_logger",
    "serve_metrics",
]
