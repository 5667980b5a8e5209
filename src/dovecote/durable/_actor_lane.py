"""The durable lane of one actor: writes its tells to the store, claims and settles.

Writing: ``tell`` encodes at once (a SerializationError comes out of ``tell``) and queues
the payload; one writer task sends everything queued together (the store groups
concurrent sends into one transaction), so ``tell`` never waits. A send that fails is
published as a DeadLetter with reason ``store-failed`` (and fails ``tell_durable``).

Claiming: up to ``claim_ahead`` claims at a time (an adaptive window: what the actor
handles in a quarter of a lease at its recent pace). The next round starts once the
actor has *taken* everything claimed (it is being handled, or was stashed). Messages
claimed behind a failed one, and claims the actor stopped before taking, are given back
with ``unclaim``: their place and attempt count are as before the claim (no handler saw
them). A crash leaves every claim in the store, to come back after its lease, counted.

Settling: a handled message is committed; a failed one is released transiently, or
permanently when the error is non-retriable or the supervisor's directive is STOP; a
message the actor stopped before handling is released transiently.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import structlog

from dovecote._errors import ActorNotFoundError, ActorStoppedError, SerializationError
from dovecote.durable._errors import AlreadyCommittedError, StorageError, StoreError
from dovecote.durable._lane_spec import (
    SENDER_HEADER,
    STORE_FAILED,
    LaneSpec,
    sender_header,
    sender_id,
)
from dovecote.supervision import Directive

if TYPE_CHECKING:
    from dovecote.actors import ActorRef
    from dovecote.actors._hosted_mailbox import MailboxHost
    from dovecote.durable._actor_mailbox import DurableDelivery, DurableMailbox
    from dovecote.durable._model import Claim

__all__ = ["DurableLane"]

_BATCH = 512
_FIRST_RETRY = 0.05  # seconds before claiming again after the store failed

_log = structlog.get_logger("dovecote.durable")


class DurableLane:
    """One actor's traffic with its store mailbox (lives across restarts)."""

    def __init__(self, host: MailboxHost, spec: LaneSpec, claimer: str) -> None:
        self.host = host
        self.spec = spec
        self.name = spec.mailbox or host.path
        self.claimer = claimer
        self.loop = asyncio.get_running_loop()
        self._store = spec.store
        self._writes: deque[tuple[bytes, Any, ActorRef | None, asyncio.Future[None] | None]]
        self._writes = deque()
        self._writer: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._ready.set()
        self._untaken: deque[DurableDelivery] = deque()  # delivered, not yet taken
        self._releasing: set[asyncio.Task[None]] = set()
        self.mailbox: DurableMailbox | None = None  # the current incarnation's
        self._awaiting_decision: dict[BaseException, DurableDelivery] = {}
        self._settling: set[asyncio.Task[None]] = set()
        self._closed = False
        self._in_flight: asyncio.Task[list[Claim]] | None = None
        self._by_priority = False
        self._lease_s = 60.0
        self._pace: float | None = None  # smoothed seconds from taking to settling
        self._retry_delay = _FIRST_RETRY
        # Writes wait for the mailbox to exist: a send would create it with the store's
        # defaults (fifo, which holds a sender's later messages while one is stashed).
        self._ensured = self.loop.create_task(self._ensure())
        self._claims = self.loop.create_task(self._claim_loop(), name=f"durable:{self.name}")

    # -- writing --------------------------------------------------------------------------
    def write(
        self, message: Any, sender: ActorRef | None, done: asyncio.Future[None] | None = None
    ) -> None:
        """Encode ``message`` now and queue its write (SerializationError raises here)."""
        payload = self.spec.codec.encode(message)
        self._writes.append((payload, message, sender, done))
        if self._writer is None:
            self._writer = self.loop.create_task(self._write_all())

    async def _ensure(self) -> None:
        # One claimer taking one message at a time: "unordered" (oldest first, no
        # per-sender hold) delivers in tell order and lets a stashed message wait.
        config = await self._store.ensure_mailbox(self.name, ordering_mode="unordered")
        self._by_priority = config.ordering_mode == "priority"
        self._lease_s = (self.spec.lease_duration_ms or config.lease_duration_ms) / 1000

    def _window(self) -> int:
        """How many to claim together: what the actor handles in a quarter of a lease,
        going by its recent pace (one until it has a pace), at most ``claim_ahead``."""
        pace = self._pace
        if pace is None:
            return 1
        limit = self.spec.claim_ahead
        if pace <= 0:
            return limit
        return max(1, min(limit, int(self._lease_s / (4 * pace))))

    async def _write_all(self) -> None:
        writes = self._writes
        try:
            with contextlib.suppress(Exception):  # if it failed, the sends fail loudly
                await asyncio.shield(self._ensured)
            while writes:
                batch = [writes.popleft() for _ in range(min(len(writes), _BATCH))]
                results = await asyncio.gather(
                    *(self._send(payload, sender) for payload, _, sender, _ in batch),
                    return_exceptions=True,
                )
                for (_, message, sender, done), result in zip(batch, results, strict=True):
                    if isinstance(result, BaseException):
                        _log.error("durable tell failed", mailbox=self.name, error=repr(result))
                        self.host.dead_letter(message, sender, STORE_FAILED)
                        if done is not None and not done.done():
                            done.set_exception(result)
                    elif done is not None and not done.done():
                        done.set_result(None)
        finally:
            self._writer = None

    def _send(self, payload: bytes, sender: ActorRef | None) -> Awaitable[Any]:
        return self._store.send(self.name, payload, sender=sender_id(sender),
                                headers=sender_header(sender))

    # -- claiming -------------------------------------------------------------------------
    async def _claim_loop(self) -> None:
        # A store that fails (a database restart, a full disk) is retried with backoff;
        # anything else stops the lane, loudly (its tells still fail loudly).
        while True:
            try:
                await self._claim_session()
            except asyncio.CancelledError:
                raise
            except StorageError as error:
                delay, self._retry_delay = self._retry_delay, min(self._retry_delay * 2, 5.0)
                _log.warning(
                    "durable mailbox cannot reach its store; retrying",
                    mailbox=self.name,
                    delay_s=delay,
                    error=repr(error),
                )
                await asyncio.sleep(delay)
            except Exception as error:
                _log.error("durable mailbox stopped claiming", mailbox=self.name, exc_info=error)
                return

    async def _claim_session(self) -> None:
        # Claims run as their own task, which close() waits for: a claim cancelled in
        # flight would leave its message held until the lease ends. Only when the mailbox
        # is empty does the loop wait in claim_stream (woken by sends); close cancels that.
        if self._ensured.done() and self._ensured.exception() is not None:
            self._ensured = self.loop.create_task(self._ensure())
        await asyncio.shield(self._ensured)
        lease = self.spec.lease_duration_ms
        stream = self._store.claim_stream(self.name, claimer=self.claimer, lease_duration_ms=lease)
        try:
            while True:
                await self._ready.wait()
                self._in_flight = self.loop.create_task(self._claim_some(self._window()))
                claims = await asyncio.shield(self._in_flight)
                self._in_flight = None
                self._retry_delay = _FIRST_RETRY
                if not claims:
                    claims = [await anext(stream)]
                deliveries = [d for d in map(self._delivery, claims) if d is not None]
                if deliveries:
                    self._ready.clear()
                    self._untaken.extend(deliveries)
                    for delivery in deliveries:
                        self.host.deliver(delivery)
        finally:
            await stream.aclose()  # type: ignore[attr-defined]

    async def _claim_some(self, window: int) -> list[Claim]:
        """Up to ``window`` claims issued together (the store runs them in one transaction,
        oldest first); a crash leaves them all in the store, to come back in that order."""
        store, lease = self._store, self.spec.lease_duration_ms
        results = await asyncio.gather(
            *(
                store.claim(self.name, claimer=self.claimer, lease_duration_ms=lease)
                for _ in range(window)
            ),
            return_exceptions=True,
        )
        claims = [r for r in results if r is not None and not isinstance(r, BaseException)]
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors and not claims:
            raise errors[0]
        for error in errors:
            _log.warning("durable claim failed", mailbox=self.name, error=repr(error))
        # Concurrent claims on several connections (PostgreSQL) can finish in any order:
        # deliver them in the store's order (ULIDs sort by time).
        if self._by_priority:
            claims.sort(key=lambda c: (-c.message.priority, c.message.message_id))
        else:
            claims.sort(key=lambda c: c.message.message_id)
        return claims

    def _delivery(self, claim: Claim) -> DurableDelivery | None:
        from dovecote.durable._actor_mailbox import DurableDelivery

        stored = claim.message
        system = self.host.system
        try:
            message = self.spec.codec.decode(stored.payload, system=system)
        except SerializationError as error:
            _log.warning("undecodable durable message", mailbox=self.name, error=str(error))
            self._release(claim, "permanent", f"undecodable: {error}")
            return None
        sender: ActorRef | None = None
        address = stored.headers.get(SENDER_HEADER)
        if address is not None:
            try:
                sender = system.resolve(address)
            except (ActorNotFoundError, ValueError):
                sender = None
        return DurableDelivery(message, sender, self, claim)

    def taken(self, delivery: DurableDelivery) -> None:
        """The actor took ``delivery`` from its queue (to handle or to stash it)."""
        delivery.taken_at = self.loop.time()
        untaken = self._untaken
        if untaken and untaken[0] is delivery:
            untaken.popleft()
        elif delivery in untaken:
            untaken.remove(delivery)
        else:
            return
        self._maybe_ready()

    def _maybe_ready(self) -> None:
        # claim the next round once everything claimed was taken and no failure waits
        # for its supervisor's decision (the failed message must come back first)
        if not self._untaken and not self._awaiting_decision and not self._releasing:
            self._ready.set()

    def _give_back_untaken(self) -> None:
        """Unclaim what was claimed behind a failed message: it keeps its place and its
        attempt count (no handler saw it); claims resume once it is back."""
        mailbox = self.mailbox
        for delivery in self._untaken:
            if mailbox is not None:
                with contextlib.suppress(ValueError):
                    mailbox._user.remove(delivery)
            self._hold_claims_for(self._unclaim(delivery.letter))
        self._untaken.clear()

    # -- settling -------------------------------------------------------------------------
    def handled(self, delivery: DurableDelivery) -> None:
        """``on_receive`` returned: commit."""
        took = self.loop.time() - delivery.taken_at
        pace = self._pace
        self._pace = took if pace is None else 0.8 * pace + 0.2 * took
        claim = delivery.letter
        self._settle(
            self._store.commit(
                claim.message.message_id,
                claimer=self.claimer,
                checkpoint_token=f"handled-by:{self.host.path}",
                lease_token=claim.lease_token,
            ),
            claim,
        )

    def failed(self, delivery: DurableDelivery, error: BaseException) -> None:
        """The handler raised (or the actor stopped first): release now or at the decision."""
        if isinstance(error, ActorStoppedError):
            never_taken = delivery in self._untaken  # still queued: no handler saw it
            self.taken(delivery)
            if never_taken:
                self._unclaim(delivery.letter)
            else:  # stashed: its handler saw it
                self._release(delivery.letter, "transient",
                              "the actor stopped before handling it")
        elif not self.spec.retriable(error):
            self.taken(delivery)
            self._release(delivery.letter, "permanent", f"non-retriable: {error!r}")
        else:
            self._ready.clear()
            self._awaiting_decision[error] = delivery
            self.taken(delivery)
            self._give_back_untaken()

    def decided(self, error: BaseException, directive: Directive) -> None:
        """The supervisor's directive for a failure: STOP gives the message up."""
        delivery = self._awaiting_decision.pop(error, None)
        if delivery is None:
            return
        if directive is Directive.STOP:
            self._release(delivery.letter, "permanent", f"the actor was stopped: {error!r}")
        else:
            note = f"{directive.name.lower()}: {error!r}"
            self._hold_claims_for(self._release(delivery.letter, "transient", note))

    def _hold_claims_for(self, task: asyncio.Task[None]) -> None:
        """Claims resume once ``task`` (a message going back in its place) is done."""
        self._releasing.add(task)
        task.add_done_callback(self._released)

    def _released(self, task: asyncio.Task[None]) -> None:
        self._releasing.discard(task)
        self._maybe_ready()

    def _release(self, claim: Claim, kind: str, note: str) -> asyncio.Task[None]:
        return self._settle(
            self._store.release(
                claim.message.message_id,
                claimer=self.claimer,
                kind=kind,  # type: ignore[arg-type]
                note=note[:1000],
                lease_token=claim.lease_token,
            ),
            claim,
        )

    def _unclaim(self, claim: Claim) -> asyncio.Task[None]:
        return self._settle(
            self._store.unclaim(
                claim.message.message_id, claimer=self.claimer, lease_token=claim.lease_token
            ),
            claim,
        )

    def _settle(self, operation: Awaitable[None], claim: Claim) -> asyncio.Task[None]:
        task = self.loop.create_task(self._run_settlement(operation, claim))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)
        return task

    async def _run_settlement(self, operation: Awaitable[None], claim: Claim) -> None:
        try:
            await operation
        except AlreadyCommittedError:
            pass
        except StoreError as error:
            # lease lost (swept or re-claimed) or the store failed: the message comes back
            # after its lease, at least once.
            _log.warning(
                "durable settlement refused",
                mailbox=self.name,
                message_id=claim.message.message_id,
                error=repr(error),
            )

    # -- closing --------------------------------------------------------------------------
    async def close(self) -> None:
        """The actor stopped: stop claiming, give back undecided failures, flush writes."""
        if self._closed:
            return
        self._closed = True
        self._claims.cancel()
        await asyncio.gather(self._claims, self._ensured, return_exceptions=True)
        in_flight, self._in_flight = self._in_flight, None
        if in_flight is not None:
            with contextlib.suppress(Exception):
                for claim in await in_flight:
                    self._unclaim(claim)
        for delivery in self._awaiting_decision.values():
            self._release(delivery.letter, "transient", "the actor stopped")
        self._awaiting_decision.clear()
        await self.flush()

    async def flush(self) -> None:
        """Wait until every queued write and settlement has reached the store."""
        while self._writer is not None or self._settling:
            pending: list[asyncio.Future[Any]] = list(self._settling)
            if self._writer is not None:
                pending.append(self._writer)
            await asyncio.gather(*pending, return_exceptions=True)
