"""The store's seven ``postbox_*`` counters on a registry the store owns.

Names and labels are seed 004's, so a dashboard built for Postbox reads a dovecote
store unchanged. Every backend counts the same events: a fanout counts one send per
target, an empty claim counts nothing, a TTL expiry counts in ``expired_total`` and in
``dead_lettered_total{reason="expired"}``, a manual ``sweep()`` counts in
``leases_swept_total``.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

__all__ = ["StoreMetrics"]


class StoreMetrics:
    """The counters of one store; ``registry`` is what ``store.metrics`` returns."""

    __slots__ = (
        "_children",
        "claimed",
        "committed",
        "dead_lettered",
        "expired",
        "leases_swept",
        "registry",
        "released",
        "sent",
    )

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r = self.registry
        self.sent = Counter(
            "postbox_messages_sent_total", "Messages sent (fanout counts each target).",
            ["mailbox_id"], registry=r,
        )
        self.claimed = Counter(
            "postbox_messages_claimed_total", "Claims that returned a message.",
            ["mailbox_id"], registry=r,
        )
        self.committed = Counter(
            "postbox_messages_committed_total", "Messages committed.", ["mailbox_id"], registry=r,
        )
        self.released = Counter(
            "postbox_messages_released_total", "Releases, by kind (transient, permanent).",
            ["mailbox_id", "kind"], registry=r,
        )
        self.dead_lettered = Counter(
            "postbox_messages_dead_lettered_total", "Messages moved to the dead-letter queue.",
            ["mailbox_id", "reason"], registry=r,
        )
        self.expired = Counter(
            "postbox_messages_expired_total", "Pending messages whose TTL expired.",
            ["mailbox_id"], registry=r,
        )
        self.leases_swept = Counter(
            "postbox_leases_swept_total", "Expired leases returned to pending by a sweep.",
            registry=r,
        )
        # labelled children cached per label tuple: .labels() costs more than .inc()
        self._children: dict[tuple[object, ...], Counter] = {}

    def _child(self, counter: Counter, *labels: str) -> Counter:
        key = (id(counter), *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = counter.labels(*labels)
        return child

    def count_sent(self, mailbox_id: str, n: int = 1) -> None:
        """``n`` messages sent to ``mailbox_id``."""
        self._child(self.sent, mailbox_id).inc(n)

    def count_claimed(self, mailbox_id: str) -> None:
        """One claim returned a message."""
        self._child(self.claimed, mailbox_id).inc()

    def count_committed(self, mailbox_id: str) -> None:
        """One message committed."""
        self._child(self.committed, mailbox_id).inc()

    def count_released(self, mailbox_id: str, kind: str) -> None:
        """One release of ``kind`` (a permanent one is also counted as a dead letter)."""
        self._child(self.released, mailbox_id, kind).inc()

    def count_dead_lettered(self, mailbox_id: str, reason: str, n: int = 1) -> None:
        """``n`` messages dead-lettered for ``reason`` (an expiry also counts as expired)."""
        self._child(self.dead_lettered, mailbox_id, reason).inc(n)
        if reason == "expired":
            self._child(self.expired, mailbox_id).inc(n)

    def count_leases_swept(self, n: int) -> None:
        """A sweep returned ``n`` expired leases to pending (zero makes the series appear)."""
        self.leases_swept.inc(n)

    def value(self, name: str, **labels: str) -> float:
        """The current value of one series (0.0 when it was never emitted); for tests."""
        found = self.registry.get_sample_value(name, labels)
        return 0.0 if found is None else found
