"""Pull side: peek, three dispositions, leases, ack timeouts, recover, sweeper (seed 2, 5)."""

from __future__ import annotations

import asyncio

import pytest
from postoffice_helpers import INBOX, within

from dovecote._errors import UnsupportedCapabilityError
from dovecote.addressing import (
    DEFAULT_ACK_TIMEOUT,
    Lease,
    ManualClock,
    MemoryProvider,
    PostOffice,
)


async def lease_of(office: PostOffice, **options: float) -> Lease:
    lease = await office.fetch(INBOX, manual_ack=True, **options)
    assert lease is not None
    return lease


# -- peek ------------------------------------------------------------------------------------


async def test_peek_returns_copies_and_changes_nothing(
    office: PostOffice, clock: ManualClock
) -> None:
    for body in ("a", "b", "c"):
        await office.post(to=INBOX, body={"v": body})
    before = await office.status(INBOX)
    clock.advance(60)
    peeked = await office.fetch(INBOX, peek=True, limit=2)
    assert [m.body["v"] for m in peeked] == ["a", "b"]
    peeked[0].body["v"] = "mutated"
    after = await office.status(INBOX)
    assert (after.unread_count, after.in_flight_count) == (3, 0)
    assert after.last_activity_time == before.last_activity_time
    first = await office.fetch(INBOX)
    assert first is not None
    assert first.body == {"v": "a"}


async def test_peek_on_an_idle_queue_is_an_empty_list(office: PostOffice) -> None:
    assert await office.fetch(INBOX, peek=True, limit=5) == []


async def test_peek_never_lists_messages_another_consumer_holds(office: PostOffice) -> None:
    await office.post(to=INBOX, body="held")
    await office.post(to=INBOX, body="waiting")
    await lease_of(office)
    assert [m.body for m in await office.fetch(INBOX, peek=True, limit=5)] == ["waiting"]
    assert (await office.status(INBOX)).in_flight_count == 1


async def test_peek_does_not_make_an_unknown_address_known(office: PostOffice) -> None:
    await office.fetch(INBOX, peek=True)
    await office.fetch(INBOX)
    assert (await office.status(INBOX)).exists is False


# -- dispositions ----------------------------------------------------------------------------


async def test_a_plain_fetch_takes_the_message_for_good(office: PostOffice) -> None:
    await office.post(to=INBOX, body=1)
    assert await office.fetch(INBOX) is not None
    status = await office.status(INBOX)
    assert (status.unread_count, status.in_flight_count) == (0, 0)


async def test_manual_ack_moves_the_message_in_flight_not_unread(office: PostOffice) -> None:
    await office.post(to=INBOX, body=1)
    await lease_of(office)
    status = await office.status(INBOX)
    assert (status.unread_count, status.in_flight_count) == (0, 1)


async def test_handled_removes_the_copy_for_good(office: PostOffice) -> None:
    await office.post(to=INBOX, body=1)
    lease = await lease_of(office)
    assert await lease.ack("handled")
    status = await office.status(INBOX)
    assert (status.unread_count, status.in_flight_count) == (0, 0)


async def test_ack_without_argument_means_handled(office: PostOffice) -> None:
    await office.post(to=INBOX, body=1)
    assert await (await lease_of(office)).ack()
    assert (await office.status(INBOX)).in_flight_count == 0


async def test_discard_without_a_dead_letter_queue_is_a_silent_drop(
    office: PostOffice, provider: MemoryProvider
) -> None:
    await office.post(to=INBOX, body=1)
    assert not provider.can("dead-letter", INBOX)
    assert await (await lease_of(office)).ack("discard")
    snapshot = await office.status()
    assert (snapshot.unread_count, snapshot.in_flight_count, snapshot.address_count) == (0, 0, 1)


async def test_unhandled_puts_the_copy_back_in_the_queue(office: PostOffice) -> None:
    await office.post(to=INBOX, body="again")
    lease = await lease_of(office)
    assert await lease.ack("unhandled")
    again = await lease_of(office)
    assert again.message.body == "again"
    assert again.key == lease.key


async def test_one_fetch_is_one_disposition(office: PostOffice) -> None:
    await office.post(to=INBOX, body=1)
    lease = await lease_of(office)
    assert await lease.ack("unhandled")
    assert await lease.ack("handled") is False
    assert await lease.ack("discard") is False
    assert (await office.status(INBOX)).unread_count == 1


async def test_an_undeclared_disposition_fails_before_anything_changes(
    office: PostOffice,
) -> None:
    await office.post(to=INBOX, body=1)
    lease = await lease_of(office)
    with pytest.raises(UnsupportedCapabilityError):
        await lease.ack("bounce")
    assert not lease.settled
    assert await lease.ack("handled")


async def test_nack_is_a_deprecated_alias(office: PostOffice) -> None:
    await office.post(to=INBOX, body=1)
    lease = await lease_of(office)
    with pytest.warns(DeprecationWarning, match="deprecated"):
        assert await lease.nack(True)
    assert (await office.status(INBOX)).unread_count == 1


# -- ack timeouts and reclaim ---------------------------------------------------------------


async def test_the_default_lease_lasts_thirty_seconds(
    office: PostOffice, clock: ManualClock
) -> None:
    assert DEFAULT_ACK_TIMEOUT == 30.0
    await office.post(to=INBOX, body=1)
    lease = await lease_of(office)
    assert lease.expires_at == clock.now() + 30.0


async def test_an_expired_lease_is_reclaimed_lazily_by_the_next_manual_ack_fetch(
    office: PostOffice, clock: ManualClock
) -> None:
    await office.post(to=INBOX, body=1)
    first = await lease_of(office, ack_timeout=5)
    clock.advance(5)
    status = await office.status(INBOX)
    assert (status.in_flight_count, status["mem.overdue_in_flight_count"]) == (1, 1)
    second = await lease_of(office, ack_timeout=5)
    assert second.key == first.key
    assert await first.ack() is False
    assert await second.ack()


async def test_a_short_fetch_cannot_steal_a_lease_that_has_not_expired(
    office: PostOffice, clock: ManualClock
) -> None:
    await office.post(to=INBOX, body=1)
    await lease_of(office, ack_timeout=30)
    clock.advance(1)
    assert await office.fetch(INBOX, manual_ack=True, ack_timeout=0.001) is None
    assert (await office.status(INBOX)).in_flight_count == 1


async def test_a_long_fetch_cannot_stretch_a_lease_that_has_expired(
    office: PostOffice, clock: ManualClock
) -> None:
    await office.post(to=INBOX, body=1)
    await lease_of(office, ack_timeout=1)
    clock.advance(2)
    assert await office.fetch(INBOX, manual_ack=True, ack_timeout=3600) is not None


async def test_ack_timeout_zero_never_expires(office: PostOffice, clock: ManualClock) -> None:
    await office.post(to=INBOX, body=1)
    lease = await lease_of(office, ack_timeout=0)
    assert lease.expires_at is None
    clock.advance(10**9)
    assert await office.fetch(INBOX, manual_ack=True, ack_timeout=1) is None
    assert (await office.recover(INBOX)).reclaimed == 0
    assert (await office.status(INBOX))["mem.overdue_in_flight_count"] == 0
    assert await lease.ack()


async def test_overdue_count_and_oldest_overdue_age_are_reported(
    office: PostOffice, clock: ManualClock
) -> None:
    await office.post(to=INBOX, body=1)
    await office.post(to=INBOX, body=2)
    await lease_of(office, ack_timeout=1)
    await lease_of(office, ack_timeout=2)
    clock.advance(3.5)
    status = await office.status(INBOX)
    assert status["mem.overdue_in_flight_count"] == 2
    assert status["mem.oldest_overdue_ms"] == 2500


async def test_recover_reclaims_only_expired_leases_and_is_idempotent(
    office: PostOffice, clock: ManualClock
) -> None:
    for body in range(3):
        await office.post(to=INBOX, body=body)
    await lease_of(office, ack_timeout=1)
    await lease_of(office, ack_timeout=100)
    await lease_of(office, ack_timeout=0)
    clock.advance(2)
    result = await office.recover(INBOX)
    assert (result.reclaimed, result.supported) == (1, True)
    assert (await office.recover(INBOX)).reclaimed == 0
    status = await office.status(INBOX)
    assert (status.unread_count, status.in_flight_count) == (1, 2)


async def test_recover_without_an_address_covers_every_address(
    office: PostOffice, clock: ManualClock
) -> None:
    for address in (INBOX, "mem:other@example.com/q"):
        await office.post(to=address, body=1)
        await office.fetch(address, manual_ack=True, ack_timeout=1)
    clock.advance(1)
    report = await office.recover()
    assert report.reclaimed == 2
    assert dict(report.by_address) == {INBOX: 1, "mem://other@example.com/q": 1}
    assert report.unreachable_providers == ()


async def test_the_opt_in_sweeper_reclaims_on_a_clock_and_stops_with_the_provider(
    clock: ManualClock,
) -> None:
    provider = MemoryProvider.create_isolated(clock=clock, lease_sweep_interval=10)
    office = PostOffice([provider])
    await office.start()
    await office.post(to=INBOX, body=1)
    await office.fetch(INBOX, manual_ack=True, ack_timeout=5)
    await within(clock.wait_for_sleepers(1))
    clock.advance(10)
    await within(clock.wait_for_sleepers(1))
    assert (await office.status(INBOX)).unread_count == 1
    await office.stop()
    assert clock.sleeper_count == 0


async def test_the_sweeper_is_off_by_default(office: PostOffice) -> None:
    await asyncio.sleep(0)
    provider = office.get_provider("mem", required=True)
    assert isinstance(provider, MemoryProvider)
    assert provider.lease_sweep_interval is None
    assert provider._sweeper is None
