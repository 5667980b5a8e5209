"""PriorityMailbox: priority order, FIFO ties, bad priorities, stash tiers and overflow."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from structlog.testing import capture_logs

from dovecote._errors import MailboxFullError, OptionsError
from dovecote.mailboxes import (
    DropReportingMailbox,
    Envelope,
    ExemptEnvelope,
    Mailbox,
    MailboxDropReason,
    PriorityMailbox,
)


def by_first(message: Any) -> float:
    """Messages are (priority, label) tuples."""
    return message[0]  # type: ignore[no-any-return]


def labels(mailbox: Mailbox) -> list[object]:
    out: list[object] = []
    while (envelope := mailbox.dequeue()) is not None:
        message = envelope.message
        out.append(message[1] if isinstance(message, tuple) else message)
    return out


def loaded(*messages: tuple[Any, str], **kwargs: Any) -> PriorityMailbox:
    mailbox = PriorityMailbox(by_first, **kwargs)
    for message in messages:
        mailbox.enqueue(Envelope(message))
    return mailbox


def test_lower_priority_numbers_come_out_first() -> None:
    mailbox = loaded((10, "bulk"), (5, "normal"), (0, "urgent"))
    assert labels(mailbox) == ["urgent", "normal", "bulk"]


def test_messages_of_equal_priority_keep_their_send_order() -> None:
    mailbox = loaded((1, "a"), (0, "x"), (1, "b"), (1.0, "c"), (0, "y"))
    assert labels(mailbox) == ["x", "y", "a", "b", "c"]


def test_bools_and_other_real_numbers_are_valid_priorities() -> None:
    mailbox = loaded((True, "one"), (Fraction(1, 2), "half"), (-math.inf, "first"), (False, "zero"))
    assert labels(mailbox) == ["first", "zero", "half", "one"]


def test_system_messages_still_come_first() -> None:
    mailbox = loaded((0, "urgent"))
    mailbox.enqueue_system("stop")
    assert labels(mailbox) == ["stop", "urgent"]


def test_exempt_envelopes_skip_priority_for_and_go_to_the_tail() -> None:
    calls: list[object] = []

    def priority_for(message: Any) -> float:
        calls.append(message)
        return 0

    mailbox = PriorityMailbox(priority_for)
    mailbox.enqueue(ExemptEnvelope("poison"))
    mailbox.enqueue(Envelope("work"))
    assert calls == ["work"]
    assert labels(mailbox) == ["work", "poison"]


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (lambda m: 1 / 0, "raised"),
        (lambda m: math.nan, "nan"),
        (lambda m: "high", "'high'"),
        (lambda m: None, "None"),
        (lambda m: 1j, "1j"),
    ],
)
def test_a_bad_priority_sends_the_message_to_the_lowest_tier_and_is_logged_once(
    bad: Any, problem: str
) -> None:
    def priority_for(message: Any) -> Any:
        return bad(message) if message[1] == "bad" else message[0]

    mailbox = PriorityMailbox(priority_for)
    mailbox.owner = "/user/triage"
    with capture_logs() as logs:
        mailbox.enqueue(Envelope((0, "bad")))
        mailbox.enqueue(Envelope((1e300, "late")))
        mailbox.enqueue(Envelope((0, "bad")))
        mailbox.enqueue(Envelope((0, "ok")))
    assert labels(mailbox) == ["ok", "late", "bad", "bad"]
    assert len(logs) == 1
    assert logs[0]["log_level"] == "error"
    assert logs[0]["owner"] == "/user/triage"
    assert problem.lower() in str(logs[0]["event"]).lower()


def test_the_bad_priority_log_is_once_per_mailbox_instance() -> None:
    with capture_logs() as logs:
        for _ in range(2):
            mailbox = PriorityMailbox(lambda m: "x")  # type: ignore[arg-type,return-value]
            mailbox.enqueue(Envelope(1))
            mailbox.enqueue(Envelope(2))
    assert len(logs) == 2


def test_a_failing_priority_for_keeps_the_exception_in_the_log() -> None:
    error = KeyError("urgency")

    def priority_for(message: Any) -> float:
        raise error

    mailbox = PriorityMailbox(priority_for)
    with capture_logs() as logs:
        mailbox.enqueue(Envelope("m"))
    assert logs[0]["exc_info"] is error
    assert logs[0]["message_type"] == "str"


def test_prepend_user_puts_each_message_at_the_front_of_its_own_tier() -> None:
    mailbox = loaded((0, "u1"), (5, "n1"), (10, "b1"))
    stashed = [Envelope((10, "sb1")), Envelope((5, "sn1")), Envelope((10, "sb2"))]
    mailbox.prepend_user(stashed)
    mailbox.enqueue(Envelope((10, "b2")))
    assert labels(mailbox) == ["u1", "sn1", "n1", "sb1", "sb2", "b1", "b2"]


def test_a_later_prepend_goes_in_front_of_an_earlier_one_in_the_same_tier() -> None:
    mailbox = loaded((1, "queued"))
    mailbox.prepend_user([Envelope((1, "second-stash"))])
    mailbox.prepend_user([Envelope((1, "third-a")), Envelope((1, "third-b"))])
    assert labels(mailbox) == ["third-a", "third-b", "second-stash", "queued"]


def test_prepended_exempt_envelopes_go_to_the_front_of_the_lowest_tier() -> None:
    mailbox = PriorityMailbox(lambda m: math.inf if m == "worst" else 0)
    mailbox.enqueue(Envelope("worst"))
    mailbox.enqueue(Envelope("best"))
    mailbox.prepend_user([ExemptEnvelope("poison")])
    assert labels(mailbox) == ["best", "poison", "worst"]


def test_drain_user_returns_messages_in_dequeue_order() -> None:
    mailbox = loaded((2, "c"), (1, "a"), (1, "b"))
    mailbox.prepend_user([Envelope((2, "s"))])
    assert [e.message[1] for e in mailbox.drain_user()] == ["a", "b", "s", "c"]
    assert (mailbox.user_count, len(mailbox), mailbox.has_messages) == (0, 0, False)
    assert mailbox.dequeue_user() is None


def test_counts_follow_both_queues() -> None:
    mailbox = loaded((1, "a"), (2, "b"))
    mailbox.enqueue_system("sig")
    assert (mailbox.user_count, mailbox.system_count, len(mailbox)) == (2, 1, 3)
    assert mailbox.has_messages
    assert isinstance(mailbox, Mailbox)
    assert isinstance(mailbox, DropReportingMailbox)


def test_constructor_arguments_are_validated() -> None:
    with pytest.raises(OptionsError):
        PriorityMailbox("urgency")  # type: ignore[arg-type]
    with pytest.raises(OptionsError):
        PriorityMailbox(by_first, capacity=0)
    with pytest.raises(OptionsError):
        PriorityMailbox(by_first, capacity=3, overflow="drop-oldest")


def test_without_a_capacity_the_mailbox_is_unbounded() -> None:
    mailbox = PriorityMailbox(by_first)
    assert (mailbox.capacity, mailbox.overflow, mailbox.dropped_count) == (None, "reject", 0)
    for index in range(1000):
        mailbox.enqueue(Envelope((index % 3, index)))
    assert mailbox.user_count == 1000


def test_reject_raises_without_calling_priority_for_or_changing_anything() -> None:
    calls: list[object] = []

    def priority_for(message: Any) -> float:
        calls.append(message)
        return 0

    mailbox = PriorityMailbox(priority_for, capacity=1)
    mailbox.enqueue(Envelope("a"))
    with pytest.raises(MailboxFullError):
        mailbox.enqueue(Envelope("b"))
    assert calls == ["a"]
    assert (mailbox.user_count, mailbox.dropped_count, mailbox.capacity) == (1, 0, 1)


def test_drop_new_discards_the_incoming_message_whatever_its_priority() -> None:
    mailbox = loaded((5, "a"), (5, "b"), capacity=2, overflow="drop-new")
    reasons: list[MailboxDropReason] = []
    mailbox.observe_drops(reasons.append)
    mailbox.enqueue(Envelope((0, "urgent")))
    assert reasons == [MailboxDropReason.DROP_NEW]
    assert labels(mailbox) == ["a", "b"]


def test_drop_head_discards_the_oldest_message_of_the_lowest_priority_tier() -> None:
    mailbox = loaded((0, "u1"), (10, "b1"), (5, "n1"), (10, "b2"), capacity=4, overflow="drop-head")
    reasons: list[MailboxDropReason] = []
    mailbox.observe_drops(reasons.append)
    mailbox.enqueue(Envelope((0, "u2")))
    assert reasons == [MailboxDropReason.DROP_HEAD]
    assert mailbox.dropped_count == 1
    assert labels(mailbox) == ["u1", "u2", "n1", "b2"]


def test_drop_head_treats_a_stashed_message_as_the_head_of_its_tier() -> None:
    mailbox = loaded((3, "a"), capacity=2, overflow="drop-head")
    mailbox.prepend_user([Envelope((3, "stashed"))])
    mailbox.enqueue(Envelope((3, "new")))
    assert labels(mailbox) == ["a", "new"]


def test_drop_head_never_discards_a_more_urgent_message_for_a_less_urgent_one() -> None:
    mailbox = loaded((0, "u1"), (0, "u2"), capacity=2, overflow="drop-head")
    mailbox.enqueue(Envelope((10, "bulk")))
    assert mailbox.dropped_count == 1
    assert labels(mailbox) == ["u1", "u2"]


def test_drop_head_at_an_equal_priority_keeps_the_newest() -> None:
    mailbox = loaded((4, "old"), (4, "mid"), capacity=2, overflow="drop-head")
    mailbox.enqueue(Envelope((4, "new")))
    assert labels(mailbox) == ["mid", "new"]


def test_drop_head_never_discards_exempt_envelopes() -> None:
    mailbox = PriorityMailbox(by_first, capacity=2, overflow="drop-head")
    mailbox.enqueue(ExemptEnvelope("poison"))
    mailbox.enqueue(Envelope((1, "a")))
    mailbox.enqueue(Envelope((9, "b")))
    assert labels(mailbox) == ["a", "poison"]
    mailbox.enqueue(ExemptEnvelope("p1"))
    mailbox.enqueue(ExemptEnvelope("p2"))
    mailbox.enqueue(Envelope((0, "c")))
    assert mailbox.dropped_count == 2
    assert labels(mailbox) == ["p1", "p2"]


@pytest.mark.parametrize("overflow", ["reject", "drop-new", "drop-head"])
def test_exempt_envelopes_are_admitted_past_capacity(overflow: str) -> None:
    mailbox = loaded((1, "a"), capacity=1, overflow=overflow)
    mailbox.enqueue(ExemptEnvelope("poison"))
    assert (mailbox.user_count, mailbox.dropped_count) == (2, 0)


def test_prepend_user_is_never_limited_by_capacity() -> None:
    mailbox = loaded((1, "a"), capacity=1, overflow="reject")
    mailbox.prepend_user([Envelope((1, "s1")), Envelope((0, "s0"))])
    assert labels(mailbox) == ["s0", "s1", "a"]
    assert mailbox.dropped_count == 0


def test_growth_warnings_apply_to_the_priority_queue() -> None:
    class SmallWarn(PriorityMailbox):
        __slots__ = ()
        warn_threshold = 2

    mailbox = SmallWarn(by_first)
    sizes: list[int] = []
    mailbox.observe_growth(sizes.append)
    for index in range(4):
        mailbox.enqueue(Envelope((index, "m")))
    mailbox.drain_user()
    mailbox.prepend_user([Envelope((0, "a")), Envelope((0, "b"))])
    assert sizes == [2, 4, 2]
