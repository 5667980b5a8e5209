"""The inbox rows: Inbox.handle beside the same transaction without the inbox.

Imported by ``_plan`` (which merges them into its tables). Both figures of a ratio come
from one cell (plain and inbox alternate in rounds in one process), so these workloads
have no yardstick cell: the ratio is a metric of its own, checked with an ``abs>=``
target, and the yardstick column reads "—".
"""

from __future__ import annotations

from ._plan import TIMES, Metric, Workload

_HANDLE_ROWS: tuple[Workload, ...] = tuple(
    Workload(
        f"inbox_{backend}",
        f"(h) Inbox.handle on {title}",
        "N messages, each one transaction that inserts an order and updates a balance: "
        "through `Inbox.handle` (receive recorded, handler, marked processed) and, "
        "alternating with it in 20 rounds in the same process, the same transaction "
        f"without the inbox. {detail} `inbox_vs_plain` = the median over the rounds "
        "of handles/s ÷ plain txns/s "
        f"(the {TIMES} hand-written column does not apply).",
        (
            Metric("handles_per_s", "handles/s", True),
            Metric("plain_per_s", "txns/s without inbox", True),
            Metric("inbox_vs_plain", f"{TIMES} plain", True),
            *extra,
        ),
        full=full,
        quick=quick,
        dovecote_only=True,
        runtimes=("dovecote",),
    )
    for backend, title, detail, extra, full, quick in (
        (
            "sqlite",
            "SQLite",
            "aiosqlite, WAL, synchronous=FULL (the store's default); the last column "
            "repeats the pair with synchronous=NORMAL (no fsync: the inbox's CPU cost "
            "alone).",
            (Metric("inbox_vs_plain_normal", f"{TIMES} plain, sync=NORMAL", True),),
            4_000,
            1_000,
        ),
        (
            "postgres",
            "PostgreSQL",
            "asyncpg pool, DOVECOTE_TEST_POSTGRES_URL, server defaults.",
            (),
            2_000,
            500,
        ),
    )
)

INBOX_WORKLOADS: tuple[Workload, ...] = (
    *_HANDLE_ROWS,
    Workload(
        "durable_actor_inbox",
        "(h) exactly-once durable actor beside the at-least-once one (SQLite file, FULL)",
        "N tells to a durable actor that books each order into a ledger table in the "
        "store's own file: at least once with a plain transaction, exactly once through "
        "`Inbox.handle_delivery`; the clock stops when the N-th is booked. "
        "`once_vs_least` = exactly-once msgs/s ÷ at-least-once msgs/s.",
        (
            Metric("exactly_once_per_s", "msgs/s exactly once", True),
            Metric("at_least_once_per_s", "msgs/s at least once", True),
            Metric("once_vs_least", f"{TIMES} at-least-once", True),
        ),
        full=2_000,
        quick=400,
        dovecote_only=True,
        runtimes=("dovecote",),
    ),
)

#: (workload, metric, kind, value) for ``_plan.Target`` (issue 10: handle >= 0.7x plain)
INBOX_TARGETS: tuple[tuple[str, str, str, float], ...] = (
    ("inbox_sqlite", "inbox_vs_plain", "abs>=", 0.7),
    ("inbox_postgres", "inbox_vs_plain", "abs>=", 0.7),
)
