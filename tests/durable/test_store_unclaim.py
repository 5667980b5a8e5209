"""``unclaim``: a claim no handler saw is undone without counting the delivery, on every
backend; it is fenced by the lease token and refused, changing nothing, when stale."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dovecote import ManualClock
from dovecote.durable import (
    AlreadyCommittedError,
    InvalidRequestError,
    InvalidStateError,
    MessageNotFoundError,
)
from dovecote.durable._ulid import new_ulid


async def test_unclaim_restores_the_attempt_count_and_the_place(store: Any) -> None:
    await store.ensure_mailbox("q", ordering_mode="unordered", max_attempts=2)
    first = await store.send("q", b"1", sender="s")
    await store.send("q", b"2", sender="s")
    for _ in range(5):  # more rounds than max_attempts: none of them is a delivery
        claim = await store.claim("q", claimer="w")
        assert claim is not None
        assert claim.message.message_id == first.message_id
        assert claim.message.attempt_count == 1
        await store.unclaim(first.message_id, claimer="w", lease_token=claim.lease_token)
        [head, _] = await store.peek("q")
        assert (head.message_id, head.status, head.attempt_count) == (
            first.message_id, "pending", 0)
        assert head.claimed_by is None
        assert head.lease_expires_at_ms is None
    stats = await store.stats("q")
    assert (stats.pending_count, stats.claimed_count, stats.dead_lettered_count) == (2, 0, 0)
    assert await store.dead_letters("q") == []


async def test_unclaim_keeps_earlier_deliveries_counted(store: Any) -> None:
    await store.ensure_mailbox("q", max_attempts=2)
    sent = await store.send("q", b"x", sender="s")
    claim = await store.claim("q", claimer="w")
    await store.release(sent.message_id, claimer="w", lease_token=claim.lease_token)
    claim = await store.claim("q", claimer="w")
    assert claim.message.attempt_count == 2
    await store.unclaim(sent.message_id, claimer="w", lease_token=claim.lease_token)
    [back] = await store.peek("q")
    assert back.attempt_count == 1
    claim = await store.claim("q", claimer="w")  # the second delivery, still allowed
    assert claim is not None
    assert claim.message.attempt_count == 2
    await store.release(sent.message_id, claimer="w", lease_token=claim.lease_token)
    assert await store.claim("q", claimer="w") is None  # a third would exceed max_attempts
    [record] = await store.dead_letters("q")
    assert record.poison_reason == "max_attempts_exceeded"
    # two releases and the dead-lettering; the unclaim left no trace
    assert [(f.attempt, f.failure_kind) for f in record.failure_history] == [
        (1, "transient"), (2, "transient"), (2, "permanent")]


async def test_unclaim_is_fenced_by_the_lease_token(store: Any, clock: ManualClock) -> None:
    sent = await store.send("q", b"x", sender="s")
    old = await store.claim("q", claimer="w", lease_duration_ms=100)
    clock.advance(0.2)
    new = await store.claim("q", claimer="w")  # the old lease expired: claimed again
    assert new.message.attempt_count == 2
    with pytest.raises(InvalidStateError):
        await store.unclaim(sent.message_id, claimer="w", lease_token=old.lease_token)
    with pytest.raises(InvalidStateError):
        await store.unclaim(sent.message_id, claimer="other", lease_token=new.lease_token)
    assert (await store.stats("q")).claimed_count == 1  # nothing changed
    await store.unclaim(sent.message_id, claimer="w", lease_token=new.lease_token)
    [back] = await store.peek("q")
    assert back.attempt_count == 1  # the expired lease still counts: only its undo is free
    with pytest.raises(InvalidStateError):  # a second unclaim: not claimed any more
        await store.unclaim(sent.message_id, claimer="w", lease_token=new.lease_token)


async def test_unclaim_after_a_commit_or_on_an_unknown_message(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    claim = await store.claim("q", claimer="w")
    await store.commit(sent.message_id, claimer="w", checkpoint_token="t",
                       lease_token=claim.lease_token)
    with pytest.raises(AlreadyCommittedError):
        await store.unclaim(sent.message_id, claimer="w", lease_token=claim.lease_token)
    with pytest.raises(MessageNotFoundError):
        await store.unclaim(new_ulid(1), claimer="w", lease_token=claim.lease_token)


async def test_unclaim_needs_a_valid_lease_token_and_ids(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    claim = await store.claim("q", claimer="w")
    for bad in (None, "", 7):
        with pytest.raises(InvalidRequestError):
            await store.unclaim(sent.message_id, claimer="w", lease_token=bad)
    with pytest.raises(InvalidRequestError):
        await store.unclaim("not-a-ulid", claimer="w", lease_token=claim.lease_token)
    with pytest.raises(InvalidRequestError):
        await store.unclaim(sent.message_id, claimer="bad id", lease_token=claim.lease_token)
    assert (await store.stats("q")).claimed_count == 1


async def test_unclaim_wakes_a_waiting_stream(store: Any) -> None:
    sent = await store.send("q", b"x", sender="s")
    claim = await store.claim("q", claimer="w")
    stream = store.claim_stream("q", claimer="w2")

    waiting = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)
    await store.unclaim(sent.message_id, claimer="w", lease_token=claim.lease_token)
    got = await asyncio.wait_for(waiting, 10)
    assert got.message.message_id == sent.message_id
    assert got.message.attempt_count == 1
    await stream.aclose()
