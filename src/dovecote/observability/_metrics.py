"""Per-system runtime metrics: plain counters on the hot path, exported on scrape.

The runtime bumps plain ``int`` attributes (``stats.processed += 1``) and plain
dicts; nothing prometheus-related runs per message. One custom collector turns
that state into metric families when the registry is collected (a scrape).

Scrapes usually run on the metrics server's thread while the event loop keeps
counting. The collector copies each dict (``dict.copy()`` is atomic under the
GIL) before walking it, so a scrape never trips over a concurrent insert; a
scrape may be one observation behind, never inconsistent in a harmful way.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from typing import Any, TypeAlias

from prometheus_client.core import (
    CollectorRegistry,
)

from dovecote._errors import OptionsError

from ._collector import RuntimeCollector

__all__ = [
    "DEFAULT_MESSAGE_SECONDS_BUCKETS",
    "ClassStats",
    "MailboxSizeSource",
    "RuntimeMetrics",
]

# fmt: off
DEFAULT_MESSAGE_SECONDS_BUCKETS: tuple[float, ...] = (
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)
# fmt: on
"""Upper bounds (seconds) of ``actor_message_seconds``: 50 µs to 10 s, roughly 1-2.5-5 steps.

Most handlers finish in microseconds to a few milliseconds; the upper buckets
catch handlers that block or await I/O. ``+Inf`` is always added.
"""

MailboxSizeSource: TypeAlias = Callable[[], Iterable[tuple[str, str | None, int]]]
"""Called at scrape time; yields ``(actor_class, path or None, queued messages)`` rows."""


class ClassStats:
    """Counters for one actor class, bumped directly by the runtime.

    ``processed``, ``failed``, ``restarts``, ``started`` and ``stopped`` are plain
    ints: increment them in place. The handler-duration histogram lives here too
    as plain bucket counts (see :meth:`observe_seconds`).
    """

    __slots__ = (
        "_bounds",
        "_bucket_counts",
        "_seconds_sum",
        "actor_class",
        "failed",
        "processed",
        "restarts",
        "started",
        "stopped",
    )

    def __init__(
        self, actor_class: str, buckets: Sequence[float] = DEFAULT_MESSAGE_SECONDS_BUCKETS
    ) -> None:
        self.actor_class = actor_class
        self.processed = 0
        self.failed = 0
        self.restarts = 0
        self.started = 0
        self.stopped = 0
        self._bounds = _validated_buckets(buckets)
        # One count per bound plus a final +Inf slot; not cumulative (that is done on export).
        self._bucket_counts = [0] * (len(self._bounds) + 1)
        self._seconds_sum = 0.0

    def observe_seconds(self, seconds: float) -> None:
        """Record one sampled handler duration (seconds) in the histogram."""
        self._bucket_counts[bisect_left(self._bounds, seconds)] += 1
        self._seconds_sum += seconds

    @property
    def buckets(self) -> tuple[float, ...]:
        """The histogram's upper bounds, without ``+Inf``."""
        return self._bounds

    @property
    def sampled_count(self) -> int:
        """How many handler durations were observed."""
        return sum(self._bucket_counts)

    @property
    def sampled_seconds(self) -> float:
        """Sum of the observed handler durations, in seconds."""
        return self._seconds_sum

    def cumulative_buckets(self) -> list[tuple[float, int]]:
        """``(upper bound, observations <= bound)`` pairs, ending with ``(inf, count)``."""
        counts = self._bucket_counts.copy()
        running = 0
        pairs: list[tuple[float, int]] = []
        for bound, count in zip((*self._bounds, math.inf), counts, strict=True):
            running += count
            pairs.append((bound, running))
        return pairs

    def __repr__(self) -> str:
        return (
            f"ClassStats({self.actor_class!r}, processed={self.processed}, "
            f"failed={self.failed}, restarts={self.restarts}, "
            f"started={self.started}, stopped={self.stopped})"
        )


class RuntimeMetrics(CollectorRegistry):
    """The metrics of one actor system; it *is* a prometheus ``CollectorRegistry``.

    ``get_sample_value`` and ``generate_latest`` work on it directly. Counters are
    kept per actor class (label ``actor_class``); per-actor series (label
    ``path``) exist only for mailbox drops and for tracked paths (actors whose
    queue crossed the growth warning mark), so a system with a million ordinary
    actors still exports a handful of series; they go when their actor stops
    (:meth:`forget_path`).

    *sample_every* (default 32) is the histogram sampling rate: once N messages have
    gone by, the runtime times the first message of the next turn (at most one per
    turn; N=1 times every message) and reports it with
    :meth:`observe_message_seconds`, so ``actor_message_seconds_count`` is about
    ``processed / sample_every`` for actors handling a few messages per turn, and lower
    for busy ones.
    *buckets* are the histogram bounds (:data:`DEFAULT_MESSAGE_SECONDS_BUCKETS`).
    """

    def __init__(
        self,
        system_name: str,
        *,
        sample_every: int = 32,
        buckets: Sequence[float] = DEFAULT_MESSAGE_SECONDS_BUCKETS,
    ) -> None:
        super().__init__()
        if isinstance(sample_every, bool) or not isinstance(sample_every, int) or sample_every < 1:
            raise OptionsError(f"sample_every must be an int >= 1, got {sample_every!r}")
        self.system_name = system_name
        self._sample_every = sample_every
        self._bounds = _validated_buckets(buckets)
        self._class_stats: dict[str, ClassStats] = {}
        self._drop_counts: dict[tuple[str, str, str], int] = {}
        self._drop_keys_by_path: dict[str, list[tuple[str, str, str]]] = {}
        self._dead_letter_counts: dict[str, int] = {}
        self._tracked_paths: dict[str, str] = {}
        self._size_source: MailboxSizeSource | None = None
        self.register(RuntimeCollector(self))

    @property
    def sample_every(self) -> int:
        """The histogram samples one message in this many."""
        return self._sample_every

    @property
    def buckets(self) -> tuple[float, ...]:
        """Upper bounds of ``actor_message_seconds``, without ``+Inf``."""
        return self._bounds

    def class_stats(self, actor_class: str) -> ClassStats:
        """The counters of *actor_class*, created on first use and cached."""
        stats = self._class_stats.get(actor_class)
        if stats is None:
            stats = self._class_stats[actor_class] = ClassStats(actor_class, self._bounds)
        return stats

    def record_drop(self, actor_class: str, path: str, policy: str) -> None:
        """Count one message discarded by *path*'s overflow *policy*."""
        key = (actor_class, path, str(policy))
        count = self._drop_counts.get(key)
        if count is None:
            self._drop_keys_by_path.setdefault(path, []).append(key)
            count = 0
        self._drop_counts[key] = count + 1

    def record_dead_letter(self, reason: str) -> None:
        """Count one dead letter for *reason*."""
        self._dead_letter_counts[reason] = self._dead_letter_counts.get(reason, 0) + 1

    def observe_message_seconds(self, actor_class: str, seconds: float) -> None:
        """Record the duration of one sampled message (see *sample_every*)."""
        self.class_stats(actor_class).observe_seconds(seconds)

    def set_mailbox_size_source(self, source: MailboxSizeSource | None) -> None:
        """Set (or clear, with ``None``) the callable that reports mailbox sizes on scrape.

        Each row is ``(actor_class, path or None, size)``; every queued message
        must appear in exactly one row. Rows add up to ``actor_mailbox_size
        {actor_class}``; a row whose path is tracked also gets its own
        ``{actor_class, path}`` series. Untracked actors may be reported one row
        each or pre-summed with path ``None``. The source may be called from the
        metrics server's thread. Without a source the family is not exported.
        """
        self._size_source = source

    def track_path(self, actor_class: str, path: str) -> None:
        """Give *path* its own ``actor_mailbox_size`` series (its queue grew past the mark)."""
        self._tracked_paths[path] = actor_class

    def untrack_path(self, path: str) -> None:
        """Stop the per-path mailbox size series of *path* (no error if untracked)."""
        self._tracked_paths.pop(path, None)

    def forget_path(self, path: str) -> None:
        """The actor at *path* has stopped: remove every per-path series it had.

        Its ``actor_mailbox_dropped_total`` counts move to the series of its class
        with an empty ``path`` (drops of actors that are gone), so a class's total
        never goes down, and short-lived actors leave no series behind.
        """
        self._tracked_paths.pop(path, None)
        keys = self._drop_keys_by_path.pop(path, None)
        if not keys:
            return
        counts = self._drop_counts
        for key in keys:
            count = counts.pop(key, 0)
            if path:
                gone = (key[0], "", key[2])
                counts[gone] = counts.get(gone, 0) + count
            else:
                counts[key] = count

    @property
    def dead_letters_total(self) -> int:
        """Dead letters recorded so far, all reasons together."""
        return sum(self._dead_letter_counts.copy().values())

    @property
    def drops_total(self) -> int:
        """Messages discarded by overflow policies so far, all actors together."""
        return sum(self._drop_counts.copy().values())

    def snapshot(self) -> dict[str, Any]:
        """All counters as plain, JSON-friendly data (mailbox sizes excluded).

        Keys: ``system``, ``sample_every``, ``classes`` ({class: {processed,
        failed, restarts, started, stopped, sampled, sampled_seconds}}),
        ``dead_letters`` ({reason: n}), ``dead_letters_total``, ``drops`` (list
        of {actor_class, path, policy, count}), ``drops_total`` and
        ``tracked_paths`` ({path: class}).
        """
        drops = self._drop_counts.copy()
        dead_letters = self._dead_letter_counts.copy()
        return {
            "system": self.system_name,
            "sample_every": self._sample_every,
            "classes": {
                name: {
                    "processed": stats.processed,
                    "failed": stats.failed,
                    "restarts": stats.restarts,
                    "started": stats.started,
                    "stopped": stats.stopped,
                    "sampled": stats.sampled_count,
                    "sampled_seconds": stats.sampled_seconds,
                }
                for name, stats in sorted(self._class_stats.copy().items())
            },
            "dead_letters": dict(sorted(dead_letters.items())),
            "dead_letters_total": sum(dead_letters.values()),
            "drops": [
                {"actor_class": cls, "path": path, "policy": policy, "count": count}
                for (cls, path, policy), count in sorted(drops.items())
            ],
            "drops_total": sum(drops.values()),
            "tracked_paths": dict(sorted(self._tracked_paths.copy().items())),
        }

    def __repr__(self) -> str:
        return f"RuntimeMetrics({self.system_name!r}, sample_every={self._sample_every})"


def _validated_buckets(buckets: Sequence[float]) -> tuple[float, ...]:
    try:
        bounds = tuple(float(b) for b in buckets)
    except (TypeError, ValueError):
        raise OptionsError(f"histogram buckets must be numbers, got {buckets!r}") from None
    if not bounds or not all(math.isfinite(b) and b > 0 for b in bounds):
        raise OptionsError(f"histogram buckets must be finite and > 0, got {buckets!r}")
    if any(a >= b for a, b in pairwise(bounds)):
        raise OptionsError(f"histogram buckets must be strictly increasing, got {buckets!r}")
    return bounds
