"""Dead letters, max_attempts, TTL, retention, replay and purge, on every backend."""

from __future__ import annotations

from typing import Any

import pytest

from dovecote import ManualClock
from dovecote.durable import (
    CapacityError,
    InvalidRequestError,
    InvalidStateError,
    MailboxNotFoundError,
    MessageNotFoundError,
)


async def _claim(store: Any, agent_id: str = "q", claimer: str = "w", **kw: Any) -> Any:
    claim = await store.claim(agent_id, claimer=claimer, **kw)
    assert claim is not None
    return claim


async def test_a_permanent_release_dead_letters_with_history(
    store: Any, clock: ManualClock
) -> None:
    sent = await store.send("q", b"x", sender="s", headers={"h": "1"}, priority=4)
    claim = await _claim(store)
    await store.release(sent.message_id, claimer="w", kind="transient", note="try again")
    claim = await _claim(store)
    clock.advance(0.5)
    await store.release(claim.message.message_id, claimer="w", kind="permanent", note="bad")
    assert await store.peek("q") == []
    [record] = await store.dead_letters("q")
    assert (record.message_id, record.poison_reason, record.attempt_count) == (
        sent.message_id, "permanent_failure", 2)
    assert (record.sender_id, record.payload, dict(record.headers), record.priority) == (
        "s", b"x", {"h": "1"}, 4)
    assert record.created_at_ms == sent.created_at_ms
    assert record.dead_lettered_at_ms == sent.created_at_ms + 500
    assert [(f.attempt, f.claimed_by, f.failure_kind, f.note) for f in
            record.failure_history] == [(1, "w", "transient", "try again"),
                                        (2, "w", "permanent", "bad")]
    # out of the live set: settling it again is "not found"
    for settle in (
        store.commit(sent.message_id, claimer="w", checkpoint_token="t"),
        store.release(sent.message_id, claimer="w"),
        store.reject_validation(sent.message_id, note="n"),
    ):
        with pytest.raises(MessageNotFoundError):
            await settle


async def test_max_attempts_means_n_deliveries(store: Any, clock: ManualClock) -> None:
    await store.ensure_mailbox("q", max_attempts=3)
    poison = await store.send("q", b"poison", sender="s")
    clock.advance(0.001)
    healthy = await store.send("q", b"ok", sender="t")
    for attempt in (1, 2, 3):
        claim = await _claim(store)
        assert (claim.message.message_id, claim.message.attempt_count) == (
            poison.message_id, attempt)
        await store.release(poison.message_id, claimer="w")
    # the 4th delivery would exceed: it dead-letters and the claim moves on
    assert [m.message_id for m in await store.peek("q")] == [healthy.message_id]
    claim = await _claim(store)
    assert claim.message.message_id == healthy.message_id
    [record] = await store.dead_letters("q", reason="max_attempts_exceeded")
    assert (record.message_id, record.attempt_count) == (poison.message_id, 3)


async def test_max_attempts_counts_lease_expiries(store: Any, clock: ManualClock) -> None:
    await store.ensure_mailbox("q", max_attempts=1)
    sent = await store.send("q", b"x", sender="s")
    await _claim(store, lease_duration_ms=10)
    clock.advance(1.0)
    assert await store.claim("q", claimer="w") is None
    [record] = await store.dead_letters("q")
    assert (record.message_id, record.poison_reason, record.attempt_count) == (
        sent.message_id, "max_attempts_exceeded", 1)
    assert record.failure_history[0].note == "lease expired"


async def test_max_attempts_zero_never_delivers(store: Any) -> None:
    await store.ensure_mailbox("q", max_attempts=0)
    await store.send("q", b"x", sender="s")
    assert await store.peek("q") == []
    assert await store.claim("q", claimer="w") is None
    assert len(await store.dead_letters("q")) == 1


async def test_reject_validation_of_a_pending_message(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    await store.reject_validation(sent.message_id, note="schema mismatch")
    [record] = await store.dead_letters("q", reason="validation_failed")
    assert record.message_id == sent.message_id
    assert record.failure_history[0].note == "schema mismatch"
    assert record.failure_history[0].claimed_by is None


async def test_reject_validation_of_a_claimed_or_committed_message_is_refused(
    store: Any,
) -> None:
    sent = await store.send("q", b"x", sender="s")
    await _claim(store)
    with pytest.raises(InvalidStateError):
        await store.reject_validation(sent.message_id, note="n")
    await store.commit(sent.message_id, claimer="w", checkpoint_token="t")
    with pytest.raises(InvalidStateError):
        await store.reject_validation(sent.message_id, note="n")


async def test_the_reason_filter(store: Any) -> None:
    a = await store.send("q", b"a", sender="s")
    await _claim(store)
    await store.release(a.message_id, claimer="w", kind="permanent")
    b = await store.send("q", b"b", sender="s")
    await store.reject_validation(b.message_id, note="n")
    assert len(await store.dead_letters("q")) == 2
    assert len(await store.dead_letters("q", reason="permanent_failure")) == 1
    assert len(await store.dead_letters("q", reason="validation_failed")) == 1
    assert await store.dead_letters("q", reason="expired") == []
    assert len(await store.dead_letters("q", limit=1)) == 1
    assert await store.dead_letters("ghost") == []
    with pytest.raises(InvalidRequestError):
        await store.dead_letters("q", reason="bored")


async def test_ttl_expiry_dead_letters_pending_messages_only(
    store: Any, clock: ManualClock
) -> None:
    kept = await store.send("q", b"claimed", sender="s", ttl_ms=50)
    await _claim(store, lease_duration_ms=120_000)
    gone = await store.send("q", b"pending", sender="t", ttl_ms=50)
    assert gone.expires_at_ms == gone.created_at_ms + 50
    forever = await store.send("q", b"no ttl", sender="u")
    clock.advance(60.0)
    result = await store.sweep()
    assert result.expired == 1
    [record] = await store.dead_letters("q", reason="expired")
    assert record.message_id == gone.message_id
    assert record.failure_history[-1].claimed_by is None
    stats = await store.stats("q")
    assert (stats.claimed_count, stats.pending_count) == (1, 1)
    assert [m.message_id for m in await store.peek("q")] == [forever.message_id]
    await store.commit(kept.message_id, claimer="w", checkpoint_token="t")


async def test_ttl_zero_expires_at_once(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s", ttl_ms=0)
    assert sent.expires_at_ms == sent.created_at_ms
    assert await store.claim("q", claimer="w") is None
    assert (await store.sweep()).expired == 1
    assert [r.message_id for r in await store.dead_letters("q")] == [sent.message_id]


async def test_a_released_message_past_its_ttl_expires_at_the_next_sweep(
    store: Any, clock: ManualClock
) -> None:
    sent = await store.send("q", b"x", sender="s", ttl_ms=100)
    await _claim(store)
    clock.advance(1.0)
    assert (await store.sweep()).expired == 0
    await store.release(sent.message_id, claimer="w")
    assert (await store.sweep()).expired == 1


async def test_dlq_retention_is_enforced_by_the_sweeper(
    store: Any, clock: ManualClock
) -> None:
    await store.ensure_mailbox("q", dlq_retention_ms=1_000)
    await store.ensure_mailbox("forever")
    for box in ("q", "forever"):
        sent = await store.send(box, b"x", sender="s")
        await store.reject_validation(sent.message_id, note="n")
    clock.advance(0.999)
    assert (await store.sweep()).retention_purged == 0
    clock.advance(0.001)
    assert (await store.sweep()).retention_purged == 1
    assert await store.dead_letters("q") == []
    assert len(await store.dead_letters("forever")) == 1
    assert (await store.stats("q")).dead_lettered_count == 0


async def test_replay_makes_a_new_message_and_keeps_the_record(
    store: Any, clock: ManualClock
) -> None:
    sent = await store.send("q", b"x", sender="s", headers={"h": "1"}, priority=2, ttl_ms=10)
    await _claim(store)
    await store.release(sent.message_id, claimer="w", kind="permanent")
    clock.advance(1.0)
    replayed = await store.replay(sent.message_id, replayed_by="ops")
    assert replayed.message_id != sent.message_id
    assert (replayed.attempt_count, replayed.status, replayed.mailbox_id) == (0, "pending", "q")
    assert (replayed.sender_id, replayed.payload, replayed.priority) == ("s", b"x", 2)
    assert replayed.expires_at_ms is None
    assert dict(replayed.headers) == {
        "h": "1", "replayed_from": sent.message_id, "replayed_by": "ops",
        "replayed_at": str(replayed.created_at_ms),
    }
    assert len(await store.dead_letters("q")) == 1
    claim = await _claim(store)
    assert claim.message.message_id == replayed.message_id
    again = await store.replay(sent.message_id, replayed_by="ops")
    assert again.message_id not in (sent.message_id, replayed.message_id)


async def test_replay_to_another_mailbox(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    await store.reject_validation(sent.message_id, note="n")
    with pytest.raises(MailboxNotFoundError):
        await store.replay(sent.message_id, replayed_by="ops", target_mailbox="ghost")
    await store.ensure_mailbox("full", capacity=0)
    with pytest.raises(CapacityError):
        await store.replay(sent.message_id, replayed_by="ops", target_mailbox="full")
    await store.ensure_mailbox("tiny", max_payload_bytes=0)
    with pytest.raises(InvalidRequestError):
        await store.replay(sent.message_id, replayed_by="ops", target_mailbox="tiny")
    await store.ensure_mailbox("other")
    replayed = await store.replay(sent.message_id, replayed_by="ops", target_mailbox="other")
    assert replayed.mailbox_id == "other"
    assert [m.message_id for m in await store.peek("other")] == [replayed.message_id]


async def test_replay_of_a_live_or_unknown_message_is_not_found(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    with pytest.raises(MessageNotFoundError):
        await store.replay(sent.message_id, replayed_by="ops")


async def test_purge_deletes_strictly_before_the_cutoff(store: Any, clock: ManualClock) -> None:
    sent = await store.send("q", b"x", sender="s")
    await store.reject_validation(sent.message_id, note="n")
    [record] = await store.dead_letters("q")
    at = record.dead_lettered_at_ms
    assert await store.purge_dead_letters("q", before_ms=at - 60_000) == 0
    assert await store.purge_dead_letters("q", before_ms=at) == 0
    assert await store.purge_dead_letters("ghost", before_ms=at + 1) == 0
    assert await store.purge_dead_letters("q", before_ms=at + 1) == 1
    assert await store.dead_letters("q") == []
