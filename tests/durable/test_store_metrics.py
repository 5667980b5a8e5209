"""The seven postbox_* counters: every one emitted, on every backend."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from dovecote import ManualClock


def _value(store: Any, name: str, **labels: str) -> float:
    registry: CollectorRegistry = store.metrics
    found = registry.get_sample_value(name, labels)
    return 0.0 if found is None else found


async def test_every_counter_is_emitted(store: Any, clock: ManualClock) -> None:
    await store.ensure_mailbox("q", max_attempts=1)
    assert await store.claim("q", claimer="w") is None  # an empty claim counts nothing
    assert _value(store, "postbox_messages_claimed_total", mailbox_id="q") == 0
    await store.send("q", b"1", sender="s")
    await store.fanout(["q", "r"], b"2", sender="s")
    assert _value(store, "postbox_messages_sent_total", mailbox_id="q") == 2
    assert _value(store, "postbox_messages_sent_total", mailbox_id="r") == 1

    c1 = await store.claim("q", claimer="w")
    assert c1 is not None
    await store.commit(c1.message.message_id, claimer="w", checkpoint_token="t")
    c2 = await store.claim("q", claimer="w", lease_duration_ms=10)
    assert c2 is not None
    assert _value(store, "postbox_messages_claimed_total", mailbox_id="q") == 2
    assert _value(store, "postbox_messages_committed_total", mailbox_id="q") == 1
    await store.release(c2.message.message_id, claimer="w", kind="transient")
    assert _value(store, "postbox_messages_released_total", mailbox_id="q",
                  kind="transient") == 1
    assert await store.claim("q", claimer="w") is None  # the second delivery: max_attempts
    assert _value(store, "postbox_messages_dead_lettered_total", mailbox_id="q",
                  reason="max_attempts_exceeded") == 1

    c3 = await store.claim("r", claimer="w", lease_duration_ms=10)
    assert c3 is not None
    await store.release(c3.message.message_id, claimer="w", kind="permanent")
    assert _value(store, "postbox_messages_released_total", mailbox_id="r",
                  kind="permanent") == 1
    assert _value(store, "postbox_messages_dead_lettered_total", mailbox_id="r",
                  reason="permanent_failure") == 1

    pending = await store.send("r", b"3", sender="s")
    await store.reject_validation(pending.message_id, note="n")
    assert _value(store, "postbox_messages_dead_lettered_total", mailbox_id="r",
                  reason="validation_failed") == 1

    await store.send("r", b"4", sender="s", ttl_ms=0)
    await store.send("r", b"5", sender="s")
    c5 = await store.claim("r", claimer="w", lease_duration_ms=10)
    assert c5 is not None
    clock.advance(1.0)
    await store.sweep()
    assert _value(store, "postbox_messages_expired_total", mailbox_id="r") == 1
    assert _value(store, "postbox_messages_dead_lettered_total", mailbox_id="r",
                  reason="expired") == 1
    assert _value(store, "postbox_leases_swept_total") == 1


async def test_the_registry_belongs_to_the_store(store: Any) -> None:
    assert isinstance(store.metrics, CollectorRegistry)
    names = {m.name for m in store.metrics.collect()}
    assert {
        "postbox_messages_sent", "postbox_messages_claimed", "postbox_messages_committed",
        "postbox_messages_released", "postbox_messages_dead_lettered",
        "postbox_messages_expired", "postbox_leases_swept",
    } <= names
