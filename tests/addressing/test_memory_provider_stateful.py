"""A state machine over MemoryProvider: every copy is always in exactly one place.

Places: queued, in flight (leased or being delivered), handled, dead-lettered, parked.
Copies are never lost and never duplicated, whatever the order of posts, fetches,
dispositions, lease expiries, recoveries and subscriber deliveries.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from dovecote.addressing import (
    Lease,
    MailMessage,
    ManualClock,
    MemoryProvider,
    PostOffice,
    RetriableError,
)

INBOX = "mem://svc@example.com/inbox"
DLQ = INBOX + "_dlq"


class PostOfficeMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = ManualClock()
        self.provider = MemoryProvider.create_isolated(clock=self.clock)
        self.provider.enable_dead_letter_queue()
        self.office = PostOffice([self.provider])
        self.sent: set[str] = set()
        self.handled: Counter[str] = Counter()
        self.leases: list[Lease] = []
        self.outcomes: list[str] = []

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def teardown(self) -> None:
        self.run(self.office.stop())
        self.loop.close()

    def origin(self, message: MailMessage) -> str:
        return message.id

    @rule()
    def post(self) -> None:
        address = INBOX
        letter = f"letter-{len(self.sent)}"
        self.run(self.office.post(to=address, body=letter, id=letter))
        self.sent.add(letter)

    @rule(address=st.sampled_from([INBOX, DLQ]))
    def fetch_plain(self, address: str) -> None:
        message = self.run(self.office.fetch(address))
        if message is not None:
            self.handled[self.origin(message)] += 1

    @rule(address=st.sampled_from([INBOX, DLQ]), timeout=st.sampled_from([0, 1, 5]))
    def fetch_leased(self, address: str, timeout: int) -> None:
        lease = self.run(self.office.fetch(address, manual_ack=True, ack_timeout=timeout))
        if lease is not None:
            self.leases.append(lease)

    @precondition(lambda self: self.leases)
    @rule(
        index=st.integers(min_value=0),
        disposition=st.sampled_from(["handled", "discard", "unhandled"]),
    )
    def settle(self, index: int, disposition: str) -> None:
        lease = self.leases[index % len(self.leases)]
        took_effect = self.run(lease.ack(disposition))
        if took_effect and disposition == "handled":
            self.handled[self.origin(lease.message)] += 1
        if lease.settled:
            self.leases.remove(lease)

    @rule(seconds=st.sampled_from([0.5, 1, 5]))
    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)

    @rule()
    def recover(self) -> None:
        self.run(self.office.recover())

    @rule(outcome=st.sampled_from(["ok", "retriable", "fatal"]))
    def deliver_next_post_to_a_subscriber(self, outcome: str) -> None:
        async def callback(message: MailMessage) -> None:
            if outcome == "ok":
                self.handled[self.origin(message)] += 1
            elif outcome == "retriable":
                raise RetriableError("again")
            else:
                raise ValueError("bad")

        async def go() -> None:
            subscription = await self.office.subscribe(INBOX, callback)
            letter = f"letter-{len(self.sent)}"
            await self.office.post(to=INBOX, body=letter, id=letter)
            self.sent.add(letter)
            await subscription.unsubscribe()
            await asyncio.wait_for(self.office.wait_settled(), 2.0)

        self.run(go())

    @invariant()
    def every_copy_is_in_exactly_one_place(self) -> None:
        for letter in self.sent:
            copies = self.run(self.office.locate(letter))
            states = [copy.state.value for copy in copies]
            assert len(copies) + self.handled[letter] == 1, (letter, states, self.handled[letter])
            for copy in copies:
                expected = DLQ if copy.message.headers.get("mbx-dead-letter-topic") else INBOX
                assert copy.topic == expected
        assert set(self.handled) <= self.sent

    @invariant()
    def status_counts_agree_with_the_copies(self) -> None:
        for address in (INBOX, DLQ):
            status = self.run(self.office.status(address))
            queued = self.run(self.office.fetch(address, peek=True, limit=10_000))
            assert status.unread_count == len(queued)
            assert status["mem.parked_count"] == len(self.provider.peek_parked(address))


TestPostOfficeStateMachine = PostOfficeMachine.TestCase
TestPostOfficeStateMachine.settings = settings(
    max_examples=60, stateful_step_count=30, deadline=None
)
