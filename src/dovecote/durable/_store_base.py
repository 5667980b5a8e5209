"""What every store backend shares before it touches its database.

The clock and its millisecond reading, the seven counters, the owned sweeper, the
streams' wake-up signals, the async context manager, and the front of every operation:
its signature, its docstring and the request checks it runs first (each raises
:class:`InvalidRequestError` before anything changes), then the backend's ``_name``
hook, then the counters. ``SqliteStore`` and ``PostgresStore`` build on it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

from prometheus_client import CollectorRegistry

from dovecote._clock import Clock
from dovecote.durable._errors import InvalidRequestError
from dovecote.durable._metrics import StoreMetrics
from dovecote.durable._model import (
    Claim,
    DeadLetterReason,
    DeadLetterRecord,
    MailboxConfig,
    MailboxStats,
    OrderingMode,
    ReleaseKind,
    StoredMessage,
    SweepResult,
)
from dovecote.durable._sqlite_schema import encode_headers
from dovecote.durable._sweeper import Sweeper
from dovecote.durable._ulid import new_ulid
from dovecote.durable._validation import (
    check_agent_id,
    check_checkpoint_token,
    check_count,
    check_headers,
    check_int,
    check_lease_token,
    check_mailbox_config,
    check_message_id,
    check_ms,
    check_note,
    check_optional_ms,
    check_payload,
    check_priority,
    check_reason,
    check_release_kind,
)
from dovecote.durable._wakeup import MailboxSignals, now_ms

__all__ = ["SendRow", "StoreBase", "payload_too_large"]

#: (message_id, mailbox_id, sender_id, payload, headers JSON, priority, created, visible,
#: expires): one message to insert
SendRow = tuple[str, str, str, bytes, str, int, int, int, int | None]


def payload_too_large(size: int, limit: int, mailbox_id: str) -> InvalidRequestError:
    """The error for a payload over a mailbox's ``max_payload_bytes``."""
    return InvalidRequestError(f"payload too large: {size} bytes (max {limit}) for {mailbox_id}")


class StoreBase:
    """The backend-neutral half of a store; subclasses add ``sweep`` and ``close``."""

    sweep: Callable[[], Awaitable[SweepResult]]

    def __init__(self, *, clock: Clock, sweep_interval: float | None) -> None:
        self._clock = clock
        self._signals = MailboxSignals()
        self._counters = StoreMetrics()
        self._sweeper = (
            None if sweep_interval is None else Sweeper(self.sweep, sweep_interval, clock)
        )

    @property
    def metrics(self) -> CollectorRegistry:
        """The store's registry with the seven ``postbox_*`` counters."""
        return self._counters.registry

    @property
    def counters(self) -> StoreMetrics:
        """The counters themselves (``counters.value(name, **labels)`` reads one)."""
        return self._counters

    @property
    def sweeper(self) -> Sweeper | None:
        """The owned background sweeper (``None`` when ``sweep_interval=None``)."""
        return self._sweeper

    async def close(self) -> None:
        """Stop the sweeper and release the database (each backend adds its part)."""
        raise NotImplementedError

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()

    def _now(self) -> int:
        return now_ms(self._clock)

    def _send_rows(self, targets: list[str], payload: object, sender: str, headers: object,
                   priority: int, delay_ms: int, ttl_ms: int | None,
                   payload_limit: Callable[[str], int | None],
                   ) -> tuple[list[SendRow], list[StoredMessage]]:
        """Check a send or fanout and build its rows (``payload_limit(to)``: the cap of a
        mailbox this process knows, or ``None`` to leave the check to the database)."""
        checked = [check_agent_id(t, "mailbox id") for t in targets]
        sender = check_agent_id(sender, "sender")
        data = check_payload(payload)
        fields = check_headers(headers)
        priority = check_priority(priority)
        delay = check_ms(delay_ms, "delay_ms")
        ttl = check_optional_ms(ttl_ms, "ttl_ms")
        for to in checked:
            limit = payload_limit(to)
            if limit is not None and len(data) > limit:
                raise payload_too_large(len(data), limit, to)
        now = self._now()
        visible = now + delay
        expires = None if ttl is None else now + ttl
        text = encode_headers(fields)
        rows: list[SendRow] = []
        sent = []
        for to in checked:
            message_id = new_ulid(now)
            rows.append((message_id, to, sender, data, text, priority, now, visible, expires))
            sent.append(StoredMessage(
                message_id, to, sender, data, dict(fields), priority, now, visible, "pending", 0,
                expires_at_ms=expires,
            ))
        return rows, sent

    # -- mailboxes ------------------------------------------------------------------------

    async def ensure_mailbox(
        self, agent_id: str, *, capacity: int = 10_000, ordering_mode: OrderingMode = "fifo",
        max_attempts: int = 5, lease_duration_ms: int = 60_000,
        max_payload_bytes: int = 1_048_576, dlq_retention_ms: int | None = None,
    ) -> MailboxConfig:
        """Create the mailbox if it does not exist; an existing one is returned unchanged."""
        return await self._ensure_mailbox(check_mailbox_config(
            agent_id, capacity=capacity, ordering_mode=ordering_mode,
            max_attempts=max_attempts, lease_duration_ms=lease_duration_ms,
            max_payload_bytes=max_payload_bytes, dlq_retention_ms=dlq_retention_ms,
        ))

    async def get_mailbox(self, agent_id: str) -> MailboxConfig:
        """The mailbox's configuration (``MailboxNotFoundError`` when unknown)."""
        return await self._get_mailbox(check_agent_id(agent_id, "mailbox id"))

    async def list_mailboxes(self, *, limit: int = 100,
                             after: str | None = None) -> list[MailboxConfig]:
        """Mailboxes in ascending ``agent_id`` order, strictly after ``after``."""
        limit = check_count(limit, "limit")
        if after is not None and not isinstance(after, str):
            raise InvalidRequestError(f"after must be a string or None, not {after!r}")
        return await self._list_mailboxes(limit, after)

    async def stats(self, agent_id: str) -> MailboxStats:
        """Counters of one mailbox."""
        return await self._stats(check_agent_id(agent_id, "mailbox id"))

    # -- claiming -------------------------------------------------------------------------

    async def peek(self, agent_id: str, *, max: int = 100) -> list[StoredMessage]:
        """What claims would return next, in that order, without claiming."""
        return await self._peek(check_agent_id(agent_id, "mailbox id"), check_count(max, "max"))

    async def claim(self, agent_id: str, *, claimer: str,
                    lease_duration_ms: int | None = None) -> Claim | None:
        """Claim the next visible message under a lease (``None`` lease: the mailbox's)."""
        return await self._claim(*self._check_claim(agent_id, claimer, lease_duration_ms))

    async def _claim(self, agent_id: str, claimer: str, lease: int | None) -> Claim | None:
        """The backend's claim, after the arguments were checked."""
        raise NotImplementedError

    # -- settling -------------------------------------------------------------------------

    async def commit(self, message_id: str, *, claimer: str, checkpoint_token: str,
                     lease_token: str | None = None) -> None:
        """Settle a claimed message for good (a second commit: ``AlreadyCommittedError``)."""
        message_id = check_message_id(message_id)
        claimer = check_agent_id(claimer, "claimer")
        token = check_checkpoint_token(checkpoint_token)
        fence = check_lease_token(lease_token)
        self._counters.count_committed(await self._commit(message_id, claimer, token, fence))

    async def release(self, message_id: str, *, claimer: str, kind: ReleaseKind = "transient",
                      note: str | None = None, lease_token: str | None = None) -> None:
        """Give a claimed message back (transient) or dead-letter it (permanent).

        A transient release counts as one of the message's ``max_attempts`` deliveries:
        its handler saw it. To give back a message no handler saw, use :meth:`unclaim`.
        """
        message_id = check_message_id(message_id)
        claimer = check_agent_id(claimer, "claimer")
        kind = check_release_kind(kind)
        text = check_note(note)
        fence = check_lease_token(lease_token)
        mailbox_id = await self._release(message_id, claimer, kind, text, fence)
        self._counters.count_released(mailbox_id, kind)
        if kind == "permanent":
            self._counters.count_dead_lettered(mailbox_id, "permanent_failure")

    async def unclaim(self, message_id: str, *, claimer: str, lease_token: str) -> None:
        """Give back a claimed message that was never handed to a handler, uncounted.

        The claim is undone: the lease is cleared, the message is pending again in its
        place, and its ``attempt_count`` is what it was before that claim (so it does not
        use up one of its ``max_attempts``); no failure is recorded. Fenced by the claim's
        ``lease_token`` (required): a lease that was swept back or claimed again is
        refused with ``InvalidStateError`` (``AlreadyCommittedError`` once committed),
        and then nothing changes. A claimer that crashes instead still spends the
        attempt: its lease expires and the message comes back counted.
        """
        message_id = check_message_id(message_id)
        claimer = check_agent_id(claimer, "claimer")
        fence = check_lease_token(lease_token)
        if fence is None:
            raise InvalidRequestError("unclaim needs the claim's lease_token")
        await self._unclaim(message_id, claimer, fence)

    async def reject_validation(self, message_id: str, *, note: str) -> None:
        """Dead-letter a pending message as ``validation_failed``."""
        message_id = check_message_id(message_id)
        text = check_note(note, required=True)
        assert text is not None
        mailbox_id = await self._reject(message_id, text)
        self._counters.count_dead_lettered(mailbox_id, "validation_failed")

    async def is_committed(self, agent_id: str, message_id: str) -> bool:
        """Whether that message was committed in that mailbox (unknown mailbox: False)."""
        return await self._is_committed(check_agent_id(agent_id, "mailbox id"),
                                        check_message_id(message_id))

    # -- dead letters ---------------------------------------------------------------------

    async def dead_letters(self, agent_id: str, *, reason: DeadLetterReason | None = None,
                           limit: int = 100) -> list[DeadLetterRecord]:
        """Dead-letter records, oldest first, optionally of one reason."""
        return await self._dead_letters(check_agent_id(agent_id, "mailbox id"),
                                        check_reason(reason), check_count(limit, "limit"))

    async def replay(self, message_id: str, *, replayed_by: str,
                     target_mailbox: str | None = None) -> StoredMessage:
        """Send a dead letter again as a new message (attempt 0); the record is kept."""
        message_id = check_message_id(message_id)
        by = check_agent_id(replayed_by, "replayed_by")
        target = None if target_mailbox is None else check_agent_id(target_mailbox,
                                                                     "target_mailbox")
        sent = await self._replay(message_id, by, target)
        self._counters.count_sent(sent.mailbox_id)
        return sent

    async def purge_dead_letters(self, agent_id: str, *, before_ms: int) -> int:
        """Delete records dead-lettered strictly before ``before_ms``; returns how many."""
        agent_id = check_agent_id(agent_id, "mailbox id")
        before = check_int(before_ms, "before_ms", low=-(2**63), high=2**63 - 1)
        return await self._purge_dead_letters(agent_id, before)

    # -- the backend's half (each after its arguments were checked) ---------------------

    async def _ensure_mailbox(self, config: MailboxConfig) -> MailboxConfig:
        raise NotImplementedError

    async def _get_mailbox(self, agent_id: str) -> MailboxConfig:
        raise NotImplementedError

    async def _list_mailboxes(self, limit: int, after: str | None) -> list[MailboxConfig]:
        raise NotImplementedError

    async def _stats(self, agent_id: str) -> MailboxStats:
        raise NotImplementedError

    async def _peek(self, agent_id: str, limit: int) -> list[StoredMessage]:
        raise NotImplementedError

    async def _commit(self, message_id: str, claimer: str, token: str,
                      fence: str | None) -> str:
        """Commit; returns the message's mailbox id."""
        raise NotImplementedError

    async def _release(self, message_id: str, claimer: str, kind: ReleaseKind,
                       note: str | None, fence: str | None) -> str:
        """Release; returns the message's mailbox id."""
        raise NotImplementedError

    async def _unclaim(self, message_id: str, claimer: str, fence: str) -> None:
        raise NotImplementedError

    async def _reject(self, message_id: str, note: str) -> str:
        """Reject a pending message; returns its mailbox id."""
        raise NotImplementedError

    async def _is_committed(self, agent_id: str, message_id: str) -> bool:
        raise NotImplementedError

    async def _dead_letters(self, agent_id: str, reason: DeadLetterReason | None,
                            limit: int) -> list[DeadLetterRecord]:
        raise NotImplementedError

    async def _replay(self, message_id: str, by: str, target: str | None) -> StoredMessage:
        """Send the dead letter again; the new message (the front counts it sent)."""
        raise NotImplementedError

    async def _purge_dead_letters(self, agent_id: str, before: int) -> int:
        raise NotImplementedError

    def _check_claim(self, agent_id: str, claimer: str,
                     lease_duration_ms: int | None) -> tuple[str, str, int | None]:
        return (check_agent_id(agent_id, "mailbox id"), check_agent_id(claimer, "claimer"),
                check_optional_ms(lease_duration_ms, "lease_duration_ms"))
