"""BoundedMailbox: capacity validation and the reject / drop-new / drop-head policies."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from dovecote._errors import MailboxFullError, OptionsError
from dovecote.mailboxes import (
    BoundedMailbox,
    DropReportingMailbox,
    Envelope,
    ExemptEnvelope,
    Mailbox,
    MailboxDropReason,
)


def filled(capacity: int, overflow: str, *messages: object) -> BoundedMailbox:
    mailbox = BoundedMailbox(capacity, overflow)
    for message in messages:
        mailbox.enqueue(Envelope(message))
    return mailbox


def user_messages(mailbox: Mailbox) -> list[object]:
    return [envelope.message for envelope in mailbox.drain_user()]


@pytest.mark.parametrize("capacity", [0, -1, 1.5, "10", None, True])
def test_a_capacity_that_is_not_a_positive_int_is_an_options_error(capacity: object) -> None:
    with pytest.raises(OptionsError, match="capacity"):
        BoundedMailbox(capacity)  # type: ignore[arg-type]


@pytest.mark.parametrize("overflow", ["drop_head", "", "block", None, 3])
def test_an_unknown_overflow_policy_is_an_options_error(overflow: object) -> None:
    with pytest.raises(OptionsError, match="overflow"):
        BoundedMailbox(10, overflow)  # type: ignore[arg-type]


def test_the_constructor_defaults_to_reject_and_exposes_its_settings() -> None:
    mailbox = BoundedMailbox(3)
    assert (mailbox.capacity, mailbox.overflow, mailbox.dropped_count) == (3, "reject", 0)
    assert isinstance(mailbox, Mailbox)


def test_a_drop_reason_is_accepted_as_the_policy_name() -> None:
    mailbox = BoundedMailbox(1, MailboxDropReason.DROP_NEW)
    assert mailbox.overflow == "drop-new"
    assert type(mailbox.overflow) is str


def test_drop_reasons_are_the_policy_names() -> None:
    assert str(MailboxDropReason.DROP_HEAD) == "drop-head"
    assert str(MailboxDropReason.DROP_NEW) == "drop-new"
    assert MailboxDropReason("drop-head") is MailboxDropReason.DROP_HEAD
    assert [reason.value for reason in MailboxDropReason] == ["drop-head", "drop-new"]


def test_reject_raises_and_leaves_the_queue_unchanged() -> None:
    mailbox = filled(2, "reject", "a", "b")
    mailbox.owner = "/user/busy"
    reasons: list[MailboxDropReason] = []
    mailbox.observe_drops(reasons.append)
    with pytest.raises(MailboxFullError, match="/user/busy"):
        mailbox.enqueue(Envelope("c"))
    assert mailbox.dropped_count == 0
    assert reasons == []
    assert user_messages(mailbox) == ["a", "b"]


def test_drop_new_discards_the_incoming_message() -> None:
    mailbox = filled(2, "drop-new", "a", "b")
    reasons: list[MailboxDropReason] = []
    mailbox.observe_drops(reasons.append)
    mailbox.enqueue(Envelope("c"))
    mailbox.enqueue(Envelope("d"))
    assert mailbox.dropped_count == 2
    assert reasons == [MailboxDropReason.DROP_NEW] * 2
    assert user_messages(mailbox) == ["a", "b"]


def test_drop_head_discards_the_oldest_message_and_admits_the_new_one() -> None:
    mailbox = filled(2, "drop-head", "a", "b")
    reasons: list[MailboxDropReason] = []
    mailbox.observe_drops(reasons.append)
    mailbox.enqueue(Envelope("c"))
    assert reasons == [MailboxDropReason.DROP_HEAD]
    mailbox.enqueue(Envelope("d"))
    assert mailbox.dropped_count == 2
    assert user_messages(mailbox) == ["c", "d"]


def test_room_freed_by_a_dequeue_is_used_without_dropping() -> None:
    mailbox = filled(2, "reject", "a", "b")
    mailbox.dequeue()
    mailbox.enqueue(Envelope("c"))
    assert user_messages(mailbox) == ["b", "c"]


@pytest.mark.parametrize("overflow", ["reject", "drop-new", "drop-head"])
def test_exempt_envelopes_are_admitted_past_capacity_under_every_policy(overflow: str) -> None:
    mailbox = filled(1, overflow, "a")
    mailbox.enqueue(ExemptEnvelope("poison"))
    assert mailbox.user_count == 2
    assert mailbox.dropped_count == 0
    assert user_messages(mailbox) == ["a", "poison"]


def test_drop_head_skips_queued_exempt_envelopes() -> None:
    mailbox = BoundedMailbox(2, "drop-head")
    mailbox.enqueue(ExemptEnvelope("terminated"))
    mailbox.enqueue(Envelope("a"))
    mailbox.enqueue(Envelope("b"))
    assert user_messages(mailbox) == ["terminated", "b"]
    assert mailbox.dropped_count == 1


def test_drop_head_discards_the_incoming_message_when_everything_queued_is_exempt() -> None:
    mailbox = BoundedMailbox(2, "drop-head")
    reasons: list[MailboxDropReason] = []
    mailbox.observe_drops(reasons.append)
    mailbox.enqueue(ExemptEnvelope("x"))
    mailbox.enqueue(ExemptEnvelope("y"))
    mailbox.enqueue(Envelope("a"))
    assert reasons == [MailboxDropReason.DROP_HEAD]
    assert user_messages(mailbox) == ["x", "y"]


def test_each_drop_observer_is_called_once_per_discarded_message() -> None:
    mailbox = filled(1, "drop-head", "a")
    first: list[MailboxDropReason] = []
    second: list[MailboxDropReason] = []
    mailbox.observe_drops(first.append)
    mailbox.observe_drops(second.append)
    for message in "bcd":
        mailbox.enqueue(Envelope(message))
    assert first == second == [MailboxDropReason.DROP_HEAD] * 3
    assert mailbox.dropped_count == 3


def test_drop_observers_see_the_queue_after_the_drop_is_complete() -> None:
    mailbox = filled(1, "drop-head", "a")
    seen: list[list[object]] = []
    mailbox.observe_drops(lambda _: seen.append([e.message for e in mailbox._user]))
    mailbox.enqueue(Envelope("b"))
    assert seen == [["b"]]


def test_a_failing_drop_observer_is_logged_and_the_drop_still_counts() -> None:
    mailbox = filled(1, "drop-new", "a")
    reasons: list[MailboxDropReason] = []

    def broken(reason: MailboxDropReason) -> None:
        raise RuntimeError("metrics down")

    mailbox.observe_drops(broken)
    mailbox.observe_drops(reasons.append)
    with capture_logs() as logs:
        mailbox.enqueue(Envelope("b"))
    assert reasons == [MailboxDropReason.DROP_NEW]
    assert mailbox.dropped_count == 1
    assert [entry["log_level"] for entry in logs] == ["error"]


def test_system_messages_are_never_bounded() -> None:
    mailbox = filled(1, "reject", "a")
    for index in range(5):
        mailbox.enqueue_system(index)
    assert (mailbox.system_count, mailbox.user_count, mailbox.dropped_count) == (5, 1, 0)
    assert mailbox.dequeue().system  # type: ignore[union-attr]


def test_prepend_user_is_never_limited_by_capacity() -> None:
    mailbox = filled(2, "reject", "c", "d")
    mailbox.prepend_user([Envelope("a"), Envelope("b")])
    assert mailbox.user_count == 4
    assert mailbox.dropped_count == 0
    with pytest.raises(MailboxFullError):
        mailbox.enqueue(Envelope("e"))
    assert user_messages(mailbox) == ["a", "b", "c", "d"]


def test_bounded_mailboxes_report_drops_through_the_protocol() -> None:
    assert isinstance(BoundedMailbox(1), DropReportingMailbox)
    assert not isinstance(Mailbox(), DropReportingMailbox)


def test_a_custom_mailbox_with_observe_drops_satisfies_the_protocol() -> None:
    class SheddingMailbox(Mailbox):
        __slots__ = ("observers",)

        def __init__(self) -> None:
            super().__init__()
            self.observers: list[object] = []

        def observe_drops(self, observer: object) -> None:
            self.observers.append(observer)

    assert isinstance(SheddingMailbox(), DropReportingMailbox)
