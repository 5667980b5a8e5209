"""``SqliteStore``: the embedded default store, one SQLite file (or memory).

WAL journal with ``synchronous=FULL`` by default: a send is acknowledged only once its
transaction is fsynced, so it survives power loss. ``durability="normal"`` keeps WAL but
syncs at checkpoints only: faster, and still safe against a process crash, but the last
transactions can be lost on power loss or an OS crash.

All SQL runs on one writer thread with group commit (see ``_sqlite_engine``). Several
processes may share one file: claims are atomic (``BEGIN IMMEDIATE``) and a busy
database is waited for (``busy_timeout`` seconds). ``claim_stream`` is woken by this
process's sends; a send from another process is seen at the next local change or timer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping

from dovecote._clock import Clock, SystemClock
from dovecote.durable._errors import InvalidRequestError
from dovecote.durable._model import (
    Claim,
    DeadLetterReason,
    DeadLetterRecord,
    MailboxConfig,
    MailboxStats,
    ReleaseKind,
    StoredMessage,
    SweepResult,
)
from dovecote.durable._sqlite_admin import (
    op_dead_letters,
    op_get,
    op_is_committed,
    op_list,
    op_next_change,
    op_peek,
    op_purge,
    op_replay,
    op_stats,
    op_sweep,
)
from dovecote.durable._sqlite_engine import Durability, SqliteEngine
from dovecote.durable._sqlite_ops import (
    op_claim,
    op_commit,
    op_ensure,
    op_reject,
    op_release,
    op_send,
    op_unclaim,
)
from dovecote.durable._sqlite_schema import encode_headers, row_to_dead_letter, row_to_message
from dovecote.durable._store_base import StoreBase
from dovecote.durable._sweeper import check_sweep_interval
from dovecote.durable._ulid import new_ulid
from dovecote.durable._validation import (
    check_agent_id,
    check_headers,
    check_ms,
    check_optional_count,
    check_payload,
    check_priority,
)
from dovecote.durable._wakeup import now_ms, stream_claims

__all__ = ["SqliteStore"]

_DURABILITY: tuple[Durability, ...] = ("full", "normal")


def _no_known_limit(mailbox_id: str) -> None:
    """Payload caps are checked in the transaction (a fanout may create its targets)."""
    return

_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1


class SqliteStore(StoreBase):
    """The seed-004 store on SQLite (implements :class:`MailboxStore`).

    Open it with ``open_store("sqlite:///path.db")`` or :meth:`open`. ``durability``:
    ``"full"`` (default, fsync per transaction) or ``"normal"`` (WAL without per-commit
    fsync). Also an async context manager that closes itself.
    """

    def __init__(self, engine: SqliteEngine, *, clock: Clock,
                 sweep_interval: float | None) -> None:
        self._engine = engine
        super().__init__(clock=clock, sweep_interval=sweep_interval)

    @classmethod
    async def open(cls, path: str = ":memory:", *, sweep_interval: float | None = 5.0,
                   clock: Clock | None = None, durability: Durability = "full",
                   busy_timeout: float = 30.0) -> SqliteStore:
        """Open (creating if needed) the database at ``path`` and start the sweeper."""
        interval = check_sweep_interval(sweep_interval)
        if durability not in _DURABILITY:
            raise InvalidRequestError(
                f"unknown durability {durability!r} (choose from {', '.join(_DURABILITY)})"
            )
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, int | float) or \
                not 0 <= busy_timeout <= 3600:
            raise InvalidRequestError(f"busy_timeout must be 0-3600 seconds, not {busy_timeout!r}")
        engine = SqliteEngine(path, durability=durability, busy_timeout=float(busy_timeout))
        await engine.start()
        store = cls(engine, clock=clock or SystemClock(), sweep_interval=interval)
        if store._sweeper is not None:
            store._sweeper.start()
        return store

    # -- lifecycle and introspection ----------------------------------------------------

    @property
    def durability(self) -> Durability:
        """``"full"`` or ``"normal"``."""
        return self._engine.durability

    @property
    def path(self) -> str:
        """The database file (``":memory:"`` for an in-memory store)."""
        return self._engine.path

    async def close(self) -> None:
        """Stop the sweeper, end the streams, finish queued work, close the database."""
        if self._sweeper is not None:
            await self._sweeper.stop()
        self._signals.close()
        await self._engine.close()

    # -- mailboxes ------------------------------------------------------------------------

    async def _ensure_mailbox(self, config: MailboxConfig) -> MailboxConfig:
        return await self._engine.run(op_ensure, config, self._now())

    async def _get_mailbox(self, agent_id: str) -> MailboxConfig:
        return await self._engine.run(op_get, agent_id, write=False)

    async def _list_mailboxes(self, limit: int, after: str | None) -> list[MailboxConfig]:
        return await self._engine.run(op_list, limit, after, write=False)

    async def _stats(self, agent_id: str) -> MailboxStats:
        return await self._engine.run(op_stats, agent_id, write=False)

    # -- sending --------------------------------------------------------------------------

    async def send(
        self, to: str, payload: bytes, *, sender: str, headers: Mapping[str, str] | None = None,
        priority: int = 0, delay_ms: int = 0, ttl_ms: int | None = None,
    ) -> StoredMessage:
        """Queue one message (an unknown mailbox is created with the defaults)."""
        # the common case (bytes, no headers, default numbers) skips the generic checks
        to = check_agent_id(to, "mailbox id")
        sender = check_agent_id(sender, "sender")
        data = payload if type(payload) is bytes else check_payload(payload)
        fields = {} if headers is None else check_headers(headers)
        if type(priority) is not int or not _I32_MIN <= priority <= _I32_MAX:
            priority = check_priority(priority)
        if type(delay_ms) is not int or delay_ms != 0:
            delay_ms = check_ms(delay_ms, "delay_ms")
        ttl = None if ttl_ms is None else check_ms(ttl_ms, "ttl_ms")
        now = now_ms(self._clock)
        message_id = new_ulid(now)
        visible = now + delay_ms
        expires = None if ttl is None else now + ttl
        row = (message_id, to, sender, data, encode_headers(fields), priority, now, visible,
               expires)
        await self._engine.run(op_send, [row], now)
        self._counters.count_sent(to)
        self._signals.notify(to)
        return StoredMessage(message_id, to, sender, data, fields, priority, now, visible,
                             "pending", 0, None, None, None, None, expires)

    async def fanout(
        self, targets: Iterable[str], payload: bytes, *, sender: str,
        headers: Mapping[str, str] | None = None, priority: int = 0, delay_ms: int = 0,
        ttl_ms: int | None = None,
    ) -> list[StoredMessage]:
        """Send one message to every target in one transaction: all or nothing."""
        if isinstance(targets, str | bytes) or not isinstance(targets, Iterable):
            raise InvalidRequestError("targets must be a list of mailbox ids")
        rows, sent = self._send_rows(list(targets), payload, sender, headers, priority,
                                     delay_ms, ttl_ms, _no_known_limit)
        if rows:
            await self._engine.run(op_send, rows, rows[0][6])
        for message in sent:
            self._counters.count_sent(message.mailbox_id)
            self._signals.notify(message.mailbox_id)
        return sent

    # -- claiming -------------------------------------------------------------------------

    async def _peek(self, agent_id: str, limit: int) -> list[StoredMessage]:
        rows = await self._engine.run(op_peek, agent_id, limit, self._now(), write=False)
        return [row_to_message(row) for row in rows]

    async def _claim(self, agent_id: str, claimer: str, lease: int | None) -> Claim | None:
        now = self._now()
        token = new_ulid(now)
        row, dead = await self._engine.run(op_claim, agent_id, claimer, lease, now, token)
        if dead:
            self._counters.count_dead_lettered(agent_id, "max_attempts_exceeded", dead)
        if row is None:
            return None
        self._counters.count_claimed(agent_id)
        message = row_to_message(row)
        assert message.lease_expires_at_ms is not None
        return Claim(message, message.lease_expires_at_ms, token)

    async def claim_stream(
        self, agent_id: str, *, claimer: str, lease_duration_ms: int | None = None,
        max_messages: int | None = None,
    ) -> AsyncIterator[Claim]:
        """Yield each message as it becomes claimable, woken by sends (no polling)."""
        agent_id, claimer, lease = self._check_claim(agent_id, claimer, lease_duration_ms)
        limit = check_optional_count(max_messages, "max_messages")

        async def claim() -> Claim | None:
            return await self._claim(agent_id, claimer, lease)

        async def next_change() -> int | None:
            found: int | None = await self._engine.run(
                op_next_change, agent_id, self._now(), write=False
            )
            return found

        async for found in stream_claims(agent_id, claim=claim, next_change_ms=next_change,
                                         signals=self._signals, clock=self._clock,
                                         max_messages=limit):
            yield found

    # -- settling -------------------------------------------------------------------------

    async def _commit(self, message_id: str, claimer: str, token: str,
                      fence: str | None) -> str:
        mailbox_id = await self._engine.run(
            op_commit, message_id, claimer, token, fence, self._now()
        )
        self._signals.notify(mailbox_id)
        return mailbox_id

    async def _release(self, message_id: str, claimer: str, kind: ReleaseKind,
                       note: str | None, fence: str | None) -> str:
        mailbox_id = await self._engine.run(
            op_release, message_id, claimer, kind, note, fence, self._now()
        )
        self._signals.notify(mailbox_id)
        return mailbox_id

    async def _unclaim(self, message_id: str, claimer: str, fence: str) -> None:
        self._signals.notify(await self._engine.run(op_unclaim, message_id, claimer, fence))

    async def _reject(self, message_id: str, note: str) -> str:
        return await self._engine.run(op_reject, message_id, note, self._now())

    async def _is_committed(self, agent_id: str, message_id: str) -> bool:
        return await self._engine.run(op_is_committed, agent_id, message_id, write=False)

    # -- dead letters ---------------------------------------------------------------------

    async def _dead_letters(self, agent_id: str, reason: DeadLetterReason | None,
                            limit: int) -> list[DeadLetterRecord]:
        rows = await self._engine.run(op_dead_letters, agent_id, reason, limit, write=False)
        return [row_to_dead_letter(row) for row in rows]

    async def _replay(self, message_id: str, by: str, target: str | None) -> StoredMessage:
        now = self._now()
        row = await self._engine.run(op_replay, message_id, target, new_ulid(now), by, now)
        new_id, to, sender, payload, _text, priority, created, visible, _ttl, headers = row
        self._signals.notify(to)
        return StoredMessage(new_id, to, sender, payload, headers, priority, created, visible,
                             "pending", 0)

    async def _purge_dead_letters(self, agent_id: str, before: int) -> int:
        deleted: int = await self._engine.run(op_purge, agent_id, before)
        return deleted

    # -- sweeping -------------------------------------------------------------------------

    async def sweep(self) -> SweepResult:
        """One sweeper tick by hand: expired leases, TTL expiry, DLQ retention."""
        leases, expired, purged = await self._engine.run(op_sweep, self._now())
        self._counters.count_leases_swept(len(leases))
        for mailbox_id, count in expired.items():
            self._counters.count_dead_lettered(mailbox_id, "expired", count)
        self._signals.notify_many(set(leases))
        return SweepResult(len(leases), sum(expired.values()), purged)
