"""Mailboxes and sending, on every backend: ensure / get / list / stats, send, fanout."""

from __future__ import annotations

from typing import Any

import pytest

from dovecote import ManualClock
from dovecote.durable import (
    CapacityError,
    InvalidRequestError,
    MailboxConfig,
    MailboxNotFoundError,
)

from .conftest import START_WALL

NOW_MS = int(START_WALL * 1000)


async def test_ensure_creates_with_the_defaults_and_is_create_only(store: Any) -> None:
    created = await store.ensure_mailbox("alice", capacity=100, max_attempts=3)
    assert created == MailboxConfig("alice", capacity=100, max_attempts=3)
    again = await store.ensure_mailbox("alice", capacity=5, ordering_mode="priority")
    assert again == created
    assert await store.get_mailbox("alice") == created


async def test_get_of_an_unknown_mailbox_is_not_found(store: Any) -> None:
    with pytest.raises(MailboxNotFoundError):
        await store.get_mailbox("ghost")


async def test_list_mailboxes_pages_by_agent_id_with_an_exclusive_cursor(store: Any) -> None:
    for name in ("charlie", "alpha", "bravo"):
        await store.ensure_mailbox(name)
    assert [m.agent_id for m in await store.list_mailboxes(limit=2)] == ["alpha", "bravo"]
    assert [m.agent_id for m in await store.list_mailboxes(limit=10, after="bravo")] == [
        "charlie"
    ]
    assert await store.list_mailboxes(limit=0) == []


async def test_a_send_returns_the_pending_message(store: Any, clock: ManualClock) -> None:
    await store.ensure_mailbox("alice")
    sent = await store.send("alice", b"hi", sender="ops", headers={"k": "v"}, priority=3)
    assert (sent.mailbox_id, sent.sender_id, sent.payload) == ("alice", "ops", b"hi")
    assert (sent.status, sent.attempt_count, sent.priority) == ("pending", 0, 3)
    assert dict(sent.headers) == {"k": "v"}
    assert sent.created_at_ms == sent.visible_at_ms == NOW_MS
    assert sent.expires_at_ms is None
    assert len(sent.message_id) == 26
    [peeked] = await store.peek("alice")
    assert peeked == sent


async def test_message_ids_increase_strictly_within_one_millisecond(store: Any) -> None:
    ids = [(await store.send("alice", b"x", sender="ops")).message_id for _ in range(50)]
    assert ids == sorted(ids)
    assert len(set(ids)) == 50


async def test_a_send_to_an_unknown_mailbox_creates_it_with_defaults(store: Any) -> None:
    await store.send("newcomer", b"x", sender="ops")
    assert await store.get_mailbox("newcomer") == MailboxConfig("newcomer")


@pytest.mark.parametrize(
    "bad", ["", "has space", "tab\there", "new\nline", "nul\x00", "x" * 257,
            "nbsp\u00a0", "ideographic\u3000space", "é" * 129]
)
async def test_bad_agent_ids_are_refused_before_anything_changes(store: Any, bad: str) -> None:
    with pytest.raises(InvalidRequestError):
        await store.send(bad, b"x", sender="ops")
    with pytest.raises(InvalidRequestError):
        await store.send("alice", b"x", sender=bad)
    assert await store.list_mailboxes() == []


@pytest.mark.parametrize("good", ["alice", "agent-123", "agent_456", "svc/orders.api",
                                  "x" * 256, "é" * 128, "/user/orders"])
async def test_good_agent_ids_are_accepted(store: Any, good: str) -> None:
    await store.send(good, b"x", sender=good)
    assert (await store.get_mailbox(good)).agent_id == good


async def test_payload_cap_is_inclusive(store: Any) -> None:
    await store.ensure_mailbox("small", max_payload_bytes=64)
    await store.send("small", b"x" * 64, sender="ops")
    with pytest.raises(InvalidRequestError, match="payload too large"):
        await store.send("small", b"x" * 65, sender="ops")
    assert (await store.stats("small")).pending_count == 1


@pytest.mark.parametrize(
    "headers",
    [
        {f"k{i}": "v" for i in range(101)},
        {"k" * 257: "v"},
        {"k": "v" * 8193},
        {"k": 1},
        {"": "v"},
        ["not", "a", "mapping"],
    ],
)
async def test_bad_headers_are_refused(store: Any, headers: Any) -> None:
    with pytest.raises(InvalidRequestError, match="headers"):
        await store.send("alice", b"x", sender="ops", headers=headers)


async def test_header_limits_are_inclusive(store: Any) -> None:
    headers = {f"k{i}": "v" for i in range(99)} | {"k" * 256: "v" * 8192}
    sent = await store.send("alice", b"x", sender="ops", headers=headers)
    assert dict(sent.headers) == headers
    assert dict((await store.peek("alice"))[0].headers) == headers


@pytest.mark.parametrize(
    ("field", "value"),
    [("priority", 2**31), ("priority", True), ("delay_ms", -1), ("ttl_ms", -5),
     ("delay_ms", 1.5)],
)
async def test_bad_numbers_are_refused(store: Any, field: str, value: Any) -> None:
    with pytest.raises(InvalidRequestError):
        await store.send("alice", b"x", sender="ops", **{field: value})


async def test_a_payload_must_be_bytes(store: Any) -> None:
    with pytest.raises(InvalidRequestError):
        await store.send("alice", "text", sender="ops")


@pytest.mark.parametrize(
    "options",
    [{"ordering_mode": "lifo"}, {"capacity": -1}, {"max_attempts": "3"},
     {"lease_duration_ms": -1}, {"dlq_retention_ms": -1}],
)
async def test_bad_mailbox_options_are_refused(store: Any, options: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequestError):
        await store.ensure_mailbox("alice", **options)
    with pytest.raises(MailboxNotFoundError):
        await store.get_mailbox("alice")


async def test_capacity_counts_pending_delayed_and_claimed(store: Any) -> None:
    await store.ensure_mailbox("q", capacity=2)
    await store.send("q", b"a", sender="s")
    await store.send("q", b"b", sender="s", delay_ms=60_000)
    with pytest.raises(CapacityError):
        await store.send("q", b"c", sender="other")
    claim = await store.claim("q", claimer="w")
    assert claim is not None
    with pytest.raises(CapacityError):
        await store.send("q", b"c", sender="other")
    await store.commit(claim.message.message_id, claimer="w", checkpoint_token="t")
    await store.send("q", b"c", sender="other")


async def test_capacity_zero_refuses_the_first_send(store: Any) -> None:
    await store.ensure_mailbox("none", capacity=0)
    with pytest.raises(CapacityError):
        await store.send("none", b"x", sender="s")


async def test_a_capacity_error_carries_its_wire_code(store: Any) -> None:
    await store.ensure_mailbox("none", capacity=0)
    with pytest.raises(CapacityError) as raised:
        await store.send("none", b"x", sender="s")
    assert (raised.value.code, raised.value.http_status) == ("mailbox_full", 503)


async def test_fanout_sends_one_message_per_target(store: Any) -> None:
    sent = await store.fanout(["alice", "bob", "carol"], b"all", sender="ops")
    assert [m.mailbox_id for m in sent] == ["alice", "bob", "carol"]
    assert len({m.message_id for m in sent}) == 3
    assert len({m.created_at_ms for m in sent}) == 1
    for name in ("alice", "bob", "carol"):
        [peeked] = await store.peek(name)
        assert peeked.payload == b"all"


async def test_fanout_is_all_or_nothing(store: Any) -> None:
    await store.ensure_mailbox("full", capacity=1)
    await store.send("full", b"x", sender="s")
    with pytest.raises(CapacityError):
        await store.fanout(["bob", "full"], b"y", sender="ops")
    with pytest.raises(MailboxNotFoundError):
        await store.peek("bob")  # not even auto-created
    await store.ensure_mailbox("tiny", max_payload_bytes=1)
    with pytest.raises(InvalidRequestError):
        await store.fanout(["bob", "tiny"], b"yy", sender="ops")
    with pytest.raises(InvalidRequestError):
        await store.fanout(["bob", "bad id"], b"y", sender="ops")
    await store.ensure_mailbox("bob")
    assert await store.peek("bob") == []


async def test_fanout_to_no_targets_sends_nothing(store: Any) -> None:
    assert await store.fanout([], b"x", sender="ops") == []


async def test_stats_count_each_state(store: Any, clock: ManualClock) -> None:
    await store.ensure_mailbox("q")
    first = await store.send("q", b"1", sender="s")
    clock.advance(0.005)
    await store.send("q", b"2", sender="t", delay_ms=10_000)
    await store.send("q", b"3", sender="u")
    await store.send("q", b"4", sender="v")
    claim = await store.claim("q", claimer="w")
    assert claim is not None
    await store.commit(claim.message.message_id, claimer="w", checkpoint_token="t")
    claim = await store.claim("q", claimer="w")
    assert claim is not None
    third = await store.claim("q", claimer="w")
    assert third is not None
    await store.release(third.message.message_id, claimer="w", kind="permanent")
    stats = await store.stats("q")
    assert (stats.pending_count, stats.claimed_count, stats.committed_count,
            stats.dead_lettered_count) == (1, 1, 1, 1)
    assert stats.oldest_pending_at_ms == first.created_at_ms + 5  # the delayed one counts
    with pytest.raises(MailboxNotFoundError):
        await store.stats("ghost")
