"""What ``GET /metrics`` exposes: the store's seven ``postbox_*`` counters plus the runtime's.

The runtime's side is the gateway process itself (CPU, memory, file descriptors, GC) and a
counter of answered calls per front end, on a registry of its own so nothing leaks into
prometheus_client's process-global default.
"""

from __future__ import annotations

from prometheus_client import (
    GC_COLLECTOR,
    CollectorRegistry,
    Counter,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

__all__ = ["CONTENT_TYPE", "GatewayMetrics"]

#: the text exposition format upstream Postbox answers with
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class GatewayMetrics:
    """The gateway's registry; ``render()`` joins it with the store's for ``/metrics``."""

    def __init__(self, store_registry: CollectorRegistry) -> None:
        self.store_registry = store_registry
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        self.registry.register(GC_COLLECTOR)
        self.calls = Counter(
            "dovecote_gateway_calls_total",
            "Calls the gateway answered, by front end, operation and outcome code.",
            ("protocol", "operation", "code"),
            registry=self.registry,
        )

    def count(self, protocol: str, operation: str, code: str) -> None:
        """Count one answered call."""
        self.calls.labels(protocol, operation, code).inc()

    def render(self) -> bytes:
        """Both registries in the Prometheus text format."""
        return generate_latest(self.store_registry) + generate_latest(self.registry)
