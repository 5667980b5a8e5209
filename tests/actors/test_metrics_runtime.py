"""The prometheus metrics each system exposes in ``system.metrics``."""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Any

from actor_kit import (
    TIMEOUT,
    DeadLetterLog,
    Hold,
    Inbox,
    Recorder,
    metric_family_names,
    metric_samples,
    until_terminated,
    watch,
)
from prometheus_client import CollectorRegistry

from dovecote import Actor, ActorOptions, ActorSystem


class Metered(Actor):
    def on_receive(self, message: Any) -> Any:
        if message == "boom":
            raise RuntimeError("metered failure")
        return message


class MeteredSink(Recorder):
    pass


def class_labels(cls: type) -> set[str]:
    """The spellings we accept for an ``actor_class`` label value."""
    return {cls.__name__, cls.__qualname__, f"{cls.__module__}.{cls.__qualname__}"}


def value_for(registry: Any, name: str, cls: type, **labels: str) -> float:
    return sum(
        value
        for sample_labels, value in metric_samples(registry, name)
        if sample_labels.get("actor_class") in class_labels(cls)
        and all(sample_labels.get(k) == v for k, v in labels.items())
    )


async def test_the_metrics_registry_is_a_prometheus_registry_per_system(system):
    assert isinstance(system.metrics, CollectorRegistry)
    async with ActorSystem("other") as other:
        assert other.metrics is not system.metrics


async def test_every_documented_metric_is_exported(system):
    ref = system.spawn(Metered, "m")
    for i in range(100):
        ref.tell(i)
    await ref.ask("barrier", timeout=TIMEOUT)
    names = metric_family_names(system.metrics)
    for name in [
        "actor_mailbox_size",
        "actor_mailbox_dropped_total",
        "actor_messages_processed_total",
        "actor_message_seconds",
        "actor_restarts_total",
        "actor_dead_letters_total",
    ]:
        # a counter family is named without its _total suffix; its samples carry it
        assert name in names or name.removesuffix("_total") in names, name


async def test_processed_messages_are_counted_per_actor_class(system):
    refs = [system.spawn(Metered) for _ in range(3)]
    before = value_for(system.metrics, "actor_messages_processed_total", Metered)
    for ref in refs:
        for i in range(10):
            ref.tell(i)
    for ref in refs:
        await ref.ask("barrier", timeout=TIMEOUT)
    after = value_for(system.metrics, "actor_messages_processed_total", Metered)
    assert after - before == 33
    # one series per class, not per actor
    series = [
        labels
        for labels, _ in metric_samples(system.metrics, "actor_messages_processed_total")
        if labels.get("actor_class") in class_labels(Metered)
    ]
    assert len(series) == 1
    assert "path" not in series[0]


async def test_restarts_are_counted(system):
    ref = system.spawn(Metered, "m")
    for _ in range(3):
        ref.tell("boom")
    await ref.ask("barrier", timeout=TIMEOUT)
    assert value_for(system.metrics, "actor_restarts_total", Metered) == 3


async def test_dead_letters_are_counted_in_the_metrics_too(system):
    ref = system.spawn(Metered, "m")
    terminated = await watch(system, ref)
    ref.stop()
    await until_terminated(terminated, ref)
    dead = DeadLetterLog(system)
    for i in range(4):
        ref.tell(i)
    await dead.wait_count(4)
    total = sum(v for _, v in metric_samples(system.metrics, "actor_dead_letters_total"))
    assert total == system.dead_letters_count == 4


async def test_drops_are_counted_per_actor_class_path_and_policy(system):
    inbox = Inbox()
    options = ActorOptions.create().with_mailbox_capacity(2).with_mailbox_overflow("drop-new")
    ref = system.spawn(lambda: MeteredSink(inbox), "sink", options)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    for i in range(7):
        ref.tell(i)
    hold.release.set()
    await inbox.wait_count(2)
    samples = [
        (labels, value)
        for labels, value in metric_samples(system.metrics, "actor_mailbox_dropped_total")
        if labels.get("path") == "/user/sink"
    ]
    assert len(samples) == 1
    labels, value = samples[0]
    assert value == 5
    assert labels["policy"] == "drop-new"
    assert labels["actor_class"] in class_labels(MeteredSink)


async def test_drop_head_drops_are_labelled_with_their_policy(system):
    inbox = Inbox()
    options = ActorOptions.create().with_mailbox_capacity(1)
    ref = system.spawn(lambda: MeteredSink(inbox), "fresh", options)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    for i in range(4):
        ref.tell(i)
    hold.release.set()
    await inbox.wait_count(1)
    assert inbox.items == [3]
    assert (
        value_for(
            system.metrics,
            "actor_mailbox_dropped_total",
            MeteredSink,
            path="/user/fresh",
            policy="drop-head",
        )
        == 3
    )


async def test_mailbox_size_reports_what_is_queued(system):
    inbox = Inbox()
    ref = system.spawn(lambda: MeteredSink(inbox), "queue")
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    for i in range(5):
        ref.tell(i)
    sizes = [
        value
        for labels, value in metric_samples(system.metrics, "actor_mailbox_size")
        if labels.get("actor_class") in class_labels(MeteredSink) and "path" not in labels
    ]
    assert sum(sizes) == 5
    # an ordinary actor gets no per-path series
    assert not any(
        labels.get("path") == "/user/queue"
        for labels, _ in metric_samples(system.metrics, "actor_mailbox_size")
    )
    hold.release.set()
    await inbox.wait_count(5)


async def test_an_actor_past_the_warning_mark_gets_a_per_path_mailbox_size_series(system):
    inbox = Inbox()
    ref = system.spawn(lambda: MeteredSink(inbox), "backlog")
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    try:
        for i in range(10_000):
            ref.tell(i)
        per_path = [
            value
            for labels, value in metric_samples(system.metrics, "actor_mailbox_size")
            if labels.get("path") == "/user/backlog"
        ]
        assert per_path == [10_000]
    finally:
        hold.release.set()
    await inbox.wait_count(10_000, timeout=5.0)


async def test_message_durations_are_sampled_into_a_histogram(system):
    ref = system.spawn(Metered, "m")
    for i in range(640):
        ref.tell(i)
    await ref.ask("barrier", timeout=TIMEOUT)
    counts = [
        value
        for labels, value in metric_samples(system.metrics, "actor_message_seconds_count")
        if labels.get("actor_class") in class_labels(Metered)
    ]
    assert sum(counts) >= 1
    assert sum(counts) <= 641


def _sampled(system: ActorSystem) -> float:
    return sum(
        value
        for labels, value in metric_samples(system.metrics, "actor_message_seconds_count")
        if labels.get("actor_class") in class_labels(Metered)
    )


async def test_sample_every_one_times_every_message() -> None:
    async with ActorSystem("every", metrics_sample_every=1) as system:
        ref = system.spawn(Metered, "m")
        for i in range(250):
            ref.tell(i)
        await ref.ask("barrier", timeout=TIMEOUT)
        assert _sampled(system) == 251


async def test_one_message_per_turn_is_sampled_one_in_n() -> None:
    async with ActorSystem("sparse", metrics_sample_every=8) as system:
        ref = system.spawn(Metered, "m")
        for i in range(80):
            await ref.ask(i, timeout=TIMEOUT)  # each ask is a turn of its own
        assert 9 <= _sampled(system) <= 11


async def test_a_busy_turn_is_sampled_at_most_once() -> None:
    async with ActorSystem("busy", metrics_sample_every=8, throughput=100) as system:
        ref = system.spawn(Metered, "m")
        await ref.ask("warm up", timeout=TIMEOUT)
        before = _sampled(system)
        for i in range(1_000):
            ref.tell(i)
        await ref.ask("barrier", timeout=TIMEOUT)
        # ~11 turns of up to 100 messages: one sample each at most, not 1_000 / 8
        assert 1 <= _sampled(system) - before <= 12


async def test_serve_metrics_serves_the_registry_over_http(system):
    from dovecote.observability import serve_metrics

    ref = system.spawn(Metered, "m")
    await ref.ask("x", timeout=TIMEOUT)
    server = serve_metrics(system, 0)
    try:
        url = f"http://127.0.0.1:{server.port}/metrics"

        def fetch() -> str:
            with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
                return response.read().decode()

        text = await asyncio.to_thread(fetch)
    finally:
        server.close()
    assert "actor_messages_processed_total" in text


async def test_a_mailbox_reaching_ten_thousand_logs_a_warning_naming_the_actor(system):
    from structlog.testing import capture_logs

    inbox = Inbox()
    ref = system.spawn(lambda: MeteredSink(inbox), "growing")
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    try:
        with capture_logs() as logs:
            for i in range(9_999):
                ref.tell(i)
            before = len(logs)
            ref.tell(9_999)  # the 10_000th queued message
            at_mark = logs[before:]
            for i in range(10_000, 20_000):
                ref.tell(i)
    finally:
        hold.release.set()
    assert before == 0
    assert len(at_mark) == 1
    assert "/user/growing" in at_mark[0].values()
    # and again at the doubling
    assert len(logs) == 2
    await inbox.wait_count(20_000, timeout=5.0)


async def test_a_failing_priority_for_is_logged_once_per_actor(system):
    from structlog.testing import capture_logs

    from dovecote import PriorityMailbox

    options = ActorOptions.create().with_mailbox(
        lambda: PriorityMailbox(priority_for=lambda m: 0 if isinstance(m, Hold) else m["urgency"])
    )
    inbox = Inbox()
    ref = system.spawn(lambda: MeteredSink(inbox), "triage", options)
    hold = Hold()
    ref.tell(hold)
    await hold.wait_started()
    with capture_logs() as logs:
        for i in range(5):
            ref.tell(i)  # every one makes priority_for raise
    hold.release.set()
    await inbox.wait_count(5)
    assert inbox.items == [0, 1, 2, 3, 4]
    assert len(logs) == 1
