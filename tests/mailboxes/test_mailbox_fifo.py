"""The unbounded default mailbox: FIFO order, system-first, stash support, growth warnings."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from structlog.testing import capture_logs

from dovecote.mailboxes import Envelope, ExemptEnvelope, Mailbox, SystemEnvelope


class SmallWarnMailbox(Mailbox):
    __slots__ = ()
    warn_threshold = 4


def envelopes(*messages: object) -> list[Envelope]:
    return [Envelope(message) for message in messages]


def messages_of(items: list[Envelope]) -> list[object]:
    return [item.message for item in items]


def growth_warnings(logs: Iterable[Mapping[str, Any]]) -> list[object]:
    return [entry["size"] for entry in logs if entry["log_level"] == "warning"]


def test_envelope_keeps_message_sender_and_reply() -> None:
    reply = object()
    envelope = Envelope("hi", sender="a", reply=reply)
    assert (envelope.message, envelope.sender, envelope.reply) == ("hi", "a", reply)
    assert Envelope("x").sender is None
    assert Envelope("x").reply is None


def test_envelope_flags_are_class_attributes_and_cost_no_memory() -> None:
    assert (Envelope.exempt, Envelope.system) == (False, False)
    assert (ExemptEnvelope.exempt, ExemptEnvelope.system) == (True, False)
    assert (SystemEnvelope.exempt, SystemEnvelope.system) == (True, True)
    assert ExemptEnvelope.__slots__ == ()
    assert SystemEnvelope.__slots__ == ()
    assert sys.getsizeof(ExemptEnvelope(1)) == sys.getsizeof(Envelope(1))
    with pytest.raises(AttributeError):
        Envelope(1).extra = 2  # type: ignore[attr-defined]


def test_user_messages_come_out_in_the_order_they_went_in() -> None:
    mailbox = Mailbox()
    for envelope in envelopes(1, 2, 3):
        mailbox.enqueue(envelope)
    assert [mailbox.dequeue_user().message for _ in range(3)] == [1, 2, 3]  # type: ignore[union-attr]
    assert mailbox.dequeue_user() is None
    assert mailbox.dequeue() is None


def test_system_messages_are_dequeued_before_any_user_message() -> None:
    mailbox = Mailbox()
    mailbox.enqueue(Envelope("user-1"))
    mailbox.enqueue(Envelope("user-2"))
    mailbox.enqueue_system("stop")
    mailbox.enqueue_system("watch", sender="parent")
    first = mailbox.dequeue()
    assert isinstance(first, SystemEnvelope)
    assert first.message == "stop"
    second = mailbox.dequeue()
    assert second is not None
    assert (second.message, second.sender) == ("watch", "parent")
    assert messages_of([mailbox.dequeue(), mailbox.dequeue()]) == ["user-1", "user-2"]  # type: ignore[list-item]


def test_enqueue_always_uses_the_user_queue() -> None:
    mailbox = Mailbox()
    mailbox.enqueue(SystemEnvelope("looks like a signal"))
    assert (mailbox.user_count, mailbox.system_count) == (1, 0)


def test_the_system_queue_exists_only_while_it_holds_messages() -> None:
    mailbox = Mailbox()
    empty_size = sys.getsizeof(mailbox)
    assert mailbox.system_count == 0
    assert mailbox.dequeue_system() is None
    mailbox.enqueue_system("a")
    mailbox.enqueue_system("b")
    assert mailbox.system_count == 2
    assert mailbox.dequeue_system().message == "a"  # type: ignore[union-attr]
    assert mailbox.dequeue_system().message == "b"  # type: ignore[union-attr]
    assert mailbox._system is None
    assert sys.getsizeof(mailbox) == empty_size


def test_counts_length_and_has_messages_follow_both_queues() -> None:
    mailbox = Mailbox()
    assert (len(mailbox), mailbox.user_count, mailbox.system_count) == (0, 0, 0)
    assert not mailbox.has_messages
    mailbox.enqueue_system("s")
    assert mailbox.has_messages
    mailbox.enqueue(Envelope("u"))
    mailbox.enqueue(Envelope("v"))
    assert (len(mailbox), mailbox.user_count, mailbox.system_count) == (3, 2, 1)
    mailbox.dequeue()
    mailbox.dequeue()
    mailbox.dequeue()
    assert not mailbox.has_messages


def test_prepend_user_puts_envelopes_in_front_in_the_given_order() -> None:
    mailbox = Mailbox()
    for envelope in envelopes("c", "d"):
        mailbox.enqueue(envelope)
    mailbox.prepend_user(iter(envelopes("a", "b")))
    mailbox.prepend_user([])
    assert messages_of(mailbox.drain_user()) == ["a", "b", "c", "d"]


def test_drains_empty_each_queue_and_return_messages_in_dequeue_order() -> None:
    mailbox = Mailbox()
    for envelope in envelopes(1, 2):
        mailbox.enqueue(envelope)
    mailbox.enqueue_system("x")
    mailbox.enqueue_system("y")
    assert messages_of(mailbox.drain_system()) == ["x", "y"]
    assert mailbox.drain_system() == []
    assert messages_of(mailbox.drain_user()) == [1, 2]
    assert mailbox.drain_user() == []
    assert len(mailbox) == 0


def test_owner_defaults_to_none_and_shows_in_the_repr() -> None:
    mailbox = Mailbox()
    assert mailbox.owner is None
    mailbox.owner = "/user/a"
    assert "/user/a" in repr(mailbox)


def test_default_growth_warning_threshold_is_ten_thousand() -> None:
    assert Mailbox.warn_threshold == 10_000
    mailbox = Mailbox()
    with capture_logs() as logs:
        for _ in range(9_999):
            mailbox.enqueue(Envelope(None))
        assert logs == []
        mailbox.enqueue(Envelope(None))
    assert growth_warnings(logs) == [10_000]


def test_growth_is_logged_at_the_threshold_and_at_each_doubling() -> None:
    mailbox = SmallWarnMailbox()
    mailbox.owner = "/user/slow"
    sizes: list[int] = []
    mailbox.observe_growth(sizes.append)
    with capture_logs() as logs:
        for _ in range(33):
            mailbox.enqueue(Envelope(None))
    assert growth_warnings(logs) == [4, 8, 16, 32]
    assert sizes == [4, 8, 16, 32]
    assert all(entry["owner"] == "/user/slow" for entry in logs)


def test_growth_warnings_start_over_once_the_queue_was_found_empty() -> None:
    mailbox = SmallWarnMailbox()
    sizes: list[int] = []
    mailbox.observe_growth(sizes.append)
    for _ in range(5):
        mailbox.enqueue(Envelope(None))
    while mailbox.dequeue() is not None:
        pass
    for _ in range(4):
        mailbox.enqueue(Envelope(None))
    mailbox.drain_user()
    for _ in range(4):
        mailbox.enqueue(Envelope(None))
    assert sizes == [4, 4, 4]


def test_growth_warnings_do_not_repeat_while_the_backlog_never_clears() -> None:
    mailbox = SmallWarnMailbox()
    sizes: list[int] = []
    mailbox.observe_growth(sizes.append)
    for _ in range(5):
        mailbox.enqueue(Envelope(None))
    mailbox.dequeue()
    mailbox.dequeue()
    mailbox.enqueue(Envelope(None))
    mailbox.enqueue(Envelope(None))
    assert sizes == [4]


def test_a_large_prepend_that_jumps_several_doublings_warns_once() -> None:
    mailbox = SmallWarnMailbox()
    sizes: list[int] = []
    mailbox.observe_growth(sizes.append)
    mailbox.prepend_user(envelopes(*range(20)))
    mailbox.enqueue(Envelope(None))
    assert sizes == [20]
    for _ in range(11):
        mailbox.enqueue(Envelope(None))
    assert sizes == [20, 32]


def test_system_messages_never_trigger_growth_warnings() -> None:
    mailbox = SmallWarnMailbox()
    sizes: list[int] = []
    mailbox.observe_growth(sizes.append)
    for _ in range(10):
        mailbox.enqueue_system("sig")
    assert sizes == []


def test_a_failing_growth_observer_is_logged_and_does_not_stop_the_others() -> None:
    mailbox = SmallWarnMailbox()
    sizes: list[int] = []

    def broken(size: int) -> None:
        raise RuntimeError("observer bug")

    mailbox.observe_growth(broken)
    mailbox.observe_growth(sizes.append)
    with capture_logs() as logs:
        for _ in range(4):
            mailbox.enqueue(Envelope(None))
    assert sizes == [4]
    assert mailbox.user_count == 4
    assert [entry["log_level"] for entry in logs] == ["warning", "error"]
