"""Claims, ordering, leases and fencing, on every backend."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dovecote import ManualClock
from dovecote.durable import (
    AlreadyCommittedError,
    InvalidRequestError,
    InvalidStateError,
    MailboxNotFoundError,
    MessageNotFoundError,
)
from dovecote.durable._ulid import new_ulid


async def _claim_payloads(store: Any, agent_id: str, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        claim = await store.claim(agent_id, claimer="w")
        assert claim is not None
        out.append(claim.message.payload)
        await store.commit(claim.message.message_id, claimer="w", checkpoint_token="t")
    return out


async def test_claim_on_an_empty_mailbox_returns_none(store: Any) -> None:
    await store.ensure_mailbox("q")
    assert await store.claim("q", claimer="w") is None
    assert await store.peek("q") == []


async def test_claim_and_peek_on_an_unknown_mailbox_are_not_found(store: Any) -> None:
    with pytest.raises(MailboxNotFoundError):
        await store.claim("ghost", claimer="w")
    with pytest.raises(MailboxNotFoundError):
        await store.peek("ghost")


async def test_a_claim_returns_the_claimed_message_under_its_lease(
    store: Any, clock: ManualClock
) -> None:
    sent = await store.send("q", b"x", sender="s")
    claim = await store.claim("q", claimer="w", lease_duration_ms=30_000)
    assert claim is not None
    m = claim.message
    assert (m.message_id, m.status, m.claimed_by, m.attempt_count) == (
        sent.message_id, "claimed", "w", 1)
    assert claim.lease_expires_at_ms == m.lease_expires_at_ms == sent.created_at_ms + 30_000
    assert claim.lease_token
    assert await store.claim("q", claimer="other") is None
    assert await store.peek("q") == []


async def test_a_silent_claim_uses_the_mailbox_lease(store: Any) -> None:
    await store.ensure_mailbox("q", lease_duration_ms=1_234)
    sent = await store.send("q", b"x", sender="s")
    claim = await store.claim("q", claimer="w")
    assert claim is not None
    assert claim.lease_expires_at_ms == sent.created_at_ms + 1_234


async def test_peek_does_not_claim(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    assert [m.message_id for m in await store.peek("q")] == [sent.message_id]
    assert [m.message_id for m in await store.peek("q")] == [sent.message_id]


async def test_fifo_is_per_sender_strict_order(store: Any, clock: ManualClock) -> None:
    await store.ensure_mailbox("q")
    a1 = await store.send("q", b"a1", sender="a")
    clock.advance(0.001)
    await store.send("q", b"b1", sender="b")
    clock.advance(0.001)
    await store.send("q", b"a2", sender="a")
    first = await store.claim("q", claimer="w")
    assert first is not None
    assert first.message.message_id == a1.message_id
    # a's next message waits while a1 is held; b1 is served
    assert [m.payload for m in await store.peek("q")] == [b"b1"]
    second = await store.claim("q", claimer="w")
    assert second is not None
    assert second.message.payload == b"b1"
    assert await store.claim("q", claimer="w") is None
    await store.commit(a1.message_id, claimer="w", checkpoint_token="t")
    third = await store.claim("q", claimer="w")
    assert third is not None
    assert third.message.payload == b"a2"


async def test_fifo_across_senders_is_oldest_first(store: Any, clock: ManualClock) -> None:
    await store.send("q", b"a1", sender="sender_a")
    await store.send("q", b"a2", sender="sender_a")
    clock.advance(0.005)
    await store.send("q", b"b1", sender="sender_b")
    assert await _claim_payloads(store, "q", 3) == [b"a1", b"a2", b"b1"]


async def test_unordered_is_globally_oldest_first_without_a_hold(store: Any) -> None:
    await store.ensure_mailbox("q", ordering_mode="unordered")
    for i in range(3):
        await store.send("q", bytes([i]), sender="same")
    claims = [await store.claim("q", claimer=f"c{i}") for i in range(3)]
    assert [c.message.payload for c in claims if c] == [b"\x00", b"\x01", b"\x02"]


async def test_concurrent_claims_get_distinct_messages(store: Any) -> None:
    await store.ensure_mailbox("q", ordering_mode="unordered")
    for i in range(3):
        await store.send("q", bytes([i]), sender="s")
    claims = await asyncio.gather(*(store.claim("q", claimer="w") for _ in range(3)))
    assert len({c.message.message_id for c in claims if c}) == 3


async def test_priority_serves_the_highest_first_and_fifo_within_a_band(store: Any) -> None:
    await store.ensure_mailbox("p", ordering_mode="priority")
    await store.send("p", b"low", sender="s", priority=2)
    await store.send("p", b"high", sender="s", priority=10)
    await store.send("p", b"lowest", sender="s", priority=1)
    await store.send("p", b"first-equal", sender="t", priority=5)
    await store.send("p", b"second-equal", sender="t", priority=5)
    order = [b"high", b"first-equal", b"second-equal", b"low", b"lowest"]
    assert [m.payload for m in await store.peek("p")] == order
    assert await _claim_payloads(store, "p", 5) == order


async def test_peek_returns_what_claims_return_in_that_order(
    store: Any, clock: ManualClock
) -> None:
    await store.ensure_mailbox("q")
    for i, sender in enumerate(["a", "b", "a", "c", "b"]):
        await store.send("q", bytes([i]), sender=sender)
        clock.advance(0.001)
    peeked = [m.payload for m in await store.peek("q")]
    assert peeked == [bytes([i]) for i in range(5)]
    assert await _claim_payloads(store, "q", 5) == peeked
    assert [m.payload for m in await store.peek("q", max=0)] == []


async def test_a_delayed_message_is_invisible_until_its_time(
    store: Any, clock: ManualClock
) -> None:
    sent = await store.send("q", b"later", sender="s", delay_ms=1_000)
    assert sent.visible_at_ms == sent.created_at_ms + 1_000
    assert await store.claim("q", claimer="w") is None
    assert await store.peek("q") == []
    clock.advance(1.0)
    claim = await store.claim("q", claimer="w")
    assert claim is not None
    assert claim.message.message_id == sent.message_id


async def test_an_expired_lease_is_reclaimable_and_counts_a_delivery(
    store: Any, clock: ManualClock
) -> None:
    await store.send("q", b"x", sender="s")
    first = await store.claim("q", claimer="c1", lease_duration_ms=50)
    assert first is not None
    assert first.message.attempt_count == 1
    clock.advance(1.0)
    assert await store.peek("q") == []  # expired but unswept: still hidden from peek
    result = await store.sweep()
    assert result.leases_recovered == 1
    assert (await store.sweep()).leases_recovered == 0
    second = await store.claim("q", claimer="c2")
    assert second is not None
    assert second.message.attempt_count == 2


async def test_a_claim_returns_the_other_expired_leases_to_pending(
    store: Any, clock: ManualClock
) -> None:
    await store.ensure_mailbox("q", ordering_mode="unordered")
    for _ in range(3):
        await store.send("q", b"x", sender="s")
    for _ in range(2):
        assert await store.claim("q", claimer="c1", lease_duration_ms=50) is not None
    clock.advance(1.0)
    # the oldest expired lease is claimed again; the other one is pending again at once
    again = await store.claim("q", claimer="c2")
    assert again is not None
    assert again.message.attempt_count == 2
    stats = await store.stats("q")
    assert (stats.pending_count, stats.claimed_count) == (2, 1)
    assert (await store.sweep()).leases_recovered == 0


async def test_a_zero_lease_is_expired_at_once(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    first = await store.claim("q", claimer="w", lease_duration_ms=0)
    second = await store.claim("q", claimer="w", lease_duration_ms=0)
    assert first is not None
    assert second is not None
    assert first.message.message_id == second.message.message_id == sent.message_id


async def test_commit_settles_the_message(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    claim = await store.claim("q", claimer="w")
    assert claim is not None
    assert not await store.is_committed("q", sent.message_id)
    await store.commit(sent.message_id, claimer="w", checkpoint_token="waitpoint:abc:42")
    assert await store.is_committed("q", sent.message_id)
    assert not await store.is_committed("other", sent.message_id)
    assert not await store.is_committed("ghost", sent.message_id)
    assert await store.peek("q") == []
    assert await store.claim("q", claimer="w") is None
    with pytest.raises(AlreadyCommittedError):
        await store.commit(sent.message_id, claimer="w", checkpoint_token="again")
    with pytest.raises(AlreadyCommittedError):
        await store.release(sent.message_id, claimer="w")


@pytest.mark.parametrize("token", ["", "   ", "\t"])
async def test_commit_needs_a_checkpoint_token(store: Any, token: str) -> None:
    sent = await store.send("q", b"x", sender="s")
    await store.claim("q", claimer="w")
    with pytest.raises(InvalidRequestError, match="checkpoint"):
        await store.commit(sent.message_id, claimer="w", checkpoint_token=token)
    # checked before the lookup: an unknown id with an empty token is still a bad request
    with pytest.raises(InvalidRequestError):
        await store.commit(new_ulid(0), claimer="w", checkpoint_token=token)


async def test_commit_and_release_by_an_imposter_are_refused(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    await store.claim("q", claimer="claimer")
    with pytest.raises(InvalidStateError, match="imposter"):
        await store.commit(sent.message_id, claimer="imposter", checkpoint_token="t")
    with pytest.raises(InvalidStateError):
        await store.release(sent.message_id, claimer="imposter")
    await store.commit(sent.message_id, claimer="claimer", checkpoint_token="t")


async def test_settling_a_pending_message_is_refused(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    with pytest.raises(InvalidStateError):
        await store.commit(sent.message_id, claimer="w", checkpoint_token="t")
    with pytest.raises(InvalidStateError):
        await store.release(sent.message_id, claimer="w")


async def test_unknown_and_malformed_message_ids(store: Any) -> None:
    with pytest.raises(MessageNotFoundError):
        await store.commit(new_ulid(0), claimer="w", checkpoint_token="t")
    with pytest.raises(MessageNotFoundError):
        await store.release(new_ulid(0), claimer="w")
    with pytest.raises(MessageNotFoundError):
        await store.reject_validation(new_ulid(0), note="n")
    for bad in ("not-a-ulid", "", "8" * 26, "0" * 25 + "U"):
        with pytest.raises(InvalidRequestError):
            await store.commit(bad, claimer="w", checkpoint_token="t")
    with pytest.raises(InvalidRequestError):
        await store.release(new_ulid(0), claimer="w", kind="forever")


async def test_a_lowercase_message_id_names_the_same_message(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    await store.claim("q", claimer="w")
    await store.commit(sent.message_id.lower(), claimer="w", checkpoint_token="t")
    assert await store.is_committed("q", sent.message_id.lower())


async def test_a_transient_release_keeps_the_message_place(
    store: Any, clock: ManualClock
) -> None:
    m1 = await store.send("q", b"m1", sender="s")
    await store.send("q", b"m2", sender="s")
    await store.send("q", b"m3", sender="s")
    claim = await store.claim("q", claimer="w", lease_duration_ms=50)
    assert claim is not None
    clock.advance(1.1)
    # the lease expired but nobody swept or re-claimed: late settlement is accepted
    await store.release(m1.message_id, claimer="w", kind="transient", note="busy")
    [head, *_] = await store.peek("q")
    assert (head.message_id, head.status, head.attempt_count) == (m1.message_id, "pending", 1)
    assert await _claim_payloads(store, "q", 3) == [b"m1", b"m2", b"m3"]


async def test_late_commit_after_expiry_is_accepted_until_swept(
    store: Any, clock: ManualClock
) -> None:
    sent = await store.send("q", b"x", sender="s")
    claim = await store.claim("q", claimer="w", lease_duration_ms=50)
    assert claim is not None
    clock.advance(1.0)
    await store.commit(sent.message_id, claimer="w", checkpoint_token="t",
                       lease_token=claim.lease_token)
    assert await store.is_committed("q", sent.message_id)


async def test_a_claim_swept_back_is_fenced(store: Any, clock: ManualClock) -> None:
    sent = await store.send("q", b"x", sender="s")
    await store.claim("q", claimer="w", lease_duration_ms=50)
    clock.advance(1.0)
    await store.sweep()
    with pytest.raises(InvalidStateError):
        await store.commit(sent.message_id, claimer="w", checkpoint_token="t")
    with pytest.raises(InvalidStateError):
        await store.release(sent.message_id, claimer="w")


async def test_a_reclaimed_message_fences_the_old_claim_by_lease_token(
    store: Any, clock: ManualClock
) -> None:
    sent = await store.send("q", b"x", sender="s")
    old = await store.claim("q", claimer="w", lease_duration_ms=50)
    assert old is not None
    clock.advance(1.0)
    new = await store.claim("q", claimer="w")  # same claimer id, a new claim
    assert new is not None
    assert new.lease_token != old.lease_token
    with pytest.raises(InvalidStateError, match="lease"):
        await store.commit(sent.message_id, claimer="w", checkpoint_token="t",
                           lease_token=old.lease_token)
    with pytest.raises(InvalidStateError):
        await store.release(sent.message_id, claimer="w", lease_token=old.lease_token)
    await store.commit(sent.message_id, claimer="w", checkpoint_token="t",
                       lease_token=new.lease_token)
    with pytest.raises(AlreadyCommittedError):
        await store.commit(sent.message_id, claimer="w", checkpoint_token="t",
                           lease_token=old.lease_token)


async def test_a_reclaim_by_another_claimer_fences_the_old_one(
    store: Any, clock: ManualClock
) -> None:
    sent = await store.send("q", b"x", sender="s")
    await store.claim("q", claimer="old", lease_duration_ms=50)
    clock.advance(1.0)
    await store.claim("q", claimer="new")
    with pytest.raises(InvalidStateError):
        await store.commit(sent.message_id, claimer="old", checkpoint_token="t")
    await store.commit(sent.message_id, claimer="new", checkpoint_token="t")
    with pytest.raises(AlreadyCommittedError):
        await store.commit(sent.message_id, claimer="old", checkpoint_token="t")


async def test_many_concurrent_claimers_commit_each_message_once(store: Any) -> None:
    await store.ensure_mailbox("q", ordering_mode="unordered")
    sent = [await store.send("q", bytes([i % 256]), sender="s") for i in range(100)]
    committed: list[str] = []

    async def worker() -> None:
        while (claim := await store.claim("q", claimer="claimer")) is not None:
            await store.commit(claim.message.message_id, claimer="claimer",
                               checkpoint_token="t")
            committed.append(claim.message.message_id)

    await asyncio.gather(*(worker() for _ in range(16)))
    assert sorted(committed) == sorted(m.message_id for m in sent)
    for m in sent:
        assert await store.is_committed("q", m.message_id)
