"""RuntimeMetrics: plain counters, exported by one collector at scrape time."""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable

import pytest
from prometheus_client import Counter, generate_latest
from prometheus_client.core import CollectorRegistry
from structlog.testing import capture_logs

from dovecote._errors import OptionsError
from dovecote.observability import (
    DEFAULT_MESSAGE_SECONDS_BUCKETS,
    ClassStats,
    RuntimeMetrics,
)


class _Policy(enum.StrEnum):
    DROP_HEAD = "drop-head"


@pytest.fixture
def metrics() -> RuntimeMetrics:
    return RuntimeMetrics("demo")


def _scrape(metrics: RuntimeMetrics) -> str:
    return generate_latest(metrics).decode()


def test_runtime_metrics_is_a_collector_registry(metrics: RuntimeMetrics) -> None:
    assert isinstance(metrics, CollectorRegistry)
    assert metrics.system_name == "demo"


def test_class_stats_are_created_once_per_class_and_cached(metrics: RuntimeMetrics) -> None:
    first = metrics.class_stats("Echo")
    assert metrics.class_stats("Echo") is first
    assert metrics.class_stats("Other") is not first
    assert first.actor_class == "Echo"


def test_class_stats_are_plain_ints_on_a_slotted_object() -> None:
    stats = ClassStats("Echo")
    assert not hasattr(stats, "__dict__")
    stats.processed += 3
    stats.failed += 1
    assert (stats.processed, stats.failed, stats.restarts, stats.started, stats.stopped) == (
        3,
        1,
        0,
        0,
        0,
    )
    assert type(stats.processed) is int


def test_incremented_class_stats_appear_as_counters_at_scrape(metrics: RuntimeMetrics) -> None:
    stats = metrics.class_stats("Echo")
    stats.processed += 5
    stats.failed += 2
    stats.restarts += 1
    stats.started += 2
    stats.stopped += 1
    labels = {"actor_class": "Echo"}
    assert metrics.get_sample_value("actor_messages_processed_total", labels) == 5
    assert metrics.get_sample_value("actor_message_failures_total", labels) == 2
    assert metrics.get_sample_value("actor_restarts_total", labels) == 1
    assert metrics.get_sample_value("actors_started_total", labels) == 2
    assert metrics.get_sample_value("actors_stopped_total", labels) == 1


def test_a_scrape_reads_the_current_values_not_a_cached_copy(metrics: RuntimeMetrics) -> None:
    stats = metrics.class_stats("Echo")
    stats.processed += 1
    assert metrics.get_sample_value("actor_messages_processed_total", {"actor_class": "Echo"}) == 1
    stats.processed += 1
    assert metrics.get_sample_value("actor_messages_processed_total", {"actor_class": "Echo"}) == 2


def test_every_family_has_help_text_in_the_exposition(metrics: RuntimeMetrics) -> None:
    metrics.class_stats("Echo").processed += 1
    metrics.record_dead_letter("stopped")
    metrics.record_drop("Echo", "/user/echo", "drop-new")
    metrics.set_mailbox_size_source(lambda: [("Echo", None, 0)])
    families = {m.name: m for m in metrics.collect()}
    assert set(families) == {
        "actor_messages_processed",
        "actor_message_failures",
        "actor_restarts",
        "actors_started",
        "actors_stopped",
        "actor_dead_letters",
        "actor_mailbox_dropped",
        "actor_message_seconds",
        "actor_mailbox_size",
    }
    assert all(m.documentation for m in families.values())
    text = _scrape(metrics)
    for name in families:
        assert f"# HELP {name}" in text


def test_dead_letters_are_counted_per_reason_and_in_total(metrics: RuntimeMetrics) -> None:
    metrics.record_dead_letter("stopped")
    metrics.record_dead_letter("stopped")
    metrics.record_dead_letter("stop-leftover")
    assert metrics.dead_letters_total == 3
    assert metrics.get_sample_value("actor_dead_letters_total", {"reason": "stopped"}) == 2
    assert metrics.get_sample_value("actor_dead_letters_total", {"reason": "stop-leftover"}) == 1


def test_drops_are_counted_per_class_path_and_policy(metrics: RuntimeMetrics) -> None:
    metrics.record_drop("Echo", "/user/a", "drop-head")
    metrics.record_drop("Echo", "/user/a", _Policy.DROP_HEAD)
    metrics.record_drop("Echo", "/user/b", "drop-new")
    assert metrics.drops_total == 3
    value = metrics.get_sample_value(
        "actor_mailbox_dropped_total",
        {"actor_class": "Echo", "path": "/user/a", "policy": "drop-head"},
    )
    assert value == 2


def test_totals_start_at_zero(metrics: RuntimeMetrics) -> None:
    assert metrics.dead_letters_total == 0
    assert metrics.drops_total == 0


def test_sample_every_defaults_to_32() -> None:
    assert RuntimeMetrics("demo").sample_every == 32
    assert RuntimeMetrics("demo", sample_every=1).sample_every == 1


@pytest.mark.parametrize("bad", [0, -1, 2.0, "32", True, None])
def test_sample_every_must_be_an_int_of_at_least_one(bad: object) -> None:
    with pytest.raises(OptionsError):
        RuntimeMetrics("demo", sample_every=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [(), (0.1, 0.1), (0.5, 0.1), (0.0, 1.0), (1.0, math.inf), ("x",)])
def test_histogram_buckets_must_be_positive_finite_and_increasing(bad: tuple[object]) -> None:
    with pytest.raises(OptionsError):
        RuntimeMetrics("demo", buckets=bad)  # type: ignore[arg-type]


def test_default_buckets_span_sub_millisecond_to_seconds() -> None:
    assert DEFAULT_MESSAGE_SECONDS_BUCKETS[0] < 0.001
    assert DEFAULT_MESSAGE_SECONDS_BUCKETS[-1] >= 1.0
    assert list(DEFAULT_MESSAGE_SECONDS_BUCKETS) == sorted(set(DEFAULT_MESSAGE_SECONDS_BUCKETS))
    assert RuntimeMetrics("demo").buckets == DEFAULT_MESSAGE_SECONDS_BUCKETS


def test_sampled_durations_fill_cumulative_histogram_buckets() -> None:
    metrics = RuntimeMetrics("demo", buckets=(0.001, 0.01, 0.1))
    for seconds in (0.0005, 0.001, 0.005, 0.05, 3.0):
        metrics.observe_message_seconds("Echo", seconds)
    labels = {"actor_class": "Echo"}

    def bucket(le: str) -> float | None:
        return metrics.get_sample_value("actor_message_seconds_bucket", {**labels, "le": le})

    assert bucket("0.001") == 2  # a bound is inclusive (le = less or equal)
    assert bucket("0.01") == 3
    assert bucket("0.1") == 4
    assert bucket("+Inf") == 5
    assert metrics.get_sample_value("actor_message_seconds_count", labels) == 5
    total = metrics.get_sample_value("actor_message_seconds_sum", labels)
    assert total == pytest.approx(3.0565)


def test_histogram_is_exported_with_zero_counts_for_a_class_never_sampled(
    metrics: RuntimeMetrics,
) -> None:
    metrics.class_stats("Echo").processed += 1
    labels = {"actor_class": "Echo"}
    assert metrics.get_sample_value("actor_message_seconds_count", labels) == 0
    assert metrics.get_sample_value("actor_message_seconds_bucket", {**labels, "le": "+Inf"}) == 0


def test_observations_are_kept_on_the_class_stats(metrics: RuntimeMetrics) -> None:
    stats = metrics.class_stats("Echo")
    stats.observe_seconds(0.002)
    metrics.observe_message_seconds("Echo", 0.004)
    assert stats.sampled_count == 2
    assert stats.sampled_seconds == pytest.approx(0.006)
    assert stats.cumulative_buckets()[-1] == (math.inf, 2)


def test_mailbox_size_is_not_exported_without_a_source(metrics: RuntimeMetrics) -> None:
    metrics.class_stats("Echo").processed += 1
    assert "actor_mailbox_size" not in _scrape(metrics)


def test_mailbox_sizes_are_summed_per_class_at_scrape(metrics: RuntimeMetrics) -> None:
    rows = [("Echo", "/user/a", 3), ("Echo", "/user/b", 4), ("Sink", None, 10)]
    calls = 0

    def source() -> Iterable[tuple[str, str | None, int]]:
        nonlocal calls
        calls += 1
        return rows

    metrics.set_mailbox_size_source(source)
    assert calls == 0  # only called at scrape time
    assert metrics.get_sample_value("actor_mailbox_size", {"actor_class": "Echo"}) == 7
    assert metrics.get_sample_value("actor_mailbox_size", {"actor_class": "Sink"}) == 10
    assert calls == 2
    assert 'path="/user/a"' not in _scrape(metrics)  # untracked actors have no per-path series


def test_known_classes_without_live_actors_report_an_empty_mailbox(
    metrics: RuntimeMetrics,
) -> None:
    metrics.class_stats("Gone").stopped += 1
    metrics.set_mailbox_size_source(list)
    assert metrics.get_sample_value("actor_mailbox_size", {"actor_class": "Gone"}) == 0


def test_tracked_paths_get_their_own_mailbox_size_series(metrics: RuntimeMetrics) -> None:
    metrics.set_mailbox_size_source(lambda: [("Echo", "/user/big", 12_000), ("Echo", "/user/a", 5)])
    metrics.track_path("Echo", "/user/big")
    per_path = {"actor_class": "Echo", "path": "/user/big"}
    assert metrics.get_sample_value("actor_mailbox_size", per_path) == 12_000
    assert metrics.get_sample_value("actor_mailbox_size", {"actor_class": "Echo"}) == 12_005
    assert (
        metrics.get_sample_value("actor_mailbox_size", {"actor_class": "Echo", "path": "/user/a"})
        is None
    )

    metrics.untrack_path("/user/big")
    metrics.untrack_path("/user/never-tracked")
    assert metrics.get_sample_value("actor_mailbox_size", per_path) is None


def test_a_failing_size_source_skips_only_the_mailbox_size_family(
    metrics: RuntimeMetrics,
) -> None:
    def broken() -> Iterable[tuple[str, str | None, int]]:
        raise RuntimeError("boom")

    metrics.class_stats("Echo").processed += 1
    metrics.set_mailbox_size_source(broken)
    with capture_logs() as logs:
        text = _scrape(metrics)
    assert "actor_messages_processed_total" in text
    assert "actor_mailbox_size" not in text
    assert [entry["log_level"] for entry in logs] == ["error"]


def test_clearing_the_size_source_stops_the_family(metrics: RuntimeMetrics) -> None:
    metrics.set_mailbox_size_source(lambda: [("Echo", None, 1)])
    metrics.set_mailbox_size_source(None)
    assert "actor_mailbox_size" not in _scrape(metrics)


def test_the_registry_rejects_another_collector_claiming_a_dovecote_name(
    metrics: RuntimeMetrics,
) -> None:
    with pytest.raises(ValueError, match="actor_restarts"):
        Counter("actor_restarts_total", "clash", registry=metrics)


def test_systems_do_not_share_counters() -> None:
    one, two = RuntimeMetrics("one"), RuntimeMetrics("two")
    one.class_stats("Echo").processed += 1
    assert two.get_sample_value("actor_messages_processed_total", {"actor_class": "Echo"}) is None


def test_snapshot_returns_every_counter_as_plain_data(metrics: RuntimeMetrics) -> None:
    stats = metrics.class_stats("Echo")
    stats.processed += 4
    stats.failed += 1
    metrics.observe_message_seconds("Echo", 0.5)
    metrics.record_dead_letter("stopped")
    metrics.record_drop("Echo", "/user/a", _Policy.DROP_HEAD)
    metrics.track_path("Echo", "/user/a")

    snapshot = metrics.snapshot()

    assert snapshot == {
        "system": "demo",
        "sample_every": 32,
        "classes": {
            "Echo": {
                "processed": 4,
                "failed": 1,
                "restarts": 0,
                "started": 0,
                "stopped": 0,
                "sampled": 1,
                "sampled_seconds": 0.5,
            }
        },
        "dead_letters": {"stopped": 1},
        "dead_letters_total": 1,
        "drops": [{"actor_class": "Echo", "path": "/user/a", "policy": "drop-head", "count": 1}],
        "drops_total": 1,
        "tracked_paths": {"/user/a": "Echo"},
    }
    assert type(snapshot["drops"][0]["policy"]) is str


def test_snapshot_is_detached_from_later_updates(metrics: RuntimeMetrics) -> None:
    metrics.record_dead_letter("stopped")
    snapshot = metrics.snapshot()
    metrics.record_dead_letter("stopped")
    assert snapshot["dead_letters"] == {"stopped": 1}
