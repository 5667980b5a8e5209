"""PostOffice: providers by scheme, entry-point validation, lifecycle and status (seed 1, 7)."""

from __future__ import annotations

from typing import Any

import pytest
from postoffice_helpers import INBOX, within

from dovecote._errors import (
    InvalidFetchOptionsError,
    InvalidMailboxAddressError,
    OptionsError,
    UnsupportedCapabilityError,
)
from dovecote.addressing import (
    AddressState,
    CopyState,
    MailAddress,
    MailMessage,
    ManualClock,
    MemoryProvider,
    PostOffice,
    Provider,
    Subscription,
    UnknownSchemeError,
)


class PushOnlyProvider(Provider):
    """A transport that can only push to subscribers (no queue, no status)."""

    scheme = "push"

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[MailMessage] = []
        self.attached: list[Subscription] = []

    async def _send(self, message: MailMessage) -> None:
        self.sent.append(message)
        for subscription in self.attached:
            self._deliver_to_local_subscription(subscription.id, message)

    async def _subscribe(self, subscription: Subscription) -> None:
        self.attached.append(subscription)

    async def _unsubscribe(self, subscription: Subscription) -> None:
        self.attached.remove(subscription)


async def test_get_provider_accepts_the_scheme_with_or_without_colon(
    office: PostOffice, provider: MemoryProvider
) -> None:
    assert office.get_provider("mem") is provider
    assert office.get_provider("mem:") is provider
    assert office.get_provider("MEM") is provider
    assert "mem" in office.providers


async def test_get_provider_returns_none_or_raises_when_required(office: PostOffice) -> None:
    assert office.get_provider("slack") is None
    with pytest.raises(UnknownSchemeError):
        office.get_provider("slack", required=True)


async def test_providers_is_a_read_only_view(office: PostOffice) -> None:
    with pytest.raises(TypeError):
        office.providers["x"] = MemoryProvider.create_isolated()  # type: ignore[index]


async def test_registering_something_that_is_not_a_provider_fails() -> None:
    with pytest.raises(OptionsError):
        PostOffice().register_provider(object())  # type: ignore[arg-type]


@pytest.mark.parametrize("address", ["mem:x@y/a?q=1", "mem:x@y/a#f", "mem:@y", "not an address"])
async def test_every_entry_point_rejects_a_bad_address(office: PostOffice, address: str) -> None:
    async def noop(message: MailMessage) -> None:
        return None

    with pytest.raises(InvalidMailboxAddressError):
        await office.post(to=address, body=1)
    with pytest.raises(InvalidMailboxAddressError):
        await office.subscribe(address, noop)
    with pytest.raises(InvalidMailboxAddressError):
        await office.fetch(address)
    with pytest.raises(InvalidMailboxAddressError):
        await office.status(address)
    with pytest.raises(InvalidMailboxAddressError):
        await office.recover(address)


async def test_every_entry_point_rejects_an_unknown_scheme(office: PostOffice) -> None:
    async def noop(message: MailMessage) -> None:
        return None

    address = "slack:ops@team/alerts"
    for call in (
        office.post(to=address, body=1),
        office.subscribe(address, noop),
        office.fetch(address),
        office.status(address),
        office.recover(address),
    ):
        with pytest.raises(UnsupportedCapabilityError):
            await call


async def test_a_bad_sender_address_is_rejected_before_anything_is_queued(
    office: PostOffice,
) -> None:
    with pytest.raises(InvalidMailboxAddressError):
        await office.post(to=INBOX, body=1, from_="nobody")
    assert (await office.status(INBOX)).exists is False


@pytest.mark.parametrize(
    "options",
    [
        {"peek": True, "manual_ack": True},
        {"limit": 0, "peek": True},
        {"limit": 5},
        {"limit": True, "peek": True},
        {"manual_ack": True, "ack_timeout": -1},
        {"manual_ack": True, "ack_timeout": float("nan")},
        {"manual_ack": True, "ack_timeout": float("inf")},
        {"manual_ack": "yes"},
    ],
)
async def test_contradictory_or_out_of_range_fetch_options_are_rejected(
    office: PostOffice, options: dict[str, Any]
) -> None:
    await office.post(to=INBOX, body=1)
    with pytest.raises(InvalidFetchOptionsError):
        await office.fetch(INBOX, **options)
    assert (await office.status(INBOX)).unread_count == 1


async def test_operations_a_provider_does_not_declare_raise_unsupported_capability() -> None:
    office = PostOffice([PushOnlyProvider()])
    with pytest.raises(UnsupportedCapabilityError):
        await office.fetch("push:a@b/c")
    with pytest.raises(UnsupportedCapabilityError):
        await office.fetch("push:a@b/c", peek=True)
    with pytest.raises(UnsupportedCapabilityError):
        await office.fetch("push:a@b/c", manual_ack=True)


async def test_a_provider_that_cannot_answer_status_reports_exists_unset() -> None:
    office = PostOffice([PushOnlyProvider()])
    status = await office.status("push:a@b/c")
    assert status.exists is None
    assert status.state is AddressState.UNKNOWN


async def test_recover_on_a_provider_without_leases_says_unsupported() -> None:
    office = PostOffice([PushOnlyProvider()])
    result = await office.recover("push:a@b/c")
    assert result.supported is False
    report = await office.recover()
    assert report.unreachable_providers == ("push",)


async def test_a_snapshot_degrades_when_a_provider_cannot_enumerate(
    provider: MemoryProvider,
) -> None:
    office = PostOffice([provider, PushOnlyProvider()])
    await office.post(to=INBOX, body=1)
    snapshot = await office.status()
    assert snapshot.state is AddressState.DEGRADED
    assert snapshot.unsupported_providers == ("push",)
    assert snapshot.unread_count == 1


async def test_a_snapshot_lists_every_address_sorted(office: PostOffice) -> None:
    for address in ("mem:b@h/2", "mem:a@h/1", "mem:c@h/0"):
        await office.post(to=address, body=1)
    snapshot = await office.status()
    assert [entry.address for entry in snapshot.addresses] == [
        "mem://a@h/1",
        "mem://b@h/2",
        "mem://c@h/0",
    ]
    assert snapshot.address_count == 3
    assert snapshot.state is AddressState.ONLINE
    assert snapshot == await office.snapshot()


async def test_an_empty_snapshot_is_unknown(office: PostOffice) -> None:
    assert (await office.status()).state is AddressState.UNKNOWN


async def test_an_address_never_seen_is_unknown_and_does_not_exist(office: PostOffice) -> None:
    status = await office.status(INBOX)
    assert status.state is AddressState.UNKNOWN
    assert status.exists is False
    assert status.last_activity_time is None


async def test_a_drained_address_stays_online(office: PostOffice) -> None:
    await office.post(to=INBOX, body=1)
    await office.fetch(INBOX)
    status = await office.status(INBOX)
    assert status.state is AddressState.ONLINE
    assert status.exists is True
    assert status.unread_count == 0


async def test_an_address_with_only_subscribers_is_online(office: PostOffice) -> None:
    async def noop(message: MailMessage) -> None:
        return None

    await office.subscribe(INBOX, noop)
    status = await office.status(INBOX)
    assert status.state is AddressState.ONLINE
    assert status["mem.subscriber_count"] == 1


async def test_last_activity_time_is_iso_8601(office: PostOffice, clock: ManualClock) -> None:
    await office.post(to=INBOX, body=1)
    assert (await office.status(INBOX)).last_activity_time == "2023-11-14T22:13:20.000Z"


async def test_status_has_the_mem_extension_keys(office: PostOffice) -> None:
    status = await office.status(INBOX)
    for key in (
        "mem.parked_count",
        "mem.overdue_in_flight_count",
        "mem.oldest_overdue_ms",
        "mem.subscriber_count",
    ):
        assert status[key] == 0


async def test_post_returns_the_letter_with_its_copy_key(office: PostOffice) -> None:
    sent = await office.post(to="mem:A@B/c", body="hi", from_="mem:me@b", id="order-42")
    assert sent.id == "order-42"
    assert sent.to == MailAddress.parse("mem://A@b/c")
    assert sent.from_ == MailAddress.parse("mem://me@b")
    assert sent.key


async def test_post_rejects_headers_that_are_not_strings(office: PostOffice) -> None:
    with pytest.raises(OptionsError):
        await office.post(to=INBOX, body=1, headers={"n": 1})  # type: ignore[dict-item]


async def test_stop_keeps_the_backlog_and_purge_drops_it(provider: MemoryProvider) -> None:
    office = PostOffice([provider])
    await office.start()
    await office.post(to=INBOX, body=1)
    await office.stop()
    await office.start()
    assert (await office.status(INBOX)).unread_count == 1
    await office.stop(purge=True)
    assert (await office.status(INBOX)).unread_count == 0


async def test_stop_cancels_every_subscription(office: PostOffice) -> None:
    async def noop(message: MailMessage) -> None:
        return None

    subscription = await office.subscribe(INBOX, noop)
    await office.stop()
    assert not subscription.active
    assert (await office.status(INBOX))["mem.subscriber_count"] == 0
    await office.post(to=INBOX, body=1)
    assert (await office.status(INBOX)).unread_count == 1


async def test_clear_drops_messages_but_keeps_subscriptions(office: PostOffice) -> None:
    async def noop(message: MailMessage) -> None:
        return None

    await office.post(to=INBOX, body=1)
    lease = await office.fetch(INBOX, manual_ack=True)
    await office.post(to=INBOX, body=2)
    subscription = await office.subscribe("mem:other@h", noop)
    assert await office.clear() == 2
    assert subscription.active
    status = await office.status(INBOX)
    assert (status.unread_count, status.in_flight_count) == (0, 0)
    assert lease is not None
    assert await lease.ack() is False


async def test_locate_finds_every_copy_by_the_senders_id(office: PostOffice) -> None:
    await office.post(to="mem:buyer@shop/orders", body=1, id="order-42")
    await office.post(to="mem:seller@shop/orders", body=2, id="order-42")
    lease = await office.fetch("mem:seller@shop/orders", manual_ack=True)
    found = await office.locate("order-42")
    assert {(c.topic, c.state) for c in found} == {
        ("mem://buyer@shop/orders", CopyState.QUEUED),
        ("mem://seller@shop/orders", CopyState.IN_FLIGHT),
    }
    assert lease is not None
    in_flight = next(c for c in found if c.state is CopyState.IN_FLIGHT)
    assert (in_flight.key, in_flight.lease_id) == (lease.key, lease.lease_id)
    assert (await office.status("mem:buyer@shop/orders")).unread_count == 1


async def test_settling_by_message_id_touches_nothing(
    office: PostOffice, provider: MemoryProvider
) -> None:
    await office.post(to=INBOX, body=1, id="order-42")
    lease = await office.fetch(INBOX, manual_ack=True)
    assert lease is not None
    address = MailAddress.parse(INBOX)
    assert await provider.settle(address, "order-42", lease.lease_id, "handled") is False
    assert (await office.status(INBOX)).in_flight_count == 1


async def test_a_provider_on_two_post_offices_is_flagged_once(provider: MemoryProvider) -> None:
    PostOffice([provider])
    PostOffice([provider])
    assert "two-offices" in provider._warned


async def test_a_provider_without_nack_warns_instead_of_pretending() -> None:
    push = PushOnlyProvider()
    office = PostOffice([push])

    async def failing(message: MailMessage) -> None:
        raise ValueError("bad payload")

    await office.subscribe("push:a@b/c", failing)
    await office.post(to="push:a@b/c", body=1)
    await within(office.wait_settled())
    assert "nack" in push._warned


async def test_async_with_starts_and_stops_the_post_office(provider: MemoryProvider) -> None:
    async with PostOffice([provider]) as office:
        assert provider.started
        assert office.get_provider("mem") is provider
    assert not provider.started
