"""``postbox.v1.PostboxService`` over a started ``dovecote serve``, with a grpcio client.

Every one of the sixteen rpcs, upstream's status-code mapping (seed 004 §3), zeros meaning
"unset", StreamClaim pushed by sends, and server reflection.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from gateway_kit import Broker, unique
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from dovecote.gateway._proto import SERVICE_NAME, load

pb, services = load()
TIMEOUT = 10.0
UNKNOWN_ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


@pytest.fixture(scope="module")
def channel(sqlite_broker: Broker) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(sqlite_broker.grpc) as ch:
        yield ch


@pytest.fixture(scope="module")
def stub(channel: grpc.Channel) -> Any:
    return services.PostboxServiceStub(channel)


def code_of(call: Any) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value.code()  # type: ignore[no-any-return]


def send(stub: Any, box: str, payload: bytes = b"hi", **extra: Any) -> Any:
    request = pb.SendMessageRequest(to_agent=box, from_agent="ops", payload=payload, **extra)
    return stub.SendMessage(request, timeout=TIMEOUT).message


def claim(stub: Any, box: str, claimer: str = "w1") -> Any:
    return stub.Claim(pb.ClaimRequest(agent_id=box, claimer_id=claimer), timeout=TIMEOUT)


def test_ensure_get_send_claim_commit_round_trip(stub: Any) -> None:
    box = unique()
    made = stub.EnsureMailbox(
        pb.EnsureMailboxRequest(agent_id=box, capacity=50, ordering_mode="priority"),
        timeout=TIMEOUT,
    ).mailbox
    assert (made.agent_id, made.capacity, made.ordering_mode) == (box, 50, "priority")
    got = stub.GetMailbox(pb.GetMailboxRequest(agent_id=box), timeout=TIMEOUT).mailbox
    assert got == made
    sent = send(stub, box, b"job", headers=pb.Headers(entries={"k": "v"}), priority=4)
    assert sent.mailbox_id == box
    assert sent.status == 0
    assert dict(sent.headers.entries) == {"k": "v"}
    assert sent.expires_at_ms == 0
    peeked = stub.Peek(pb.PeekRequest(agent_id=box), timeout=TIMEOUT).messages
    assert [m.message_id for m in peeked] == [sent.message_id]
    held = claim(stub, box).claim
    assert held.message.message_id == sent.message_id
    assert held.message.status == 1
    assert held.message.claimed_by == "w1"
    assert held.message.attempt_count == 1
    assert held.lease_expires_at_ms == held.message.lease_expires_at_ms > 0
    stub.Commit(
        pb.CommitRequest(message_id=sent.message_id, claimer_id="w1", checkpoint_token="wp:abc"),
        timeout=TIMEOUT,
    )
    done = stub.IsCommitted(
        pb.IsCommittedRequest(agent_id=box, message_id=sent.message_id), timeout=TIMEOUT
    )
    assert done.committed is True


def test_ensure_with_zero_fields_takes_the_defaults(stub: Any) -> None:
    box = unique()
    made = stub.EnsureMailbox(pb.EnsureMailboxRequest(agent_id=box), timeout=TIMEOUT).mailbox
    assert (made.capacity, made.ordering_mode, made.max_attempts) == (10_000, "fifo", 5)
    assert (made.lease_duration_ms, made.max_payload_bytes) == (60_000, 1_048_576)
    assert made.dlq_retention_ms == 0


def test_claim_of_an_empty_mailbox_leaves_claim_unset(stub: Any) -> None:
    box = unique()
    stub.EnsureMailbox(pb.EnsureMailboxRequest(agent_id=box), timeout=TIMEOUT)
    assert not claim(stub, box).HasField("claim")


def test_status_codes_follow_upstreams_mapping(stub: Any) -> None:
    box = unique()
    stub.EnsureMailbox(pb.EnsureMailboxRequest(agent_id=box, capacity=1), timeout=TIMEOUT)
    sent = send(stub, box)
    held = claim(stub, box, "owner").claim.message

    def commit(claimer: str, token: str, mid: str = held.message_id) -> Any:
        request = pb.CommitRequest(message_id=mid, claimer_id=claimer, checkpoint_token=token)
        return lambda: stub.Commit(request, timeout=TIMEOUT)

    assert code_of(commit("owner", "")) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(commit("imposter", "t")) == grpc.StatusCode.FAILED_PRECONDITION
    assert code_of(commit("owner", "t", UNKNOWN_ID)) == grpc.StatusCode.NOT_FOUND
    assert code_of(commit("owner", "t", "not-a-ulid")) == grpc.StatusCode.INVALID_ARGUMENT
    assert code_of(lambda: send(stub, box)) == grpc.StatusCode.RESOURCE_EXHAUSTED
    commit("owner", "t")()
    assert code_of(commit("owner", "t2")) == grpc.StatusCode.ALREADY_EXISTS
    assert sent.message_id == held.message_id
    ghost = pb.GetMailboxRequest(agent_id=unique("ghost"))
    assert code_of(lambda: stub.GetMailbox(ghost, timeout=TIMEOUT)) == grpc.StatusCode.NOT_FOUND
    bad = pb.SendMessageRequest(to_agent="has space", from_agent="ops", payload=b"x")
    assert code_of(lambda: stub.SendMessage(bad, timeout=TIMEOUT)) == (
        grpc.StatusCode.INVALID_ARGUMENT
    )
    kind = pb.ReleaseRequest(message_id=UNKNOWN_ID, claimer_id="w", kind="foo")
    assert code_of(lambda: stub.Release(kind, timeout=TIMEOUT)) == grpc.StatusCode.INVALID_ARGUMENT


def test_release_reject_dead_letters_replay_and_purge(stub: Any) -> None:
    box = unique()
    first = send(stub, box, b"poison")
    second = send(stub, box, b"invalid")
    claim(stub, box)
    stub.Release(
        pb.ReleaseRequest(message_id=first.message_id, claimer_id="w1", kind="transient"),
        timeout=TIMEOUT,
    )
    again = claim(stub, box).claim.message
    assert again.message_id == first.message_id
    assert again.attempt_count == 2
    stub.Release(
        pb.ReleaseRequest(
            message_id=first.message_id, claimer_id="w1", kind="permanent", note="boom"
        ),
        timeout=TIMEOUT,
    )
    stub.RejectValidation(
        pb.RejectValidationRequest(message_id=second.message_id, note="schema"), timeout=TIMEOUT
    )
    every = stub.ListDeadLetters(pb.ListDeadLettersRequest(agent_id=box), timeout=TIMEOUT)
    assert {d.poison_reason for d in every.dead_letters} == {
        "permanent_failure",
        "validation_failed",
    }
    only = stub.ListDeadLetters(
        pb.ListDeadLettersRequest(agent_id=box, reason="validation_failed"), timeout=TIMEOUT
    ).dead_letters
    assert [d.message_id for d in only] == [second.message_id]
    assert only[0].payload == b"invalid"
    replayed = stub.ReplayDeadLetter(
        pb.ReplayDeadLetterRequest(message_id=first.message_id, replayed_by="ops"),
        timeout=TIMEOUT,
    ).message
    assert replayed.message_id != first.message_id
    assert replayed.attempt_count == 0
    assert replayed.headers.entries["replayed_from"] == first.message_id
    cutoff = int(time.time() * 1000) + 60_000
    purged = stub.PurgeDeadLetters(
        pb.PurgeDeadLettersRequest(agent_id=box, before_ms=cutoff), timeout=TIMEOUT
    )
    assert purged.deleted_count == 2


def test_fanout_list_mailboxes_and_stats(stub: Any) -> None:
    prefix = unique("fan")
    targets = [f"{prefix}-alpha", f"{prefix}-bravo", f"{prefix}-charlie"]
    out = stub.Fanout(
        pb.FanoutSendRequest(targets=targets, from_agent="ops", payload=b"all"), timeout=TIMEOUT
    ).messages
    assert [m.mailbox_id for m in out] == targets
    assert len({m.message_id for m in out}) == 3
    page = stub.ListMailboxes(
        pb.ListMailboxesRequest(limit=2, after=f"{prefix}-"), timeout=TIMEOUT
    ).mailboxes
    assert [m.agent_id for m in page] == targets[:2]
    page = stub.ListMailboxes(
        pb.ListMailboxesRequest(limit=5, after=f"{prefix}-bravo"), timeout=TIMEOUT
    ).mailboxes
    assert page[0].agent_id == targets[2]
    send(stub, targets[0])
    stats = stub.GetMailboxStats(
        pb.GetMailboxStatsRequest(agent_id=targets[0]), timeout=TIMEOUT
    ).stats
    assert (stats.pending_count, stats.claimed_count, stats.committed_count) == (2, 0, 0)
    assert stats.oldest_pending_at_ms > 0


def test_stream_claim_is_pushed_by_a_send_not_polled(stub: Any) -> None:
    box = unique()  # unordered: in fifo the sender's second message waits for the first
    request = pb.EnsureMailboxRequest(agent_id=box, ordering_mode="unordered")
    stub.EnsureMailbox(request, timeout=TIMEOUT)
    # a poller with this interval would not see the send for a minute
    stream = stub.StreamClaim(
        pb.StreamClaimRequest(
            agent_id=box, claimer_id="streamer", poll_interval_ms=60_000, max_messages=2
        ),
        timeout=TIMEOUT,
    )
    sent = [send(stub, box, b"streamed-1"), send(stub, box, b"streamed-2")]
    items = list(stream)  # ends after max_messages
    assert [i.claim.message.message_id for i in items] == [m.message_id for m in sent]
    assert [i.claim.message.payload for i in items] == [b"streamed-1", b"streamed-2"]
    assert all(i.claim.message.claimed_by == "streamer" for i in items)


def test_stream_claim_on_an_unknown_mailbox_ends_with_not_found(stub: Any) -> None:
    stream = stub.StreamClaim(
        pb.StreamClaimRequest(agent_id=unique("ghost"), claimer_id="s"), timeout=TIMEOUT
    )
    assert code_of(lambda: list(stream)) == grpc.StatusCode.NOT_FOUND


def test_reflection_lists_the_postbox_service(channel: grpc.Channel) -> None:
    database = ProtoReflectionDescriptorDatabase(channel)
    assert "postbox.v1.PostboxService" in database.get_services()
    from google.protobuf.descriptor_pool import DescriptorPool

    service = DescriptorPool(database).FindServiceByName("postbox.v1.PostboxService")
    assert len(service.methods) == 16
    assert service.methods_by_name["StreamClaim"].server_streaming


def test_an_unknown_method_of_the_service_is_unimplemented(channel: grpc.Channel) -> None:
    # the service is served as a generic handler (not registered methods): a path it does
    # not hold still falls through to UNIMPLEMENTED, and the known rpcs beside it still work
    call = channel.unary_unary(f"/{SERVICE_NAME}/NoSuchRpc")
    assert code_of(lambda: call(b"", timeout=TIMEOUT)) == grpc.StatusCode.UNIMPLEMENTED
    stub = services.PostboxServiceStub(channel)
    box = unique()
    assert send(stub, box).mailbox_id == box


def test_a_send_without_headers_answers_an_empty_headers_message(stub: Any) -> None:
    # no headers skips the headers dict and the store's checks; the answer keeps its shape
    sent = send(stub, unique())
    assert sent.HasField("headers")
    assert dict(sent.headers.entries) == {}
    boxes = [unique(), unique()]
    request = pb.FanoutSendRequest(
        targets=boxes, from_agent="ops", payload=b"x", headers=pb.Headers(entries={"a": "b"})
    )
    fanned = stub.Fanout(request, timeout=TIMEOUT).messages
    assert [dict(m.headers.entries) for m in fanned] == [{"a": "b"}, {"a": "b"}]
