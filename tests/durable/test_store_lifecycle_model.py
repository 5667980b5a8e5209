"""A hypothesis state machine drives a store against a plain model of the lifecycle.

The model predicts exactly which message each claim returns (unordered mode: oldest
first, expired leases recovered first, a message past ``max_attempts`` dead-lettered
and skipped) and how each settlement ends, including stale claims. After every step:
each message is in exactly one state, the store's counts match the model's, attempts
count deliveries to a handler (each claim adds one; ``unclaim`` undoes a claim that
delivered nothing, and only that), nothing is lost and nothing is committed twice.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from dovecote import ManualClock
from dovecote.durable import (
    AlreadyCommittedError,
    Claim,
    InvalidStateError,
    MessageNotFoundError,
    StoreError,
)

from .backends import BACKENDS

LEASE_MS = 1_000
MAX_ATTEMPTS = 3


@dataclass
class Model:
    state: str  # pending | claimed | committed | dead
    attempts: int = 0
    token: str | None = None
    holder: str | None = None
    lease_until: int = 0
    claims: int = 0  # claims that returned it
    unclaims: int = 0  # of those, undone by unclaim (no handler saw them)


class StoreLifecycle(RuleBasedStateMachine):
    """One store, one mailbox, a model; subclass with another ``backend_id`` to reuse."""

    backend_id = "sqlite-memory"

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = ManualClock(wall_start=1_700_000_000.0)
        self.tmp = tempfile.TemporaryDirectory()
        self.context = BACKENDS[self.backend_id](Path(self.tmp.name), self.clock)
        self.store: Any = self.run(self.context.__aenter__())
        self.run(self.store.ensure_mailbox("q", ordering_mode="unordered",
                                           max_attempts=MAX_ATTEMPTS,
                                           lease_duration_ms=LEASE_MS))
        self.model: dict[str, Model] = {}
        self.order: list[str] = []  # ids in claim order (send order)
        self.claims: list[Claim] = []  # every claim ever returned, stale ones included
        self.seen_attempts: dict[str, int] = {}

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def teardown(self) -> None:
        self.run(self.context.__aexit__(None, None, None))
        self.loop.close()
        self.tmp.cleanup()

    def now(self) -> int:
        return int(self.clock.wall() * 1000)

    def recover(self) -> None:
        for m in self.model.values():
            if m.state == "claimed" and m.lease_until <= self.now():
                m.state, m.token, m.holder = "pending", None, None

    # -- rules ----------------------------------------------------------------------------

    @rule(sender=st.sampled_from(["a", "b"]))
    def send(self, sender: str) -> None:
        sent = self.run(self.store.send("q", b"x", sender=sender))
        assert sent.message_id not in self.model
        self.model[sent.message_id] = Model("pending")
        self.order.append(sent.message_id)

    @rule(claimer=st.sampled_from(["w1", "w2"]))
    def claim(self, claimer: str) -> None:
        self.recover()
        expected = None
        for message_id in self.order:
            m = self.model[message_id]
            if m.state != "pending":
                continue
            if m.attempts >= MAX_ATTEMPTS:
                m.state = "dead"
                continue
            expected = message_id
            break
        claim = self.run(self.store.claim("q", claimer=claimer))
        if expected is None:
            assert claim is None
            return
        assert claim is not None
        assert claim.message.message_id == expected
        m = self.model[expected]
        m.attempts += 1
        m.claims += 1
        assert claim.message.attempt_count == m.attempts
        m.state, m.token, m.holder = "claimed", claim.lease_token, claimer
        m.lease_until = claim.lease_expires_at_ms
        assert m.lease_until == self.now() + LEASE_MS
        self.claims.append(claim)

    def _settles(self, claim: Claim, settle: Any) -> bool:
        """Run ``settle``; True when the model says it succeeds, else its error is checked."""
        m = self.model[claim.message.message_id]
        expected: type[StoreError] | None = None
        if m.state == "committed":
            expected = AlreadyCommittedError
        elif m.state == "dead":
            expected = MessageNotFoundError
        elif m.state != "claimed" or m.token != claim.lease_token:
            expected = InvalidStateError  # stale: swept back or claimed again
        if expected is None:
            self.run(settle)
            return True
        with pytest.raises(expected):
            self.run(settle)
        return False

    @precondition(lambda self: self.claims)
    @rule(data=st.data())
    def commit(self, data: st.DataObject) -> None:
        claim = data.draw(st.sampled_from(self.claims))
        message_id = claim.message.message_id
        if self._settles(claim, self.store.commit(
            message_id, claimer=claim.message.claimed_by, checkpoint_token="t",
            lease_token=claim.lease_token,
        )):
            self.model[message_id].state = "committed"

    @precondition(lambda self: self.claims)
    @rule(data=st.data(), kind=st.sampled_from(["transient", "permanent"]))
    def release(self, data: st.DataObject, kind: str) -> None:
        claim = data.draw(st.sampled_from(self.claims))
        message_id = claim.message.message_id
        if self._settles(claim, self.store.release(
            message_id, claimer=claim.message.claimed_by, kind=kind,
            lease_token=claim.lease_token,
        )):
            m = self.model[message_id]
            m.state, m.token, m.holder = ("dead" if kind == "permanent" else "pending"), None, None

    @precondition(lambda self: self.claims)
    @rule(data=st.data())
    def unclaim(self, data: st.DataObject) -> None:
        claim = data.draw(st.sampled_from(self.claims))
        message_id = claim.message.message_id
        if self._settles(claim, self.store.unclaim(
            message_id, claimer=claim.message.claimed_by, lease_token=claim.lease_token,
        )):
            m = self.model[message_id]
            m.state, m.token, m.holder = "pending", None, None
            m.attempts -= 1
            m.unclaims += 1

    @precondition(lambda self: self.order)
    @rule(data=st.data())
    def reject(self, data: st.DataObject) -> None:
        message_id = data.draw(st.sampled_from(self.order))
        m = self.model[message_id]
        try:
            self.run(self.store.reject_validation(message_id, note="n"))
        except MessageNotFoundError:
            assert m.state == "dead"
        except InvalidStateError:
            assert m.state in ("claimed", "committed")
        else:
            assert m.state == "pending"
            m.state = "dead"

    @rule(ms=st.sampled_from([0, 400, LEASE_MS, 1_700]))
    def advance(self, ms: int) -> None:
        self.clock.advance(ms / 1000)

    @rule()
    def sweep(self) -> None:
        before = sum(1 for m in self.model.values()
                     if m.state == "claimed" and m.lease_until <= self.now())
        result = self.run(self.store.sweep())
        self.recover()
        assert result.leases_recovered == before

    # -- invariants -----------------------------------------------------------------------

    @invariant()
    def counts_match_and_nothing_is_lost(self) -> None:
        stats = self.run(self.store.stats("q"))
        states = [m.state for m in self.model.values()]
        assert stats.pending_count == states.count("pending")
        assert stats.claimed_count == states.count("claimed")
        assert stats.committed_count == states.count("committed")
        dead = {r.message_id for r in self.run(self.store.dead_letters("q", limit=10_000))}
        assert dead == {i for i, m in self.model.items() if m.state == "dead"}
        assert stats.dead_lettered_count == len(dead)
        # exactly one state each: the four counts partition what was sent
        assert (stats.pending_count + stats.claimed_count + stats.committed_count
                + stats.dead_lettered_count) == len(self.model)

    @invariant()
    def committed_stays_committed_and_attempts_count_deliveries(self) -> None:
        for message_id, m in self.model.items():
            if m.state == "committed":
                assert self.run(self.store.is_committed("q", message_id))
            # attempts only grow, except that an unclaim takes back its own claim
            assert m.attempts == m.claims - m.unclaims
            assert m.attempts >= self.seen_attempts.get(message_id, 0) - 1
            self.seen_attempts[message_id] = m.attempts
        # what the store holds: the pending messages' attempt counts are the model's
        for stored in self.run(self.store.peek("q", max=10_000)):
            assert stored.attempt_count == self.model[stored.message_id].attempts


StoreLifecycle.TestCase.settings = settings(max_examples=60, stateful_step_count=40,
                                            deadline=None)
TestStoreLifecycle = StoreLifecycle.TestCase
