"""``PostgresStore``: the seed-004 store on PostgreSQL, shared by many processes and machines.

Open it with ``open_store("postgresql://user@host:5432/db", schema="mail")``. Every
operation is one statement (its own transaction) on a small asyncpg pool, except sends,
which are grouped: concurrent sends share one transaction (see ``_postgres_admit``), and
the rare claim or commit whose lean statement hands over to the full one.
Claims pick with ``FOR UPDATE SKIP LOCKED``, so any number of claimers in any number of
processes share a mailbox; ``claim_stream`` is woken across processes by LISTEN/NOTIFY.
Mailbox configurations never change after creation, so each process caches them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping

from dovecote._clock import Clock, SystemClock
from dovecote.durable._errors import (
    InvalidRequestError,
    InvalidStateError,
    MailboxNotFoundError,
    MessageNotFoundError,
    StorageError,
)
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
from dovecote.durable._postgres_admit import Admission, Row
from dovecote.durable._postgres_db import Listener, PgDatabase
from dovecote.durable._postgres_rows import (
    row_to_claimed,
    row_to_dead_letter,
    row_to_message,
    settle_refusal,
)
from dovecote.durable._postgres_schema import valid_schema
from dovecote.durable._sqlite_schema import encode_headers
from dovecote.durable._store_base import StoreBase, payload_too_large
from dovecote.durable._sweeper import check_sweep_interval
from dovecote.durable._ulid import new_ulid
from dovecote.durable._validation import (
    check_int,
    check_optional_count,
)
from dovecote.durable._wakeup import stream_claims

__all__ = ["PostgresStore"]


class PostgresStore(StoreBase):
    """The seed-004 store on PostgreSQL (implements :class:`MailboxStore`).

    Backend options: ``schema`` (default ``"public"``; a plain identifier, created if
    missing), ``min_size`` / ``max_size`` of the connection pool (default 1 / 4). Several
    stores, processes and machines may share one database and schema.
    """

    def __init__(self, db: PgDatabase, *, clock: Clock, sweep_interval: float | None) -> None:
        super().__init__(clock=clock, sweep_interval=sweep_interval)
        self._db = db
        self._sql = db.sql
        self._configs: dict[str, MailboxConfig] = {}
        self._admission = Admission(db, self._configs, self._signals)
        self._listener = Listener(db.dsn, db.sql.channel, self._signals)
        self._closed = False

    @classmethod
    async def open(cls, url: str, *, sweep_interval: float | None = 5.0,
                   clock: Clock | None = None, schema: str = "public", min_size: int = 1,
                   max_size: int = 4, **unknown: object) -> PostgresStore:
        """Connect, create the schema if needed, and start the sweeper."""
        if unknown:
            raise InvalidRequestError(
                f"unknown PostgreSQL store option(s) {', '.join(sorted(unknown))} "
                "(accepted: schema, min_size, max_size)"
            )
        interval = check_sweep_interval(sweep_interval)
        if not valid_schema(schema):
            raise InvalidRequestError(
                f"schema must be a plain identifier (letters, digits, _), not {schema!r}"
            )
        low = check_int(min_size, "min_size", low=0, high=1000)
        high = check_int(max_size, "max_size", low=1, high=1000)
        if low > high:
            raise InvalidRequestError(f"min_size {low} is larger than max_size {high}")
        db = await PgDatabase.connect(url, schema=schema, min_size=low, max_size=high)
        store = cls(db, clock=clock or SystemClock(), sweep_interval=interval)
        if store._sweeper is not None:
            store._sweeper.start()
        return store

    # -- lifecycle and introspection ----------------------------------------------------

    @property
    def schema(self) -> str:
        """The PostgreSQL schema holding the tables."""
        return self._sql.schema

    @property
    def listener(self) -> Listener:
        """The LISTEN connection that wakes ``claim_stream`` (connected on first use)."""
        return self._listener

    async def close(self) -> None:
        """Stop the sweeper, finish queued sends, end the streams, close the connections.

        Idempotent.
        """
        if self._closed:
            return
        self._closed = True
        if self._sweeper is not None:
            await self._sweeper.stop()
        await self._admission.drain()  # queued sends are written before the pool closes
        self._signals.close()
        await self._listener.close()
        await self._db.close()

    async def drop_schema(self) -> None:
        """Close the store, then drop its schema with everything in it (tests, tools)."""
        await self.close()
        await self._db.drop_schema()

    async def _config(self, agent_id: str) -> MailboxConfig:
        config = self._configs.get(agent_id)
        if config is None:
            row = await self._db.fetchrow("reading a mailbox", self._sql.get_mailbox, agent_id)
            if row is None:
                raise MailboxNotFoundError(f"mailbox not found: {agent_id}")
            config = self._configs.setdefault(agent_id, MailboxConfig(*row))
        return config

    # -- mailboxes ------------------------------------------------------------------------

    async def _ensure_mailbox(self, c: MailboxConfig) -> MailboxConfig:
        if c.agent_id in self._configs:
            return self._configs[c.agent_id]
        await self._db.fetchval(
            "creating a mailbox", self._sql.insert_mailbox, c.agent_id, c.capacity,
            c.ordering_mode, c.max_attempts, c.lease_duration_ms, c.max_payload_bytes,
            c.dlq_retention_ms, self._now(),
        )
        return await self._config(c.agent_id)

    async def _get_mailbox(self, agent_id: str) -> MailboxConfig:
        return await self._config(agent_id)

    async def _list_mailboxes(self, limit: int, after: str | None) -> list[MailboxConfig]:
        rows = await self._db.fetch("listing mailboxes", self._sql.list_mailboxes, after, limit)
        return [MailboxConfig(*row) for row in rows]

    async def _stats(self, agent_id: str) -> MailboxStats:
        await self._config(agent_id)
        row = await self._db.fetchrow("reading stats", self._sql.stats, agent_id)
        assert row is not None
        return MailboxStats(agent_id, row[0], row[1], row[2], row[3], row[4])

    # -- sending --------------------------------------------------------------------------

    def _rows(self, targets: list[str], payload: object, sender: str, headers: object,
              priority: int, delay_ms: int, ttl_ms: int | None
              ) -> tuple[list[Row], list[StoredMessage]]:
        # known mailboxes are checked here; unknown ones by the admission that creates them
        def limit(to: str) -> int | None:
            config = self._configs.get(to)
            return None if config is None else config.max_payload_bytes

        return self._send_rows(targets, payload, sender, headers, priority, delay_ms, ttl_ms,
                               limit)

    async def send(
        self, to: str, payload: bytes, *, sender: str, headers: Mapping[str, str] | None = None,
        priority: int = 0, delay_ms: int = 0, ttl_ms: int | None = None,
    ) -> StoredMessage:
        """Queue one message (an unknown mailbox is created with the defaults)."""
        rows, sent = self._rows([to], payload, sender, headers, priority, delay_ms, ttl_ms)
        await self._admission.admit(rows)
        self._counters.count_sent(sent[0].mailbox_id)
        return sent[0]

    async def fanout(
        self, targets: Iterable[str], payload: bytes, *, sender: str,
        headers: Mapping[str, str] | None = None, priority: int = 0, delay_ms: int = 0,
        ttl_ms: int | None = None,
    ) -> list[StoredMessage]:
        """Send one message to every target in one transaction: all or nothing."""
        if isinstance(targets, str | bytes) or not isinstance(targets, Iterable):
            raise InvalidRequestError("targets must be a list of mailbox ids")
        rows, sent = self._rows(list(targets), payload, sender, headers, priority, delay_ms,
                                ttl_ms)
        if rows:
            await self._admission.admit(rows)
        for message in sent:
            self._counters.count_sent(message.mailbox_id)
        return sent

    # -- claiming -------------------------------------------------------------------------

    async def _peek(self, agent_id: str, limit: int) -> list[StoredMessage]:
        config = await self._config(agent_id)
        rows = await self._db.fetch("peeking", self._sql.peek[config.ordering_mode], agent_id,
                                    self._now(), config.max_attempts, limit)
        return [row_to_message(row) for row in rows]

    async def _claim(self, agent_id: str, claimer: str, lease: int | None) -> Claim | None:
        config = self._configs.get(agent_id) or await self._config(agent_id)
        fast = self._sql.claim_fast[config.ordering_mode]
        full = self._sql.claim[config.ordering_mode]
        lease_ms = config.lease_duration_ms if lease is None else lease
        while True:
            now = self._now()
            token = new_ulid(now)
            until = now + lease_ms
            args = (agent_id, now, claimer, token, until, config.max_attempts)
            row = await self._db.fetchrow("claiming", fast, *args)
            if row is None:
                return None
            if row[0] == "claim":
                self._counters.count_claimed(agent_id)
                return Claim(row_to_claimed(row, agent_id, claimer, until), until, token)
            # the rare work (dead-lettering, expired leases) takes the full statement
            row = await self._db.fetchrow("claiming", full, *args)
            if row is None:
                return None
            if row[0] == "dead":
                self._counters.count_dead_lettered(agent_id, "max_attempts_exceeded")
                continue
            self._counters.count_claimed(agent_id)
            message = row_to_message(row, 1)
            assert message.lease_expires_at_ms is not None
            return Claim(message, message.lease_expires_at_ms, token)

    async def claim_stream(
        self, agent_id: str, *, claimer: str, lease_duration_ms: int | None = None,
        max_messages: int | None = None,
    ) -> AsyncIterator[Claim]:
        """Yield each message as it becomes claimable; woken by NOTIFY from any process."""
        agent_id, claimer, lease = self._check_claim(agent_id, claimer, lease_duration_ms)
        limit = check_optional_count(max_messages, "max_messages")
        await self._config(agent_id)
        await self._listener.ensure()

        async def claim() -> Claim | None:
            try:
                await self._listener.ensure()  # reconnects before the claim: none is missed
                return await self._claim(agent_id, claimer, lease)
            except StorageError:
                if self._closed:  # closed under the stream: it ends
                    return None
                raise

        async def next_change() -> int | None:
            try:
                found: int | None = await self._db.fetchval(
                    "reading the next wake-up", self._sql.next_wake, agent_id, self._now()
                )
            except StorageError:
                if self._closed:
                    return None
                raise
            return found

        async for found in stream_claims(agent_id, claim=claim, next_change_ms=next_change,
                                         signals=self._signals, clock=self._clock,
                                         max_messages=limit):
            yield found

    # -- settling -------------------------------------------------------------------------

    async def _settle(self, doing: str, statement: str, message_id: str, claimer: str,
                      *args: object, lease_token: str | None) -> str:
        row = await self._db.fetchrow(doing, statement, message_id, *args)
        assert row is not None
        if row[0] is None:
            raise settle_refusal(message_id, claimer, row, lease_token=lease_token)
        mailbox_id: str = row[0]
        if row[1]:
            self._signals.notify(mailbox_id)
        return mailbox_id

    async def _commit(self, message_id: str, claimer: str, token: str,
                      fence: str | None) -> str:
        now = self._now()
        row = await self._db.fetchrow("committing", self._sql.commit_fast, message_id,
                                      claimer, now, token, fence)
        if row is None:  # refused: the full statement tries again and names the reason
            return await self._settle("committing", self._sql.commit, message_id, claimer,
                                      claimer, now, token, fence, lease_token=fence)
        mailbox_id: str = row[0]
        if row[1]:
            self._signals.notify(mailbox_id)
        return mailbox_id

    async def _release(self, message_id: str, claimer: str, kind: ReleaseKind,
                       note: str | None, fence: str | None) -> str:
        if kind == "transient":
            return await self._settle(
                "releasing", self._sql.release_transient, message_id, claimer, claimer,
                self._now(), note, fence, lease_token=fence,
            )
        return await self._settle(
            "releasing", self._sql.release_permanent, message_id, claimer, self._now(),
            claimer, note, fence, lease_token=fence,
        )

    async def _unclaim(self, message_id: str, claimer: str, fence: str) -> None:
        await self._settle("unclaiming", self._sql.unclaim, message_id, claimer, claimer,
                           fence, lease_token=fence)

    async def _reject(self, message_id: str, note: str) -> str:
        row = await self._db.fetchrow("rejecting", self._sql.reject, message_id, self._now(),
                                      note)
        assert row is not None
        if row[0] is None:
            status = row["status"]
            if status is None:
                raise MessageNotFoundError(f"message not found: {message_id}")
            raise InvalidStateError(f"message {message_id} is {status}, not claimable")
        if row[1]:
            self._signals.notify(row[0])
        mailbox_id: str = row[0]
        return mailbox_id

    async def _is_committed(self, agent_id: str, message_id: str) -> bool:
        found: bool = await self._db.fetchval("reading a commit", self._sql.is_committed,
                                              agent_id, message_id)
        return found

    # -- dead letters ---------------------------------------------------------------------

    async def _dead_letters(self, agent_id: str, reason: DeadLetterReason | None,
                            limit: int) -> list[DeadLetterRecord]:
        if reason is None:
            rows = await self._db.fetch("listing dead letters", self._sql.dead_letters,
                                        agent_id, limit)
        else:
            rows = await self._db.fetch("listing dead letters", self._sql.dead_letters_reason,
                                        agent_id, limit, reason)
        return [row_to_dead_letter(row) for row in rows]

    async def _replay(self, message_id: str, by: str, target: str | None) -> StoredMessage:
        row = await self._db.fetchrow("reading a dead letter", self._sql.dead_letter, message_id)
        if row is None:
            raise MessageNotFoundError(f"dead letter not found: {message_id}")
        record = row_to_dead_letter(row)
        to = record.mailbox_id if target is None else target
        config = await self._config(to)
        size = len(record.payload)
        if size > config.max_payload_bytes:
            raise payload_too_large(size, config.max_payload_bytes, to)
        now = self._now()
        headers = dict(record.headers)
        headers.update(replayed_from=message_id, replayed_by=by, replayed_at=str(now))
        new_id = new_ulid(now)
        await self._admission.admit(
            [(new_id, to, record.sender_id, record.payload, encode_headers(headers),
              record.priority, now, now, None)],
            create=False,
        )
        return StoredMessage(new_id, to, record.sender_id, record.payload, headers,
                             record.priority, now, now, "pending", 0)

    async def _purge_dead_letters(self, agent_id: str, before: int) -> int:
        deleted: int = await self._db.fetchval("purging dead letters", self._sql.purge,
                                               agent_id, before)
        return deleted

    # -- sweeping -------------------------------------------------------------------------

    async def sweep(self) -> SweepResult:
        """One sweeper tick over the whole database (every store sharing it)."""
        now = self._now()
        row = await self._db.fetchrow("sweeping leases", self._sql.sweep_leases, now)
        leases = 0 if row is None else int(row[0])
        self._counters.count_leases_swept(leases)
        expired = 0
        for mailbox_id, count in await self._db.fetch("sweeping TTLs", self._sql.sweep_expired,
                                                      now):
            self._counters.count_dead_lettered(mailbox_id, "expired", count)
            expired += count
        purged: int = await self._db.fetchval("sweeping retention", self._sql.sweep_retention,
                                              now)
        if leases:
            self._signals.notify_all()
        return SweepResult(leases, expired, purged)
