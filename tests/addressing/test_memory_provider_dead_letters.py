"""Dead-letter queue, its headers, the nesting cap and parking (seed 2, 4)."""

from __future__ import annotations

import math

import pytest
from postoffice_helpers import INBOX, within

from dovecote._errors import OptionsError
from dovecote.addressing import Lease, MailMessage, MemoryProvider, PostOffice, RetriableError

DLQ = INBOX + "_dlq"


@pytest.fixture
def dlq_provider(provider: MemoryProvider) -> MemoryProvider:
    provider.enable_dead_letter_queue()
    return provider


async def leased(office: PostOffice, address: str) -> Lease:
    lease = await office.fetch(address, manual_ack=True)
    assert lease is not None
    return lease


async def test_the_dead_letter_queue_is_opt_in(provider: MemoryProvider) -> None:
    assert provider.dead_letter_topic(INBOX) is None
    assert not provider.can("dead-letter", INBOX)
    provider.enable_dead_letter_queue()
    assert provider.can("dead-letter", INBOX)
    assert provider.dead_letter_topic(INBOX) == DLQ


async def test_a_fatal_subscriber_failure_is_archived_with_why_it_died(
    dlq_provider: MemoryProvider, office: PostOffice
) -> None:
    async def bad(message: MailMessage) -> None:
        raise ValueError("bad payload")

    await office.subscribe(INBOX, bad)
    sent = await office.post(to=INBOX, body="order", id="order-1")
    await within(office.wait_settled())
    dead = await office.fetch(DLQ)
    assert dead is not None
    assert (dead.id, dead.body, dead.to) == ("order-1", "order", sent.to)
    assert dead.headers["mbx-dead-letter-reason"] == "fatal"
    assert dead.headers["mbx-dead-letter-attempts"] == "1"
    assert dead.headers["mbx-dead-letter-round"] == "1"
    assert dead.headers["mbx-dead-letter-error"] == "ValueError: bad payload"
    assert dead.headers["mbx-dead-letter-topic"] == INBOX
    assert dead.headers["mbx-dead-letter-depth"] == "1"
    assert dead.key != sent.key


async def test_a_failed_delivery_of_a_handled_broadcast_is_archived_as_retriable(
    dlq_provider: MemoryProvider, office: PostOffice
) -> None:
    async def ok(message: MailMessage) -> None:
        return None

    async def flaky(message: MailMessage) -> None:
        raise RetriableError("upstream down")

    await office.subscribe(INBOX, ok)
    await office.subscribe(INBOX, flaky)
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    assert (await office.status(INBOX)).unread_count == 0
    dead = await office.fetch(DLQ)
    assert dead is not None
    assert dead.headers["mbx-dead-letter-reason"] == "retriable"


async def test_a_consumer_discard_is_archived_once(
    dlq_provider: MemoryProvider, office: PostOffice
) -> None:
    await office.post(to=INBOX, body=1)
    lease = await leased(office, INBOX)
    assert await lease.ack("discard")
    assert await lease.ack("discard") is False
    status = await office.status(DLQ)
    assert status.unread_count == 1
    dead = await office.fetch(DLQ)
    assert dead is not None
    assert dead.headers["mbx-dead-letter-reason"] == "consumer-nack"


async def test_discard_after_handled_does_not_dead_letter_a_success(
    dlq_provider: MemoryProvider, office: PostOffice
) -> None:
    await office.post(to=INBOX, body=1)
    lease = await leased(office, INBOX)
    assert await lease.ack("handled")
    assert await lease.ack("discard") is False
    assert (await office.status(DLQ)).exists is False


async def test_a_give_up_from_the_dead_letter_topic_parks_at_the_nesting_cap(
    dlq_provider: MemoryProvider, office: PostOffice
) -> None:
    await office.post(to=INBOX, body="poison")
    await (await leased(office, INBOX)).ack("discard")
    assert dlq_provider.dead_letter_topic(DLQ) == DLQ
    assert await (await leased(office, DLQ)).ack("discard")
    status = await office.status(DLQ)
    assert (status.unread_count, status.in_flight_count, status["mem.parked_count"]) == (0, 0, 1)
    assert await office.fetch(DLQ) is None
    assert await office.fetch(DLQ, peek=True, limit=10) == []
    assert (await office.status(DLQ + "_dlq")).exists is False
    [parked] = dlq_provider.peek_parked(DLQ)
    assert parked.headers["mbx-dead-letter-terminal"] == "true"
    assert parked.body == "poison"


async def test_parked_records_are_removed_only_by_purge_parked(
    dlq_provider: MemoryProvider, office: PostOffice
) -> None:
    await office.post(to=INBOX, body="poison")
    await (await leased(office, INBOX)).ack("discard")
    await (await leased(office, DLQ)).ack("discard")
    await office.clear()
    assert (await office.status(DLQ))["mem.parked_count"] == 1
    assert dlq_provider.purge_parked(DLQ) == 1
    assert (await office.status(DLQ))["mem.parked_count"] == 0
    assert dlq_provider.peek_parked(DLQ) == []


async def test_a_bigger_max_nesting_opens_a_real_chain(
    provider: MemoryProvider, office: PostOffice
) -> None:
    provider.enable_dead_letter_queue(max_nesting=2)
    await office.post(to=INBOX, body=1)
    await (await leased(office, INBOX)).ack("discard")
    await (await leased(office, DLQ)).ack("discard")
    deeper = await office.fetch(DLQ + "_dlq")
    assert deeper is not None
    assert deeper.headers["mbx-dead-letter-depth"] == "2"
    assert deeper.headers["mbx-dead-letter-topic"] == DLQ
    assert provider.dead_letter_topic(DLQ + "_dlq") == DLQ + "_dlq"


async def test_infinite_nesting_is_the_explicit_no_limit_exit(provider: MemoryProvider) -> None:
    provider.enable_dead_letter_queue(max_nesting=math.inf)
    assert provider.dead_letter_topic(DLQ + "_dlq") == DLQ + "_dlq_dlq"


async def test_a_custom_suffix_is_appended_to_the_path(provider: MemoryProvider) -> None:
    provider.enable_dead_letter_queue(suffix=".dlq")
    assert provider.dead_letter_topic(INBOX) == INBOX + ".dlq"
    provider.enable_dead_letter_queue(suffix="_%E6%AD%BB%E4%BF%A1")
    assert provider.dead_letter_topic(INBOX) == INBOX + "_%E6%AD%BB%E4%BF%A1"


@pytest.mark.parametrize(
    "suffix", ["", "_死信", '"q', "<q>", "`q", "{q}", "/dlq", ".", "..", "_%e6%ad", "a b", 7]
)
def test_a_suffix_canonicalisation_would_rewrite_is_rejected(
    provider: MemoryProvider, suffix: object
) -> None:
    with pytest.raises(OptionsError):
        provider.enable_dead_letter_queue(suffix=suffix)  # type: ignore[arg-type]


@pytest.mark.parametrize("max_nesting", [0, -1, 1.5, "1", True])
def test_max_nesting_must_be_a_positive_int_or_infinity(
    provider: MemoryProvider, max_nesting: object
) -> None:
    with pytest.raises(OptionsError):
        provider.enable_dead_letter_queue(max_nesting=max_nesting)  # type: ignore[arg-type]


async def test_dead_letter_records_reach_a_subscriber_of_the_dead_letter_topic(
    dlq_provider: MemoryProvider, office: PostOffice
) -> None:
    seen: list[MailMessage] = []

    async def compensate(message: MailMessage) -> None:
        seen.append(message)

    async def bad(message: MailMessage) -> None:
        raise ValueError("bad")

    await office.subscribe(DLQ, compensate)
    await office.subscribe(INBOX, bad)
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    [record] = seen
    assert record.headers["mbx-dead-letter-topic"] == INBOX


async def test_a_crashing_compensation_worker_parks_the_record(
    dlq_provider: MemoryProvider, office: PostOffice
) -> None:
    async def bad(message: MailMessage) -> None:
        raise ValueError("still bad")

    await office.subscribe(DLQ, bad)
    await office.subscribe(INBOX, bad)
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    status = await office.status(DLQ)
    assert (status.unread_count, status["mem.parked_count"]) == (0, 1)
    [parked] = dlq_provider.peek_parked(DLQ)
    assert parked.headers["mbx-dead-letter-topic"] == DLQ
