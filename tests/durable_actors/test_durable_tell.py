"""Tells to a durable actor go through the store: claimed, handled, committed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dovecote import ActorOptions, ActorStopped, ActorStoppedError, ActorSystem, OptionsError
from dovecote.codec import SerializationError

from .recorder import Recorder, Seen, durable


async def test_tells_are_stored_handled_in_order_and_committed(
    system: ActorSystem, store: Any
) -> None:
    seen = Seen()
    ref = system.spawn(lambda: Recorder(seen), "worker", durable(store))
    for i in range(20):
        ref.tell(i)
    await seen.count(20)
    assert seen.messages == list(range(20))
    await system.shutdown()
    stats = await store.stats("/user/worker")
    assert (stats.committed_count, stats.pending_count, stats.claimed_count) == (20, 0, 0)


async def test_tell_durable_returns_once_the_message_is_in_the_store(
    system: ActorSystem, store: Any
) -> None:
    seen = Seen()
    ref = system.spawn(lambda: Recorder(seen), "worker", durable(store, mailbox="jobs"))
    await ref.tell_durable({"job": 1})
    stats = await store.stats("jobs")
    assert stats.pending_count + stats.claimed_count + stats.committed_count == 1
    await seen.count(1)
    assert seen.messages == [{"job": 1}]


async def test_an_unencodable_message_raises_at_the_tell_site(
    system: ActorSystem, store: Any
) -> None:
    ref = system.spawn(lambda: Recorder(Seen()), "worker", durable(store))
    with pytest.raises(SerializationError):
        ref.tell(object())
    with pytest.raises(SerializationError):
        ref.tell_durable(object())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mailbox": "has space"},
        {"mailbox": ""},
        {"lease_duration_ms": 0},
        {"codec": 3},
        {"claim_ahead": 0},
        {"retriable": 5},
    ],
)
async def test_bad_durable_options_raise_options_error(store: Any, kwargs: Any) -> None:
    with pytest.raises(OptionsError):
        durable(store, **kwargs)
    with pytest.raises(OptionsError):
        ActorOptions.create().with_durable_mailbox(object())


async def test_tell_durable_to_an_in_memory_or_a_stopped_actor(
    system: ActorSystem, store: Any
) -> None:
    seen = Seen()
    memory = system.spawn(lambda: Recorder(seen), "memory")
    await memory.tell_durable("in memory")  # queued as by tell: already complete
    await seen.count(1)
    stopped = asyncio.get_running_loop().create_future()
    system.event_stream.subscribe(lambda event: stopped.set_result(event.ref), ActorStopped)
    gone = system.spawn(lambda: Recorder(Seen()), "gone", durable(store))
    gone.stop()
    assert await asyncio.wait_for(stopped, 5.0) == gone
    with pytest.raises(ActorStoppedError):
        await gone.tell_durable("too late")


async def test_a_durable_mailbox_does_not_combine_with_a_capacity(
    system: ActorSystem, store: Any
) -> None:
    options = durable(store).with_mailbox_capacity(10)
    with pytest.raises(OptionsError):
        system.spawn(lambda: Recorder(Seen()), "bounded", options)
