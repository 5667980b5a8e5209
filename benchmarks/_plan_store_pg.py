"""The PostgreSQL store row: its workload, its yardstick (plain ``asyncpg``) and targets.

Merged into the store rows by ``_plan_store``. Both sides run against the server named by
``DOVECOTE_TEST_POSTGRES_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``)
in a schema made for the cell; without a server the cells report "unavailable".
"""

from __future__ import annotations

from ._plan import Metric, Workload

PG_RUNTIMES: tuple[str, ...] = ("asyncpg",)
#: name -> (what it is, what the loop column says)
PG_RUNTIME_INFO: dict[str, tuple[str, str]] = {
    "asyncpg": (
        "yardstick of the PostgreSQL row: asyncpg by hand on the store's tables, one "
        "statement per send / claim / commit on 4 connections, no capacity, fencing or notify",
        "asyncio",
    ),
}

PG_WORKLOADS: tuple[Workload, ...] = (
    Workload(
        "store_pg",
        "(g) durable store (PostgreSQL): send, claim + commit",
        "send: N sends of 100 bytes by 4 concurrent senders (plain: 4 connections, one "
        "INSERT each; dovecote: PostgresStore with a 4-connection pool, concurrent sends "
        "share one statement). claim: 4 consumers claim and commit until the mailbox is "
        "empty (plain: UPDATE ... SKIP LOCKED then UPDATE; dovecote: claim() then commit()). "
        "synchronous_commit on (every commit waits for the WAL flush).",
        (
            Metric("send_per_s", "sends/s", True),
            Metric("claim_per_s", "pairs/s", True),
        ),
        full=4_000,
        quick=1_000,
        yardstick="asyncpg",
        runtimes=("dovecote", "asyncpg"),
        warmup=0.05,
    ),
)

#: (workload, metric, kind, value): issue 9's PostgreSQL targets
PG_TARGETS: tuple[tuple[str, str, str, float], ...] = (
    ("store_pg", "send_per_s", "ratio>=", 0.7),
    ("store_pg", "claim_per_s", "ratio>=", 0.7),
)
