"""The scrape-time collector: turns a RuntimeMetrics' plain counters into metric families.

Scrapes usually run on the metrics server's thread while the event loop keeps counting:
every dict is copied (atomic under the GIL) before it is walked.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    Sample,
)

from ._logging import get_logger

if TYPE_CHECKING:
    from ._metrics import RuntimeMetrics

__all__ = ["RuntimeCollector"]

_log = get_logger("dovecote.metrics")


class RuntimeCollector:
    """Builds every dovecote metric family from a RuntimeMetrics at scrape time."""

    def __init__(self, metrics: RuntimeMetrics) -> None:
        self._metrics = metrics

    def describe(self) -> Iterator[Metric]:
        # Lets the registry reject a second collector that claims one of our names.
        yield from _new_families()
        yield _gauge_mailbox_size()

    def collect(self) -> Iterator[Metric]:
        m = self._metrics
        stats = sorted(m._class_stats.copy().items())
        f = _new_families()
        for name, cls_stats in stats:
            f.processed.add_metric([name], cls_stats.processed)
            f.failures.add_metric([name], cls_stats.failed)
            f.restarts.add_metric([name], cls_stats.restarts)
            f.started.add_metric([name], cls_stats.started)
            f.stopped.add_metric([name], cls_stats.stopped)
            f.seconds.add_metric(
                [name],
                [(_le(bound), count) for bound, count in cls_stats.cumulative_buckets()],
                cls_stats.sampled_seconds,
            )
        for reason, count in sorted(m._dead_letter_counts.copy().items()):
            f.dead_letters.add_metric([reason], count)
        for (cls, path, policy), count in sorted(m._drop_counts.copy().items()):
            f.dropped.add_metric([cls, path, policy], count)
        yield from f
        sizes = self._mailbox_sizes([name for name, _ in stats])
        if sizes is not None:
            yield sizes

    def _mailbox_sizes(self, known_classes: list[str]) -> GaugeMetricFamily | None:
        source = self._metrics._size_source
        if source is None:
            return None
        totals = dict.fromkeys(known_classes, 0)
        per_path: dict[tuple[str, str], int] = {}
        try:
            rows = list(source())
            # read after the source ran: it may have tracked new paths just now
            tracked = self._metrics._tracked_paths.copy()
            for actor_class, path, size in rows:
                totals[actor_class] = totals.get(actor_class, 0) + size
                if path is not None and path in tracked:
                    key = (actor_class, path)
                    per_path[key] = per_path.get(key, 0) + size
        except Exception:
            # A broken source must not take the other families down with it.
            _log.exception("mailbox size source failed; actor_mailbox_size skipped")
            return None
        family = _gauge_mailbox_size()
        for actor_class, total in sorted(totals.items()):
            family.add_metric([actor_class], total)
        for (actor_class, path), size in sorted(per_path.items()):
            # Same family, wider label set: only tracked actors get a path label.
            family.samples.append(
                Sample(family.name, {"actor_class": actor_class, "path": path}, size)
            )
        return family


_CLASS = ["actor_class"]


class _Families(NamedTuple):
    processed: CounterMetricFamily
    failures: CounterMetricFamily
    restarts: CounterMetricFamily
    started: CounterMetricFamily
    stopped: CounterMetricFamily
    dead_letters: CounterMetricFamily
    dropped: CounterMetricFamily
    seconds: HistogramMetricFamily


def _new_families() -> _Families:
    """Fresh, empty families for every metric except the optional mailbox size gauge."""
    return _Families(
        processed=CounterMetricFamily(
            "actor_messages_processed_total",
            "User messages processed by actors of a class.",
            labels=_CLASS,
        ),
        failures=CounterMetricFamily(
            "actor_message_failures_total",
            "User messages whose handler raised, per actor class.",
            labels=_CLASS,
        ),
        restarts=CounterMetricFamily(
            "actor_restarts_total",
            "Actor restarts ordered by supervisors, per actor class.",
            labels=_CLASS,
        ),
        started=CounterMetricFamily(
            "actors_started_total",
            "Actor incarnations started, per actor class.",
            labels=_CLASS,
        ),
        stopped=CounterMetricFamily(
            "actors_stopped_total",
            "Actors stopped for good, per actor class.",
            labels=_CLASS,
        ),
        dead_letters=CounterMetricFamily(
            "actor_dead_letters_total",
            "Messages that reached no actor (recipient stopped or stopping), per reason.",
            labels=["reason"],
        ),
        dropped=CounterMetricFamily(
            "actor_mailbox_dropped_total",
            "Messages discarded by a bounded mailbox's overflow policy.",
            labels=["actor_class", "path", "policy"],
        ),
        seconds=HistogramMetricFamily(
            "actor_message_seconds",
            "Handler duration in seconds for a sample of messages (one in sample_every).",
            labels=_CLASS,
        ),
    )


def _gauge_mailbox_size() -> GaugeMetricFamily:
    return GaugeMetricFamily(
        "actor_mailbox_size",
        "Queued user messages, summed per actor class; tracked actors also per path.",
        labels=_CLASS,
    )


def _le(bound: float) -> str:
    return "+Inf" if bound == math.inf else repr(bound)
