"""serve_metrics: the prometheus text format over HTTP, on a daemon thread."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from prometheus_client.core import CollectorRegistry

from dovecote._errors import OptionsError
from dovecote.observability import MetricsServer, RuntimeMetrics, serve_metrics


class _System:
    def __init__(self) -> None:
        self.metrics = RuntimeMetrics("demo")


def _fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        body: bytes = response.read()
    return body.decode()


def test_metrics_are_served_over_http_on_a_free_port() -> None:
    system = _System()
    system.metrics.class_stats("Echo").processed += 7
    server = serve_metrics(system, 0)
    try:
        assert server.port > 0
        assert server.url == f"http://127.0.0.1:{server.port}/metrics"
        text = _fetch(server.url)
    finally:
        server.close()
    assert "actor_messages_processed_total" in text
    assert 'actor_messages_processed_total{actor_class="Echo"} 7.0' in text


def test_each_scrape_sees_the_latest_counts() -> None:
    system = _System()
    stats = system.metrics.class_stats("Echo")
    with serve_metrics(system, 0) as server:
        stats.processed += 1
        first = _fetch(server.url)
        stats.processed += 1
        second = _fetch(server.url)
    assert 'actor_messages_processed_total{actor_class="Echo"} 1.0' in first
    assert 'actor_messages_processed_total{actor_class="Echo"} 2.0' in second


def test_a_plain_registry_can_be_served_too() -> None:
    registry = RuntimeMetrics("demo")
    registry.record_dead_letter("stopped")
    with serve_metrics(registry, 0) as server:
        assert isinstance(registry, CollectorRegistry)
        assert 'actor_dead_letters_total{reason="stopped"} 1.0' in _fetch(server.url)


def test_closing_the_server_releases_the_port_and_is_idempotent() -> None:
    server = serve_metrics(_System(), 0)
    url = server.url
    assert not server.closed
    server.close()
    server.close()
    assert server.closed
    with pytest.raises(urllib.error.URLError):
        _fetch(url)


def test_the_context_manager_closes_the_server() -> None:
    with serve_metrics(_System(), 0) as server:
        assert isinstance(server, MetricsServer)
    assert server.closed


@pytest.mark.parametrize("bad", [-1, 65536, "9100", True, 1.5])
def test_an_invalid_port_is_rejected(bad: object) -> None:
    with pytest.raises(OptionsError):
        serve_metrics(_System(), bad)  # type: ignore[arg-type]


def test_binding_a_port_in_use_raises_os_error() -> None:
    with serve_metrics(_System(), 0) as server, pytest.raises(OSError):
        serve_metrics(_System(), server.port)
