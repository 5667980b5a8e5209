"""The store's seven ``postbox_*`` counters on a registry the store owns.

Names and labels are seed 004's, so a dashboard built for Postbox reads a dovecote
store unchanged. Every backend counts the same events: a fanout counts one send per
target, an empty claim counts nothing, a TTL expiry counts in ``expired_total`` and in
``dead_lettered_total{reason="expired"}``, a manual ``sweep()`` counts in
``leases_swept_total``.

The counts live in plain dicts (a send adds one to an int: no lock, no child lookup) and
a custom collector turns them into Prometheus counter families when the registry is
scraped. Only the event loop's thread counts; a scrape from another thread copies a
dict, which the GIL makes atomic.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

__all__ = ["StoreMetrics"]

_SENT = "postbox_messages_sent"
_CLAIMED = "postbox_messages_claimed"
_COMMITTED = "postbox_messages_committed"
_RELEASED = "postbox_messages_released"
_DEAD = "postbox_messages_dead_lettered"
_EXPIRED = "postbox_messages_expired"
_SWEPT = "postbox_leases_swept"

#: name -> (help, label names)
_FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    _SENT: ("Messages sent (fanout counts each target).", ("mailbox_id",)),
    _CLAIMED: ("Claims that returned a message.", ("mailbox_id",)),
    _COMMITTED: ("Messages committed.", ("mailbox_id",)),
    _RELEASED: ("Releases, by kind (transient, permanent).", ("mailbox_id", "kind")),
    _DEAD: ("Messages moved to the dead-letter queue.", ("mailbox_id", "reason")),
    _EXPIRED: ("Pending messages whose TTL expired.", ("mailbox_id",)),
    _SWEPT: ("Expired leases returned to pending by a sweep.", ()),
}


class _Collector(Collector):
    def __init__(self, counts: dict[str, dict[tuple[str, ...], float]]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[CounterMetricFamily]:
        for name, (text, labels) in _FAMILIES.items():
            family = CounterMetricFamily(name, text, labels=list(labels))
            for key, value in list(self._counts[name].items()):
                family.add_metric(list(key), value)
            yield family


class StoreMetrics:
    """The counters of one store; ``registry`` is what ``store.metrics`` returns."""

    __slots__ = ("_claimed", "_committed", "_counts", "_sent", "registry")

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self._counts: dict[str, dict[tuple[str, ...], float]] = {name: {} for name in _FAMILIES}
        self._counts[_SWEPT][()] = 0.0  # unlabelled: the series exists from the start
        self._sent = self._counts[_SENT]
        self._claimed = self._counts[_CLAIMED]
        self._committed = self._counts[_COMMITTED]
        self.registry.register(_Collector(self._counts))

    def _add(self, name: str, key: tuple[str, ...], n: float = 1) -> None:
        series = self._counts[name]
        series[key] = series.get(key, 0) + n

    def count_sent(self, mailbox_id: str, n: int = 1) -> None:
        """``n`` messages sent to ``mailbox_id``."""
        key = (mailbox_id,)
        self._sent[key] = self._sent.get(key, 0) + n

    def count_claimed(self, mailbox_id: str) -> None:
        """One claim returned a message."""
        key = (mailbox_id,)
        self._claimed[key] = self._claimed.get(key, 0) + 1

    def count_committed(self, mailbox_id: str) -> None:
        """One message committed."""
        key = (mailbox_id,)
        self._committed[key] = self._committed.get(key, 0) + 1

    def count_released(self, mailbox_id: str, kind: str) -> None:
        """One release of ``kind`` (a permanent one is also counted as a dead letter)."""
        self._add(_RELEASED, (mailbox_id, kind))

    def count_dead_lettered(self, mailbox_id: str, reason: str, n: int = 1) -> None:
        """``n`` messages dead-lettered for ``reason`` (an expiry also counts as expired)."""
        self._add(_DEAD, (mailbox_id, reason), n)
        if reason == "expired":
            self._add(_EXPIRED, (mailbox_id,), n)

    def count_leases_swept(self, n: int) -> None:
        """A sweep returned ``n`` expired leases to pending."""
        self._add(_SWEPT, (), n)

    def value(self, name: str, **labels: str) -> float:
        """The current value of one series (0.0 when it was never emitted); for tests."""
        found = self.registry.get_sample_value(name, labels)
        return 0.0 if found is None else found
