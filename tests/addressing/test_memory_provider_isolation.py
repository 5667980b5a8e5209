"""Instance isolation and state reset for the mem: provider."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from postoffice_helpers import within

from dovecote.addressing import MailMessage, MemoryBus, MemoryProvider, PostOffice


@pytest.fixture
def unique_inbox() -> Iterator[str]:
    address = f"mem://isolation-{uuid.uuid4().hex}@test/inbox"
    yield address
    MemoryProvider().bus.clear(address)


async def test_providers_share_one_process_wide_bus_by_default(unique_inbox: str) -> None:
    sender, receiver = PostOffice([MemoryProvider()]), PostOffice([MemoryProvider()])
    await sender.post(to=unique_inbox, body="across offices")
    fetched = await receiver.fetch(unique_inbox)
    assert fetched is not None
    assert fetched.body == "across offices"


async def test_two_post_offices_on_the_default_bus_reach_each_others_subscribers(
    unique_inbox: str,
) -> None:
    sender, receiver = PostOffice([MemoryProvider()]), PostOffice([MemoryProvider()])
    seen: list[object] = []

    async def record(message: MailMessage) -> None:
        seen.append(message.body)

    subscription = await receiver.subscribe(unique_inbox, record)
    await sender.post(to=unique_inbox, body=1)
    await within(sender.wait_settled())
    await subscription.unsubscribe()
    assert seen == [1]


async def test_the_shared_state_outlives_stop(unique_inbox: str) -> None:
    office = PostOffice([MemoryProvider()])
    await office.start()
    await office.post(to=unique_inbox, body=1)
    await office.stop()
    assert (await PostOffice([MemoryProvider()]).status(unique_inbox)).unread_count == 1


async def test_an_isolated_provider_sees_nothing_of_anybody_else(unique_inbox: str) -> None:
    await PostOffice([MemoryProvider()]).post(to=unique_inbox, body=1)
    isolated = PostOffice([MemoryProvider.create_isolated()])
    assert await isolated.fetch(unique_inbox) is None
    assert (await isolated.status(unique_inbox)).exists is False


async def test_a_scope_is_shared_within_and_invisible_across() -> None:
    scope_a, scope_b = f"tenant-a-{uuid.uuid4().hex}", f"tenant-b-{uuid.uuid4().hex}"
    one, two = PostOffice([MemoryProvider.for_scope(scope_a)]), PostOffice(
        [MemoryProvider.for_scope(scope_a)]
    )
    other = PostOffice([MemoryProvider.for_scope(scope_b)])
    await one.post(to="mem:a@b/c", body=1)
    assert (await other.status("mem:a@b/c")).exists is False
    assert await two.fetch("mem:a@b/c") is not None


async def test_bringing_your_own_bus_shares_it_between_exactly_those_providers() -> None:
    bus = MemoryBus()
    one, two = PostOffice([MemoryProvider(bus)]), PostOffice([MemoryProvider(bus)])
    await one.post(to="mem:a@b/c", body=1)
    assert await two.fetch("mem:a@b/c") is not None


async def test_clearing_one_topic_on_the_bus_returns_how_many_were_dropped() -> None:
    provider = MemoryProvider.create_isolated()
    office = PostOffice([provider])
    for _ in range(3):
        await office.post(to="mem:a@b/one", body=1)
    await office.post(to="mem:a@b/two", body=1)
    assert provider.bus.clear("mem://a@b/one") == 3
    assert (await office.status("mem:a@b/two")).unread_count == 1
