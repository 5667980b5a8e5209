"""Orders from a source that redelivers, and a balance that never double-counts.

The order source delivers at least once, like every durable queue: after a lost ack, a
timeout or a consumer crash it sends an order again, sometimes much later. A consumer
that adds every delivery to the balance double-counts. With an ``Inbox`` the consumer
records ``(source, order_id)`` in the same SQLite transaction as its balance update, so:

- a redelivery collides with the recorded pair and is skipped (``outcome.fresh`` False);
- a crash in the middle of an order rolls back the balance update and the record
  together, so the redelivery applies it, once;
- the record is durable: a restarted consumer replaying the whole log adds nothing.

Needs the ``sqlite`` extra (aiosqlite). Run it with:  python examples/exactly_once_orders.py
"""

import asyncio
import random
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiosqlite
import attrs

from dovecote.durable import Inbox

SOURCE = "shop:orders.placed.v1"
ORDERS = 40


@attrs.frozen
class Delivery:
    order_id: str
    amount: int
    attempt: int


class ConsumerCrashed(Exception):
    """The consumer died half-way through an order (before it could ack)."""


def redelivering_source(seed: int = 7) -> list[Delivery]:
    """Every order once, plus redeliveries scattered later in the stream."""
    rng = random.Random(seed)
    orders = [(f"order-{n:03d}", rng.randint(5, 250)) for n in range(ORDERS)]
    stream = [Delivery(order_id, amount, 1) for order_id, amount in orders]
    for order_id, amount in orders:
        for attempt in range(2, rng.choice([1, 1, 2, 3]) + 1):
            last = max(i for i, d in enumerate(stream) if d.order_id == order_id)
            stream.insert(rng.randint(last + 1, len(stream)), Delivery(order_id, amount, attempt))
    return stream


async def open_ledger(path: Path) -> tuple[aiosqlite.Connection, Inbox]:
    db = await aiosqlite.connect(path)
    await db.execute("PRAGMA journal_mode=WAL")
    await db.execute("CREATE TABLE IF NOT EXISTS account (id INTEGER PRIMARY KEY, balance INT)")
    await db.execute("INSERT OR IGNORE INTO account VALUES (1, 0)")
    await db.commit()
    inbox = Inbox(db, table="order_inbox", retention_days=30, audit=False)
    await inbox.declare_schema()  # idempotent: safe at every start
    return db, inbox


async def balance(db: aiosqlite.Connection) -> int:
    rows = await db.execute_fetchall("SELECT balance FROM account WHERE id = 1")
    return int(next(iter(rows))[0])


async def consume(inbox: Inbox, delivery: Delivery, crash_on: Delivery | None) -> bool:
    """Apply one delivery exactly once; True if it changed the balance."""

    async def apply(tx: aiosqlite.Connection) -> None:
        await tx.execute(
            "UPDATE account SET balance = balance + ? WHERE id = 1", (delivery.amount,)
        )
        if delivery == crash_on:
            raise ConsumerCrashed(delivery.order_id)  # after the update: it must roll back

    outcome = await inbox.handle(
        delivery.order_id, SOURCE, apply, metadata={"attempt": delivery.attempt}
    )
    return outcome.fresh


async def main() -> None:
    stream = redelivering_source()
    expected = sum({d.order_id: d.amount for d in stream}.values())
    # the consumer dies once, in the middle of an order's first delivery
    crash_on: Delivery | None = next(d for d in stream[len(stream) // 3 :] if d.attempt == 1)
    print(
        f"source delivered {ORDERS} orders as {len(stream)} deliveries "
        f"({len(stream) - ORDERS} redeliveries), and the consumer crashes once mid-order"
    )

    naive = sum(d.amount for d in stream)
    print(f"naive consumer:  balance {naive:,}, expected {expected:,}  <- double-counted")

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ledger.db"
        db, inbox = await open_ledger(path)
        pending, applied, skipped, crashes = list(stream), 0, 0, 0
        while pending:
            delivery = pending.pop(0)
            try:
                fresh = await consume(inbox, delivery, crash_on)
            except ConsumerCrashed:
                crashes += 1
                crash_on = None
                pending.append(delivery)  # no ack: the source sends it again later
                continue
            applied += fresh
            skipped += not fresh
        total = await balance(db)
        print(f"inbox consumer:  balance {total:,}, expected {expected:,}  <- exact")
        print(
            f"inbox: {applied} orders applied, {skipped} redeliveries skipped, "
            f"{crashes} crash rolled back and redelivered"
        )
        assert total == expected
        await db.close()

        # a restarted consumer replays the whole log: every order is already recorded
        db, inbox = await open_ledger(path)
        replayed = [await consume(inbox, d, None) for d in stream]
        print(
            f"after a restart, replaying all {len(stream)} deliveries applies "
            f"{sum(replayed)}: balance {await balance(db):,}"
        )
        stats = await inbox.get_stats(source=SOURCE)
        print(f"inbox rows: {stats.total} total, {stats.processed} processed")
        month_later = datetime.now(UTC) + timedelta(days=31)
        print(f"sweep a month later removes {await inbox.sweep(now=month_later)} rows")
        await db.close()


if __name__ == "__main__":
    asyncio.run(main())
