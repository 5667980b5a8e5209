"""claim_stream: woken by sends, delays and lease expiry, never by polling."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dovecote import ManualClock
from dovecote.durable import MailboxNotFoundError

WAIT = 5.0


async def _next(stream: AsyncIterator[Any]) -> Any:
    return await asyncio.wait_for(anext(stream), WAIT)


async def test_a_stream_yields_what_is_there_then_what_is_sent(store: Any) -> None:
    await store.ensure_mailbox("q")
    first = await store.send("q", b"1", sender="s")
    stream = store.claim_stream("q", claimer="w")
    assert (await _next(stream)).message.message_id == first.message_id
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0)
    assert not pending.done()
    second = await store.send("q", b"2", sender="t")
    claim = await asyncio.wait_for(pending, WAIT)
    assert claim.message.message_id == second.message_id
    await stream.aclose()


async def test_a_stream_stops_after_max_messages(store: Any) -> None:
    for i in range(3):
        await store.send("q", bytes([i]), sender=f"s{i}")
    claims = [c async for c in store.claim_stream("q", claimer="w", max_messages=2)]
    assert len(claims) == 2


async def test_a_stream_wakes_when_a_delay_ends(store: Any, clock: ManualClock) -> None:
    sent = await store.send("q", b"later", sender="s", delay_ms=1_000)
    stream = store.claim_stream("q", claimer="w")
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.wait_for(clock.wait_for_sleepers(1), WAIT)
    assert not pending.done()
    clock.advance(1.0)
    claim = await asyncio.wait_for(pending, WAIT)
    assert claim.message.message_id == sent.message_id
    await stream.aclose()


async def test_a_stream_wakes_when_a_lease_expires(store: Any, clock: ManualClock) -> None:
    sent = await store.send("q", b"x", sender="s")
    await store.claim("q", claimer="crashed", lease_duration_ms=500)
    stream = store.claim_stream("q", claimer="w")
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.wait_for(clock.wait_for_sleepers(1), WAIT)
    clock.advance(0.5)
    claim = await asyncio.wait_for(pending, WAIT)
    assert (claim.message.message_id, claim.message.attempt_count) == (sent.message_id, 2)
    await stream.aclose()


async def test_a_stream_wakes_when_a_fifo_sender_is_unblocked(store: Any) -> None:
    a1 = await store.send("q", b"a1", sender="a")
    a2 = await store.send("q", b"a2", sender="a")
    await store.claim("q", claimer="other")
    stream = store.claim_stream("q", claimer="w")
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.01)
    assert not pending.done()
    await store.commit(a1.message_id, claimer="other", checkpoint_token="t")
    claim = await asyncio.wait_for(pending, WAIT)
    assert claim.message.message_id == a2.message_id
    await stream.aclose()


async def test_many_streams_share_the_sends(store: Any) -> None:
    await store.ensure_mailbox("q", ordering_mode="unordered")
    got: list[str] = []

    async def consume(name: str) -> None:
        async for claim in store.claim_stream("q", claimer=name):
            got.append(claim.message.message_id)
            await store.commit(claim.message.message_id, claimer=name, checkpoint_token="t")
            if len(got) == 20:
                return

    consumers = [asyncio.ensure_future(consume(f"c{i}")) for i in range(4)]
    await asyncio.sleep(0)
    sent = [await store.send("q", bytes([i]), sender="s") for i in range(20)]
    await asyncio.wait_for(asyncio.wait(consumers, return_when=asyncio.FIRST_COMPLETED), WAIT)
    for task in consumers:
        task.cancel()
    await asyncio.gather(*consumers, return_exceptions=True)
    assert sorted(got) == sorted(m.message_id for m in sent)


async def test_a_stream_on_an_unknown_mailbox_raises(store: Any) -> None:
    with pytest.raises(MailboxNotFoundError):
        await _next(store.claim_stream("ghost", claimer="w"))


async def test_closing_the_store_ends_its_streams(store: Any) -> None:
    await store.ensure_mailbox("q")
    stream = store.claim_stream("q", claimer="w")
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.01)
    await store.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(pending, WAIT)
