"""What is measured: workloads, their metrics and sizes, the runtimes, and the targets."""

from __future__ import annotations

from dataclasses import dataclass, field

TIMES = "\u00d7"  # multiplication sign, for ratios
EN_DASH = "\u2013"

#: actors in the fan-out and ring workloads (fixed by the issue)
GROUP = 1_000


@dataclass(frozen=True)
class Metric:
    key: str
    unit: str
    higher_is_better: bool
    #: the hand-written actor's (workload, metric) this figure is divided by;
    #: None means the same workload and metric
    baseline: tuple[str, str] | None = None
    #: divide instead by this metric of the same cell (measured in the same run), e.g.
    #: a durable figure by the in-memory one beside it
    own_baseline: str | None = None
    #: False: the figure has no ratio (shown as —)
    ratio: bool = True


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    about: str
    metrics: tuple[Metric, ...]
    full: int
    quick: int
    dovecote_only: bool = False
    #: the runtime every ratio of this workload is divided by
    yardstick: str = "handwritten"
    #: the runtimes that run it (None: every actor runtime)
    runtimes: tuple[str, ...] | None = None
    #: warm-up size as a fraction of the measured size
    warmup: float = 0.1


_TELL = ("tell", "msgs_per_s")
_STOP = ("spawn", "stop_us")

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "tell",
            "(a) tell throughput, one actor",
            "N tells to one actor, then one ask that queues behind them; the clock stops "
            "when that ask is answered, so every message has been processed.",
            (Metric("msgs_per_s", "msgs/s", True),),
            full=500_000,
            quick=100_000,
        ),
        Workload(
            "ask",
            "(b) sequential ask round trips",
            "N asks, one at a time; each round trip timed alone for p50/p99.",
            (
                Metric("asks_per_s", "round trips/s", True),
                Metric("p50_us", "p50 µs", False),
                Metric("p99_us", "p99 µs", False),
            ),
            full=50_000,
            quick=10_000,
        ),
        Workload(
            "fanout",
            "(c) fan-out, 1,000 actors",
            "N messages told round-robin to 1,000 actors; each actor counts down its share "
            "and the last one to finish resolves a latch.",
            (Metric("msgs_per_s", "msgs/s", True),),
            full=500_000,
            quick=100_000,
        ),
        Workload(
            "spawn",
            "(d) spawn and stop N idle actors",
            "Spawn N actors and wait until the last one answers a ping (all started); RSS "
            "delta after gc gives KiB per idle actor; then stop them all and wait until "
            "every one is dead.",
            (
                Metric("spawn_us", "µs/spawn", False),
                Metric("idle_kib", "KiB/actor", False),
                Metric("stop_us", "µs/stop", False),
            ),
            full=20_000,
            quick=5_000,
            warmup=0.05,
        ),
        Workload(
            "ring",
            "(e) ring of 1,000 actors",
            "A token passed actor to actor around a ring of 1,000 for N hops.",
            (Metric("hops_per_s", "hops/s", True),),
            full=300_000,
            quick=100_000,
        ),
        Workload(
            "bounded",
            "(f) bounded drop-head mailbox tell",
            "As (a), to an actor with BoundedMailbox(capacity=N, drop-head): the bounded "
            "path without drops. `overflow_msgs_per_s` tells N into capacity 1,000 and checks "
            "that N - 1,000 were counted as dropped.",
            (
                Metric("msgs_per_s", "msgs/s", True, _TELL),
                Metric("overflow_msgs_per_s", "msgs/s (overflowing)", True, _TELL),
            ),
            full=500_000,
            quick=100_000,
            dovecote_only=True,
        ),
        Workload(
            "priority",
            "(f) priority mailbox tell",
            "As (a), to an actor with a PriorityMailbox over 4 priorities.",
            (Metric("msgs_per_s", "msgs/s", True, _TELL),),
            full=200_000,
            quick=50_000,
            dovecote_only=True,
        ),
        Workload(
            "stash",
            "(f) stash / unstash_all",
            "N tells that the actor stashes, one message that makes it unstash_all, then an "
            "ask: every message is handled twice (stashed, then processed).",
            (Metric("msgs_per_s", "msgs/s", True, _TELL),),
            full=300_000,
            quick=50_000,
            dovecote_only=True,
        ),
        Workload(
            "shutdown",
            "(f) shutdown of 10k / 100k / 1M idle actors",
            "A fresh system with K idle top-level actors (K = 10,000, 100,000 and, at full "
            "size only, 1,000,000; all started), then `await system.shutdown()`: µs per "
            "actor. Linear scaling means a flat row; the old children bookkeeping was "
            "O(N²). The ratio column compares with the hand-written actor's µs per stop "
            "when (d) ran too.",
            (
                Metric("shutdown_us_10k", "µs/actor (10k)", False, _STOP),
                Metric("shutdown_us_100k", "µs/actor (100k)", False, _STOP),
                Metric("shutdown_us_1m", "µs/actor (1M)", False, _STOP),
            ),
            full=1_000_000,
            quick=100_000,
            dovecote_only=True,
            warmup=0.0,
        ),
        Workload(
            "postoffice",
            "(f) post office post + fetch + manual ack",
            "N letters posted to a mem: address, then fetched one by one with "
            "manual_ack=True and acked.",
            (Metric("msgs_per_s", "letters/s", True, _TELL),),
            full=10_000,
            quick=2_000,
            dovecote_only=True,
        ),
    )
}

from ._plan_store import STORE_RUNTIME_INFO, STORE_RUNTIMES, STORE_TARGETS, STORE_WORKLOADS  # noqa: E402

WORKLOADS.update({w.name: w for w in STORE_WORKLOADS})
from ._plan_inbox import INBOX_TARGETS, INBOX_WORKLOADS  # noqa: E402

WORKLOADS.update({w.name: w for w in INBOX_WORKLOADS})

from ._plan_durable_actor import DURABLE_ACTOR_WORKLOADS  # noqa: E402

WORKLOADS.update({w.name: w for w in DURABLE_ACTOR_WORKLOADS})

#: every runtime, in table order; the first baseline is the yardstick
RUNTIMES: tuple[str, ...] = (
    "dovecote",
    "handwritten",
    "handwritten_lazy",
    "asyncio_queue",
    "pykka",
    "thespian_simple",
    "thespian_mp",
    "xoscar",
    *STORE_RUNTIMES,
)
YARDSTICK = "handwritten"
#: runtimes that run only the workloads that name them (store yardsticks)
NON_ACTOR_RUNTIMES = frozenset(STORE_RUNTIMES)


@dataclass(frozen=True)
class RuntimeInfo:
    about: str
    #: its actors run on the benchmark's event loop (so a uvloop cell means something)
    loop_bound: bool = True
    #: workloads it does not run (the cell would answer "unsupported")
    skips: frozenset[str] = frozenset()
    #: what the loop column says for a runtime that does not run on the loop
    off_loop: str = ""


RUNTIME_INFO: dict[str, RuntimeInfo] = {
    "dovecote": RuntimeInfo("dovecote as shipped (supervision, metrics, drop accounting on)"),
    "handwritten": RuntimeInfo("yardstick: a deque plus one task per actor, no features"),
    "handwritten_lazy": RuntimeInfo(
        "hand-written variant with no task per idle actor (drained via loop.call_soon)"
    ),
    "asyncio_queue": RuntimeInfo("one asyncio.Queue and one consumer task per actor"),
    "pykka": RuntimeInfo(
        "Pykka ThreadingActor (a thread per actor)", loop_bound=False, off_loop="threads"
    ),
    "thespian_simple": RuntimeInfo(
        "Thespian simpleSystemBase (in-process, synchronous)",
        loop_bound=False,
        off_loop="synchronous",
    ),
    "thespian_mp": RuntimeInfo(
        "Thespian multiprocTCPBase (a process per actor; small sizes)",
        loop_bound=False,
        skips=frozenset({"fanout", "ring"}),
        off_loop="processes",
    ),
    "xoscar": RuntimeInfo("xoscar actor pool in-process (n_process=0)"),
    **{name: RuntimeInfo(about, loop_bound=False, off_loop=off)
       for name, (about, off) in STORE_RUNTIME_INFO.items()},
}
LOOPS: tuple[str, ...] = ("asyncio", "uvloop")


@dataclass(frozen=True)
class Target:
    workload: str
    metric: str
    #: "ratio>=", "ratio<=" (figure / hand-written figure) or "abs>=", "abs<="
    kind: str
    value: float
    loop: str = "asyncio"
    label: str = field(default="")

    def passes(self, figure: float, slack: float = 1.0) -> bool:
        """True when `figure` (a ratio or an absolute value) meets the target.

        `slack` < 1 loosens the target, e.g. 0.8 for the regression guard: a `>=`
        target accepts 80% of its value, a `<=` target accepts value / 0.8.
        """
        if self.kind.endswith(">="):
            return figure >= self.value * slack
        return figure <= self.value / slack

    def describe(self, slack: float = 1.0) -> str:
        higher = self.kind.endswith(">=")
        value = self.value * slack if higher else self.value / slack
        unit = TIMES if self.kind.startswith("ratio") else ""
        return f"{'≥' if higher else '≤'} {value:g}{unit}"

    def describe_guard(self) -> str:
        return self.describe(0.8)


TARGETS: tuple[Target, ...] = (
    Target("tell", "msgs_per_s", "ratio>=", 0.6),
    Target("fanout", "msgs_per_s", "ratio>=", 0.6),
    Target("ring", "hops_per_s", "ratio>=", 0.6),
    Target("ask", "asks_per_s", "ratio>=", 0.6),
    Target("ask", "p50_us", "ratio<=", 1.5),
    Target("ask", "asks_per_s", "abs>=", 250_000, loop="uvloop"),
    Target("spawn", "spawn_us", "ratio<=", 1.5),
    Target("spawn", "idle_kib", "abs<=", 1.5),
    Target("spawn", "stop_us", "ratio<=", 3.0),
    Target("bounded", "msgs_per_s", "ratio>=", 0.4),
    Target("priority", "msgs_per_s", "ratio>=", 0.4),
    *(Target(*t) for t in STORE_TARGETS),
    *(Target(*t) for t in INBOX_TARGETS),
)


def metric(workload: str, key: str) -> Metric:
    for m in WORKLOADS[workload].metrics:
        if m.key == key:
            return m
    raise KeyError(f"{workload}.{key}")
