"""``Inbox``: transactional dedupe-on-receive (seed 001), exactly-once handling.

The receiver records every ``(source, message_id)`` in the same database transaction as
its own state change. A redelivery collides with the primary key and short-circuits, so
an at-least-once source (a durable mailbox, a broker, a webhook retry) becomes
exactly-once *in that database*. Effects outside it (an e-mail, an HTTP call) are not
covered: see docs/exactly-once.md.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar, overload

from dovecote.durable._errors import (
    InvalidRequestError,
    InvalidStateError,
    MessageNotFoundError,
)
from dovecote.durable._inbox_actor import durable_message
from dovecote.durable._inbox_backend import InboxBackend, open_backend
from dovecote.durable._inbox_input import (
    check_datetime,
    check_key,
    check_limit,
    check_retention,
    check_table,
    encode_metadata,
    retention_horizons,
)
from dovecote.durable._inbox_model import InboxOutcome, InboxStats
from dovecote.observability import get_logger

__all__ = ["Inbox"]

R = TypeVar("R")


class Inbox:
    """A dedupe table over an asyncpg pool / connection or an aiosqlite connection.

    Call ``declare_schema()`` once at boot, ``handle()`` per inbound message and
    ``sweep()`` now and then (under your own scheduler). Every argument is checked before
    any SQL runs; a bad one raises ``InvalidRequestError``.
    """

    __slots__ = (
        "_audit",
        "_backend",
        "_log",
        "_max_id",
        "_max_payload",
        "_max_source",
        "_retention_days",
        "_table",
    )

    def __init__(
        self,
        db: Any,
        *,
        table: str,
        retention_days: float = 30,
        max_payload_bytes: int = 65_536,
        message_id_max_len: int = 256,
        source_max_len: int = 256,
        audit: bool = True,
    ) -> None:
        self._table = check_table(table)
        self._retention_days = check_retention(retention_days)
        self._max_payload = check_limit("max_payload_bytes", max_payload_bytes)
        self._max_id = check_limit("message_id_max_len", message_id_max_len)
        self._max_source = check_limit("source_max_len", source_max_len)
        if not isinstance(audit, bool):
            raise InvalidRequestError(f"audit must be True or False, not {audit!r}")
        self._audit = audit
        self._backend: InboxBackend = open_backend(db, table)
        self._log = get_logger("dovecote.durable.inbox", table=table)

    @property
    def table(self) -> str:
        """The table's name."""
        return self._table

    @property
    def retention_days(self) -> float:
        """Processed rows are swept this many days after they were received."""
        return self._retention_days

    @property
    def backend(self) -> str:
        """``"postgresql"`` or ``"sqlite"``."""
        return self._backend.kind

    async def declare_schema(self) -> None:
        """Create the table and its index if missing; safe to call at every boot."""
        await self._backend.declare()

    @overload
    async def handle(
        self,
        message_id: str,
        source: str,
        handler: Callable[[Any], Awaitable[R]],
        *,
        metadata: Any = None,
    ) -> InboxOutcome[R]: ...

    @overload
    async def handle(
        self, message_id: str, source: str, handler: Callable[[Any], R], *, metadata: Any = None
    ) -> InboxOutcome[R]: ...

    async def handle(
        self, message_id: str, source: str, handler: Callable[[Any], Any], *, metadata: Any = None
    ) -> InboxOutcome[Any]:
        """Run ``handler(tx)`` exactly once per ``(source, message_id)``.

        One transaction records the receive, runs the handler (sync or async; ``tx`` is the
        native connection inside the transaction: write your state through it), marks the
        row processed and commits. A duplicate commits nothing and returns
        ``InboxOutcome(fresh=False)`` without calling the handler. If the handler raises,
        its writes and the receive record roll back together and the exception comes out
        unchanged, so a redelivery runs it again.
        """
        message_id, source = self._keys(message_id, source)
        encoded = encode_metadata(metadata, self._max_payload)
        if not callable(handler):
            raise InvalidRequestError(f"handler must be callable, not {handler!r}")
        fresh = started = False
        result: Any = None
        try:
            async with self._backend.receive(source, message_id, _now(), encoded, _now) as (
                tx,
                fresh,
            ):
                if fresh:
                    self._event("inbox.received", source, message_id)
                    started = True
                    result = handler(tx)
                    if inspect.isawaitable(result):
                        result = await result
        except BaseException as exc:
            if started:
                self._event("inbox.rolled_back", source, message_id, error=type(exc).__name__)
            raise
        if not fresh:
            self._event("inbox.duplicate", source, message_id)
            return InboxOutcome(False, None)
        self._event("inbox.processed", source, message_id)
        return InboxOutcome(True, result)

    @overload
    async def handle_delivery(
        self, context: Any, handler: Callable[[Any], Awaitable[R]], *, metadata: Any = None
    ) -> InboxOutcome[R]: ...

    @overload
    async def handle_delivery(
        self, context: Any, handler: Callable[[Any], R], *, metadata: Any = None
    ) -> InboxOutcome[R]: ...

    async def handle_delivery(
        self, context: Any, handler: Callable[[Any], Any], *, metadata: Any = None
    ) -> InboxOutcome[Any]:
        """``handle`` for the durable message an actor is handling: exactly-once effects.

        Call it inside ``on_receive`` of an actor with a durable mailbox, passing
        ``self.context``. The receive is keyed on the stored message (source: its store
        mailbox; message id: its store id, the same on every redelivery), so a message
        redelivered after a crash between the inbox commit and the store commit skips
        the handler. Raises ``InvalidStateError`` outside such a handler.
        """
        stored = durable_message(context)
        if stored is None:
            raise InvalidStateError(
                "handle_delivery needs the context of an actor handling a message from a "
                "durable mailbox (with_durable_mailbox), inside on_receive"
            )
        return await self.handle(stored.message_id, stored.mailbox_id, handler, metadata=metadata)

    async def record_receive(
        self, tx: Any, message_id: str, source: str, *, metadata: Any = None
    ) -> bool:
        """Record a receive on *tx*, a transaction you hold; True when it is fresh.

        One statement decides, so other statements you run on *tx* before or after it
        cannot confuse it. Commit or roll back *tx* yourself; call ``mark_processed``
        once your work is done.
        """
        message_id, source = self._keys(message_id, source)
        encoded = encode_metadata(metadata, self._max_payload)
        fresh = await self._backend.insert(tx, source, message_id, _now(), encoded)
        self._event("inbox.received" if fresh else "inbox.duplicate", source, message_id)
        return fresh

    async def mark_processed(self, tx: Any, message_id: str, source: str) -> None:
        """Mark a recorded receive processed on *tx* (the first mark's time is kept).

        Raises ``MessageNotFoundError`` when the pair was never recorded.
        """
        message_id, source = self._keys(message_id, source)
        if not await self._backend.mark(tx, source, message_id, _now()):
            raise MessageNotFoundError(
                f"inbox {self._table!r} has no receive of {message_id!r} from {source!r}"
            )
        self._event("inbox.processed", source, message_id)

    async def is_fresh(self, message_id: str, source: str) -> bool:
        """True when ``(source, message_id)`` has not been recorded (or was swept)."""
        message_id, source = self._keys(message_id, source)
        async with self._backend.connection() as conn:
            return not await self._backend.exists(conn, source, message_id)

    async def sweep(self, *, now: datetime | None = None) -> int:
        """Delete processed rows received more than ``retention_days`` before *now*.

        Unprocessed rows (a receive recorded but never marked) are kept twice as long.
        Returns how many rows were deleted. *now* defaults to the current UTC time and
        must be timezone-aware.
        """
        moment = _now() if now is None else check_datetime(now)
        processed_before, unprocessed_before = retention_horizons(moment, self._retention_days)
        async with self._backend.transaction() as tx:
            processed, unprocessed = await self._backend.sweep(
                tx, processed_before, unprocessed_before
            )
        if self._audit:
            self._log.info(
                "inbox.swept",
                deleted=processed + unprocessed,
                processed=processed,
                unprocessed=unprocessed,
                now=moment.isoformat(),
            )
        return processed + unprocessed

    async def get_stats(self, *, source: str | None = None) -> InboxStats:
        """Row counts for the whole table, or for one *source*."""
        if source is not None:
            source = check_key("source", source, self._max_source)
        async with self._backend.connection() as conn:
            total, processed = await self._backend.count(conn, source)
        return InboxStats(total=total, processed=processed, unprocessed=total - processed)

    def _keys(self, message_id: object, source: object) -> tuple[str, str]:
        return (
            check_key("message_id", message_id, self._max_id),
            check_key("source", source, self._max_source),
        )

    def _event(self, event: str, source: str, message_id: str, **extra: Any) -> None:
        if self._audit:
            self._log.info(event, source=source, message_id=message_id, **extra)

    def __repr__(self) -> str:
        return f"Inbox(table={self._table!r}, backend={self._backend.kind!r})"


def _now() -> datetime:
    return datetime.now(UTC)
