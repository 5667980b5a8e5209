"""The durable lane of one actor: writes its tells to the store, claims and settles.

Writing: ``tell`` encodes at once (a SerializationError comes out of ``tell``) and queues
the payload; one writer task sends everything queued together (the store groups
concurrent sends into one transaction), so ``tell`` never waits. A send that fails is
published as a DeadLetter with reason ``store-failed`` (and fails ``tell_durable``).

Claiming: one claim at a time from ``claim_stream``. The next claim starts once the
actor has *taken* the previous delivery (it is being handled, or was stashed): at most
one claimed message waits in memory, and a crash leaves every claim in the store, to
come back after its lease in the store's order.

Settling: a handled message is committed; a failed one is released transiently, or
permanently when the error is non-retriable or the supervisor's directive is STOP; a
message the actor stopped before handling is released transiently.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections import deque
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import attrs
import structlog

from dovecote._errors import ActorNotFoundError, ActorStoppedError, SerializationError
from dovecote.codec import Codec
from dovecote.durable._errors import AlreadyCommittedError, StoreError
from dovecote.durable._retriable import RetriablePredicate
from dovecote.supervision import Directive

if TYPE_CHECKING:
    from dovecote.actors import ActorRef
    from dovecote.actors._hosted_mailbox import MailboxHost
    from dovecote.durable._actor_mailbox import DurableDelivery
    from dovecote.durable._model import Claim
    from dovecote.durable._protocol import MailboxStore

__all__ = ["SENDER_HEADER", "STORE_FAILED", "DurableLane", "LaneSpec"]

SENDER_HEADER = "dovecote-sender"
"""Store header holding the address of a tell's sender (it comes back as ``sender``)."""
STORE_FAILED = "store-failed"
"""DeadLetter reason of a tell whose write to the store failed."""
ANONYMOUS = "anonymous"
"""Store ``sender_id`` of a tell without a sender."""
_BATCH = 512

_log = structlog.get_logger("dovecote.durable")


@attrs.frozen(slots=True)
class LaneSpec:
    """What ``with_durable_mailbox`` was given (shared by every actor spawned with it)."""

    store: MailboxStore
    mailbox: str | None
    codec: Codec
    lease_duration_ms: int | None
    retriable: RetriablePredicate


def _sender_id(sender: ActorRef | None) -> str:
    if sender is None:
        return ANONYMOUS
    path = sender.path
    if len(path.encode()) <= 256:
        return path
    return "sender-" + hashlib.sha256(path.encode()).hexdigest()


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
        self._waiting: DurableDelivery | None = None  # delivered, not yet taken
        self._awaiting_decision: dict[BaseException, DurableDelivery] = {}
        self._settling: set[asyncio.Task[None]] = set()
        self._closed = False
        self._in_flight: asyncio.Task[Claim | None] | None = None
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
        await self._store.ensure_mailbox(self.name, ordering_mode="unordered")

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
        headers = None if sender is None else {SENDER_HEADER: sender.address}
        return self._store.send(self.name, payload, sender=_sender_id(sender), headers=headers)

    # -- claiming -------------------------------------------------------------------------
    async def _claim_loop(self) -> None:
        # A claim in flight must not be cancelled (the store would hold the message until
        # its lease ends), so claims after a delivery run as their own task, which close()
        # waits for. Only when the mailbox is empty does the loop wait in claim_stream,
        # woken by sends; a close cancels that wait.
        store = self._store
        lease = self.spec.lease_duration_ms
        try:
            await asyncio.shield(self._ensured)
            stream = store.claim_stream(self.name, claimer=self.claimer, lease_duration_ms=lease)
            try:
                while True:
                    self._in_flight = self.loop.create_task(
                        store.claim(self.name, claimer=self.claimer, lease_duration_ms=lease)
                    )
                    claim = await asyncio.shield(self._in_flight)
                    self._in_flight = None
                    if claim is None:
                        claim = await anext(stream)
                    delivery = self._delivery(claim)
                    if delivery is None:
                        continue
                    self._ready.clear()
                    self._waiting = delivery
                    self.host.deliver(delivery)
                    await self._ready.wait()
            finally:
                await stream.aclose()  # type: ignore[attr-defined]
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the lane cannot claim: loud, and its tells still fail loudly
            _log.error("durable mailbox stopped claiming", mailbox=self.name, exc_info=error)

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
        """The actor took ``delivery`` from its queue: claim the next one."""
        if delivery is self._waiting:
            self._waiting = None
            self._ready.set()

    # -- settling -------------------------------------------------------------------------
    def handled(self, delivery: DurableDelivery) -> None:
        """``on_receive`` returned: commit."""
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
        self.taken(delivery)
        if isinstance(error, ActorStoppedError):
            self._release(delivery.letter, "transient", "the actor stopped before handling it")
        elif not self.spec.retriable(error):
            self._release(delivery.letter, "permanent", f"non-retriable: {error!r}")
        else:
            self._awaiting_decision[error] = delivery

    def decided(self, error: BaseException, directive: Directive) -> None:
        """The supervisor's directive for a failure: STOP gives the message up."""
        delivery = self._awaiting_decision.pop(error, None)
        if delivery is None:
            return
        if directive is Directive.STOP:
            self._release(delivery.letter, "permanent", f"the actor was stopped: {error!r}")
        else:
            self._release(delivery.letter, "transient", f"{directive.name.lower()}: {error!r}")

    def _release(self, claim: Claim, kind: str, note: str) -> None:
        self._settle(
            self._store.release(
                claim.message.message_id,
                claimer=self.claimer,
                kind=kind,  # type: ignore[arg-type]
                note=note[:1000],
                lease_token=claim.lease_token,
            ),
            claim,
        )

    def _settle(self, operation: Awaitable[None], claim: Claim) -> None:
        task = self.loop.create_task(self._run_settlement(operation, claim))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

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
                claim = await in_flight
                if claim is not None:
                    self._release(claim, "transient", "the actor stopped")
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
