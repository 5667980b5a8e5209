"""The durable store rows: workloads, their yardstick (plain ``sqlite3``) and targets.

Imported by ``_plan`` (which merges them into its tables); kept apart so the store's
rows read at a glance. Each figure is divided by the plain-SQL figure doing the same
work at the same durability.
"""

from __future__ import annotations

from ._plan import Metric, Workload

_PLAIN_CLAIM_FULL = ("store_claim", "full_per_s")
_PLAIN_CLAIM_NORMAL = ("store_claim", "normal_per_s")

STORE_RUNTIMES: tuple[str, ...] = ("sqlite3",)
#: name -> (what it is, what the loop column says)
STORE_RUNTIME_INFO: dict[str, tuple[str, str]] = {
    "sqlite3": (
        "yardstick of the store rows: stdlib sqlite3 by hand, same schema and statements, "
        "WAL, synchronous on the caller's thread",
        "synchronous",
    ),
}

STORE_WORKLOADS: tuple[Workload, ...] = (
    Workload(
        "store_send",
        "(g) durable store (SQLite file): send",
        "FULL / NORMAL: one send per transaction (dovecote: one awaited send at a time; "
        "FULL runs N/10). group FULL / NORMAL: sqlite3 batches 100 sends per transaction; "
        "dovecote runs 256 concurrent senders whose sends share transactions (group "
        "commit). 100-byte payloads, WAL.",
        (
            Metric("full_per_s", "sends/s FULL", True),
            Metric("normal_per_s", "sends/s NORMAL", True),
            Metric("group_full_per_s", "sends/s group FULL", True),
            Metric("group_normal_per_s", "sends/s group NORMAL", True),
        ),
        full=20_000,
        quick=4_000,
        yardstick="sqlite3",
        runtimes=("dovecote", "sqlite3"),
    ),
    Workload(
        "store_claim",
        "(g) durable store (SQLite file): claim + commit",
        "A claim transaction then a commit transaction per message (FULL runs N/10, NORMAL "
        "N/2). dovecote: one consumer awaiting each call, then group: 8 concurrent "
        "consumers (their calls share transactions), each divided by the plain sqlite3 "
        "figure at the same durability (plain sqlite3 runs one at a time on its thread).",
        (
            Metric("full_per_s", "pairs/s FULL", True),
            Metric("normal_per_s", "pairs/s NORMAL", True),
            Metric("group_full_per_s", "pairs/s group FULL", True, _PLAIN_CLAIM_FULL),
            Metric("group_normal_per_s", "pairs/s group NORMAL", True, _PLAIN_CLAIM_NORMAL),
        ),
        full=20_000,
        quick=4_000,
        yardstick="sqlite3",
        runtimes=("dovecote", "sqlite3"),
    ),
)

#: (workload, metric, kind, value) for ``_plan.Target`` (issue 9's performance targets)
STORE_TARGETS: tuple[tuple[str, str, str, float], ...] = (
    ("store_send", "group_full_per_s", "ratio>=", 0.5),
    ("store_send", "group_full_per_s", "abs>=", 20_000),
    ("store_claim", "group_full_per_s", "ratio>=", 0.7),
    ("store_claim", "group_normal_per_s", "ratio>=", 0.7),
)

# the PostgreSQL row lives in its own module
from ._plan_store_pg import PG_RUNTIME_INFO, PG_RUNTIMES, PG_TARGETS, PG_WORKLOADS  # noqa: E402

STORE_RUNTIMES += PG_RUNTIMES
STORE_RUNTIME_INFO.update(PG_RUNTIME_INFO)
STORE_WORKLOADS += PG_WORKLOADS
STORE_TARGETS += PG_TARGETS
