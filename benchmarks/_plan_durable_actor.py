"""The durable actor row: tell → handled through a SQLite store, beside an in-memory actor.

Imported by ``_plan`` (which merges it into its tables). Its ratios are taken against
the hand-written actor's tell throughput, like the other dovecote-only rows; the figures
that matter are the durable ones beside the in-memory ones in the same cell.
"""

from __future__ import annotations

from ._plan import Metric, Workload

_TELL = ("tell", "msgs_per_s")

DURABLE_ACTOR_WORKLOADS: tuple[Workload, ...] = (
    Workload(
        "durable_actor",
        "(h) durable actor (SQLite file): tell → handled",
        "N tells to one actor whose mailbox is a store mailbox (written in groups, claimed "
        "claim_ahead=16, committed after on_receive); the clock stops when the N-th was "
        "handled. p50/p99: 300 single tells, each timed from tell to handled. FULL and "
        "NORMAL durability, then the same figures for an in-memory actor.",
        (
            Metric("full_per_s", "msgs/s FULL", True, _TELL),
            Metric("full_p50_us", "p50 µs FULL", False, _TELL),
            Metric("full_p99_us", "p99 µs FULL", False, _TELL),
            Metric("normal_per_s", "msgs/s NORMAL", True, _TELL),
            Metric("normal_p50_us", "p50 µs NORMAL", False, _TELL),
            Metric("normal_p99_us", "p99 µs NORMAL", False, _TELL),
            Metric("memory_per_s", "msgs/s in memory", True, _TELL),
            Metric("memory_p50_us", "p50 µs in memory", False, _TELL),
            Metric("memory_p99_us", "p99 µs in memory", False, _TELL),
        ),
        full=5_000,
        quick=1_000,
        dovecote_only=True,
    ),
)
