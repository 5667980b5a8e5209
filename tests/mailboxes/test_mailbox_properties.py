"""Stateful property tests: every mailbox kind against a plain-list model, plus the ledger.

The model keeps the user queue as a list in dequeue order and the system queue as another
list. Each run checks, after every step, that the counts match the model, that every message
is accounted for (enqueued = delivered + dropped + queued + stashed + rejected) and that drop
and growth observers saw exactly what the model predicts. Dequeues compare by identity, so
any reordering, loss or duplication shows up.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from dovecote._errors import MailboxFullError
from dovecote.mailboxes import (
    BareEnvelope,
    BoundedMailbox,
    Envelope,
    ExemptEnvelope,
    Mailbox,
    MailboxDropReason,
    PriorityMailbox,
    SystemEnvelope,
)
from dovecote.mailboxes._envelope import EMPTY, is_exempt, message_of

WARN_AT = 3
BAD_TAGS = ("raise", "nan", "text")
TAGS = st.sampled_from([0, 1, 2, 2.5, True, *BAD_TAGS])
CAPACITIES = st.integers(min_value=1, max_value=5)
POLICIES = st.sampled_from(["reject", "drop-new", "drop-head"])


class FifoUnderTest(Mailbox):
    __slots__ = ()
    warn_threshold = WARN_AT


class BoundedUnderTest(BoundedMailbox):
    __slots__ = ()
    warn_threshold = WARN_AT


class PriorityUnderTest(PriorityMailbox):
    __slots__ = ()
    warn_threshold = WARN_AT


def priority_for(message: tuple[int, Any]) -> Any:
    """The real priority function: some tags misbehave on purpose."""
    tag = message[1]
    if tag == "raise":
        raise ValueError("no priority")
    if tag == "nan":
        return math.nan
    if tag == "text":
        return "text"
    return tag


def model_priority(item: Any) -> float:
    """What the mailbox should make of priority_for's answer (items may be bare messages)."""
    tag = message_of(item)[1]
    if is_exempt(item) or tag in BAD_TAGS:
        return math.inf
    return float(tag)


def same(got: Any, expected: Any) -> bool:
    """A dequeued envelope is the queued one, or wraps the queued bare message."""
    if isinstance(expected, Envelope):
        return got is expected
    return type(got) is BareEnvelope and got.message is expected and got.sender is None


class MailboxModelMachine(RuleBasedStateMachine):
    """Shared rules; subclasses build the mailbox and say where messages go in the model."""

    mailbox: Mailbox
    capacity: int | None = None
    overflow = "reject"

    def __init__(self) -> None:
        super().__init__()
        self.user: list[Envelope] = []
        self.system: list[int] = []  # system messages are unique ints
        self.stash: list[Envelope] = []
        self.next_id = 0
        self.enqueued = self.delivered = self.dropped = self.rejected = 0
        self.system_enqueued = self.system_delivered = 0
        self.next_warn = WARN_AT
        self.expected_growth: list[int] = []
        self.growth: list[int] = []
        self.drops: list[MailboxDropReason] = []

    def attach(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox
        mailbox.observe_growth(self.growth.append)
        observe_drops = getattr(mailbox, "observe_drops", None)
        if observe_drops is not None:
            observe_drops(self.drops.append)

    # -- model placement, overridden for priorities -----------------------------------------

    def model_insert(self, envelope: Envelope) -> None:
        self.user.append(envelope)

    def model_prepend(self, batch: list[Envelope]) -> None:
        self.user[:0] = batch

    def model_victim(self, incoming: Envelope) -> int | None:
        """Index of the queued message drop-head discards; None: the incoming one goes."""
        return next((i for i, queued in enumerate(self.user) if not is_exempt(queued)), None)

    # -- model bookkeeping ------------------------------------------------------------------

    def model_grew(self) -> None:
        size = len(self.user)
        if size >= self.next_warn:
            self.expected_growth.append(size)
            while self.next_warn <= size:
                self.next_warn *= 2

    def model_found_user_empty(self) -> None:
        self.next_warn = WARN_AT

    def envelope(self, tag: Any, exempt: bool) -> Envelope:
        self.next_id += 1
        kind = ExemptEnvelope if exempt else Envelope
        return kind((self.next_id, tag))

    # -- rules ------------------------------------------------------------------------------

    @rule(tag=TAGS, exempt=st.booleans(), bare=st.booleans())
    def enqueue(self, tag: Any, exempt: bool, bare: bool = False) -> None:
        # bare: the runtime's fast path, Mailbox.post(message) with no envelope at all
        envelope: Any = self.envelope(tag, exempt)
        if bare and not exempt:
            envelope = envelope.message
        put = self.mailbox.post if not isinstance(envelope, Envelope) else self.mailbox.enqueue
        self.enqueued += 1
        full = self.capacity is not None and len(self.user) >= self.capacity
        if not full or is_exempt(envelope):
            put(envelope)
            self.model_insert(envelope)
            self.model_grew()
        elif self.overflow == "reject":
            with pytest.raises(MailboxFullError):
                put(envelope)
            self.rejected += 1
        else:
            put(envelope)
            self.dropped += 1
            victim = self.model_victim(envelope) if self.overflow == "drop-head" else None
            if victim is not None:
                del self.user[victim]
                self.model_insert(envelope)

    @rule(burst=st.lists(st.tuples(TAGS, st.booleans()), min_size=2, max_size=8))
    def enqueue_burst(self, burst: list[tuple[Any, bool]]) -> None:
        # removals would otherwise outpace arrivals and the queue would rarely fill up
        for tag, exempt in burst:
            self.enqueue(tag, exempt)

    @rule()
    def enqueue_system(self) -> None:
        self.next_id += 1
        self.mailbox.enqueue_system(self.next_id)
        self.system_enqueued += 1
        self.system.append(self.next_id)

    @rule()
    def dequeue(self) -> None:
        got = self.mailbox.dequeue()
        if self.system:
            assert isinstance(got, SystemEnvelope)
            assert got.message == self.system.pop(0)
            self.system_delivered += 1
        elif self.user:
            assert same(got, self.user.pop(0))
            self.delivered += 1
        else:
            assert got is None
            self.model_found_user_empty()

    @rule()
    def take(self) -> None:
        got = self.mailbox.take()
        if self.user:
            assert got is self.user.pop(0)
            self.delivered += 1
        else:
            assert got is EMPTY
            self.model_found_user_empty()

    @rule()
    def dequeue_user(self) -> None:
        got = self.mailbox.dequeue_user()
        if self.user:
            assert same(got, self.user.pop(0))
            self.delivered += 1
        else:
            assert got is None
            self.model_found_user_empty()

    @rule()
    def dequeue_system(self) -> None:
        got = self.mailbox.dequeue_system()
        if self.system:
            assert isinstance(got, SystemEnvelope)
            assert got.message == self.system.pop(0)
            self.system_delivered += 1
        else:
            assert got is None

    @rule()
    def stash_next_user_message(self) -> None:
        got = self.mailbox.dequeue_user()
        if self.user:
            assert same(got, self.user.pop(0))
            assert got is not None
            self.stash.append(got)
        else:
            assert got is None
            self.model_found_user_empty()

    @rule()
    def unstash_all(self) -> None:
        batch, self.stash = self.stash, []
        self.mailbox.prepend_user(iter(batch))
        if batch:
            self.model_prepend(batch)
            self.model_grew()

    @rule()
    def drain_user(self) -> None:
        drained = self.mailbox.drain_user()
        assert len(drained) == len(self.user)
        assert all(same(got, queued) for got, queued in zip(drained, self.user, strict=True))
        self.delivered += len(drained)
        self.user = []
        self.model_found_user_empty()

    @rule()
    def drain_system(self) -> None:
        drained = self.mailbox.drain_system()
        assert [e.message for e in drained] == self.system
        assert all(isinstance(e, SystemEnvelope) for e in drained)
        self.system_delivered += len(drained)
        self.system = []

    # -- invariants -------------------------------------------------------------------------

    @invariant()
    def counts_match_the_model(self) -> None:
        mailbox = self.mailbox
        assert mailbox.user_count == len(self.user)
        assert mailbox.system_count == len(self.system)
        assert len(mailbox) == len(self.user) + len(self.system)
        assert mailbox.has_messages == bool(self.user or self.system)

    @invariant()
    def every_message_is_accounted_for(self) -> None:
        queued = self.mailbox.user_count
        assert self.enqueued == (
            self.delivered + self.dropped + queued + len(self.stash) + self.rejected
        )
        assert self.system_enqueued == self.system_delivered + self.mailbox.system_count

    @invariant()
    def observers_saw_each_drop_and_growth_once(self) -> None:
        assert getattr(self.mailbox, "dropped_count", 0) == self.dropped
        assert len(self.drops) == self.dropped
        assert all(reason == self.overflow for reason in self.drops)
        assert all(type(reason) is MailboxDropReason for reason in self.drops)
        assert self.growth == self.expected_growth


class FifoMachine(MailboxModelMachine):
    @initialize()
    def build(self) -> None:
        self.attach(FifoUnderTest())


class BoundedMachine(MailboxModelMachine):
    @initialize(capacity=CAPACITIES, overflow=POLICIES)
    def build(self, capacity: int, overflow: str) -> None:
        self.capacity, self.overflow = capacity, overflow
        self.attach(BoundedUnderTest(capacity, overflow))


class PriorityMachine(MailboxModelMachine):
    @initialize(capacity=st.none() | CAPACITIES, overflow=POLICIES)
    def build(self, capacity: int | None, overflow: str) -> None:
        self.capacity, self.overflow = capacity, overflow
        self.attach(PriorityUnderTest(priority_for, capacity, overflow))

    def model_insert(self, envelope: Envelope) -> None:
        # behind every message of the same or a more urgent priority
        priority = model_priority(envelope)
        index = len(self.user)
        while index > 0 and model_priority(self.user[index - 1]) > priority:
            index -= 1
        self.user.insert(index, envelope)

    def model_prepend(self, batch: list[Envelope]) -> None:
        # each one in front of its own tier; the last goes in first so the order holds
        for envelope in reversed(batch):
            priority = model_priority(envelope)
            index = 0
            while index < len(self.user) and model_priority(self.user[index]) < priority:
                index += 1
            self.user.insert(index, envelope)

    def model_victim(self, incoming: Envelope) -> int | None:
        candidates = [e for e in self.user if not is_exempt(e)]
        if not candidates:
            return None
        worst = max(model_priority(e) for e in candidates)
        if model_priority(incoming) > worst:
            return None
        return next(
            i for i, e in enumerate(self.user) if not is_exempt(e) and model_priority(e) == worst
        )


MACHINE_SETTINGS = settings(max_examples=150, stateful_step_count=60, deadline=None)

TestFifoMailboxAgainstModel = FifoMachine.TestCase
TestFifoMailboxAgainstModel.settings = MACHINE_SETTINGS
TestBoundedMailboxAgainstModel = BoundedMachine.TestCase
TestBoundedMailboxAgainstModel.settings = MACHINE_SETTINGS
TestPriorityMailboxAgainstModel = PriorityMachine.TestCase
TestPriorityMailboxAgainstModel.settings = MACHINE_SETTINGS
