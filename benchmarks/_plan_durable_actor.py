"""The durable actor row: tell → handled through a SQLite store, beside an in-memory actor.

Imported by ``_plan`` (which merges it into its tables). Each durable figure's ratio is
taken against the in-memory actor's same figure, measured in the same run and cell; the
in-memory throughput against the hand-written actor's tell; in-memory latencies have none.
"""

from __future__ import annotations

from ._plan import Metric, Workload

_TELL = ("tell", "msgs_per_s")

DURABLE_ACTOR_WORKLOADS: tuple[Workload, ...] = (
    Workload(
        "durable_actor",
        "(h) durable actor (SQLite file): tell → handled",
        "N tells to one actor whose mailbox is a store mailbox (written in groups, claimed "
        "with the default claim_ahead=16, committed after on_receive); the clock stops when "
        "the N-th was handled. p50/p99: 300 single tells, each timed from tell to handled. "
        "FULL and NORMAL durability, then the same figures for an in-memory actor; each "
        "durable ratio divides by the in-memory figure of the same run.",
        (
            Metric("full_per_s", "msgs/s FULL", True, own_baseline="memory_per_s"),
            Metric("full_p50_us", "p50 µs FULL", False, own_baseline="memory_p50_us"),
            Metric("full_p99_us", "p99 µs FULL", False, own_baseline="memory_p99_us"),
            Metric("normal_per_s", "msgs/s NORMAL", True, own_baseline="memory_per_s"),
            Metric("normal_p50_us", "p50 µs NORMAL", False, own_baseline="memory_p50_us"),
            Metric("normal_p99_us", "p99 µs NORMAL", False, own_baseline="memory_p99_us"),
            Metric("memory_per_s", "msgs/s in memory", True, _TELL),
            Metric("memory_p50_us", "p50 µs in memory", False, ratio=False),
            Metric("memory_p99_us", "p99 µs in memory", False, ratio=False),
        ),
        full=5_000,
        quick=1_000,
        dovecote_only=True,
    ),
)
