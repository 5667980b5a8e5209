"""Subscribers: subscribe vs fetch (seed 2), failures (3), retries (4), safety nets (6)."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Sequence

import pytest
from postoffice_helpers import INBOX, within

from dovecote._errors import OptionsError
from dovecote.addressing import (
    DeliveryOutcome,
    DeliveryResult,
    MailMessage,
    ManualClock,
    MemoryProvider,
    PostOffice,
    RetriableError,
    RetryPolicy,
    is_retriable_error,
)


class Recorder:
    """A subscriber callback that records calls and fails on demand."""

    def __init__(self, *failures: BaseException | None) -> None:
        self.failures = list(failures)
        self.calls: list[MailMessage] = []
        self.called = asyncio.Event()

    async def __call__(self, message: MailMessage) -> None:
        self.calls.append(message)
        self.called.set()
        failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            raise failure


class HookedProvider(MemoryProvider):
    """Records the dead-letter and retry-exhausted hooks."""

    def __init__(self, clock: ManualClock, **options: object) -> None:
        from dovecote.addressing import MemoryBus

        super().__init__(MemoryBus(), clock=clock, **options)  # type: ignore[arg-type]
        self.dead: list[tuple[MailMessage, list[DeliveryResult]]] = []
        self.exhausted: list[int] = []

    async def _on_delivery_dead_lettered(
        self, message: MailMessage, failed: Sequence[DeliveryResult]
    ) -> None:
        self.dead.append((message, list(failed)))
        await super()._on_delivery_dead_lettered(message, failed)

    async def _on_retry_exhausted(self, message: MailMessage, attempts: int) -> None:
        self.exhausted.append(attempts)


def retriable() -> RetriableError:
    return RetriableError("upstream down")


# -- seed 2: subscribe vs fetch -------------------------------------------------------------


async def test_awaiting_subscribe_means_the_subscription_is_established(
    office: PostOffice,
) -> None:
    recorder = Recorder()
    await office.subscribe(INBOX, recorder)
    await office.post(to=INBOX, body="hello")
    await within(recorder.called.wait())
    assert recorder.calls[0].body == "hello"


async def test_a_message_handed_to_subscribers_is_not_queued_so_fetch_gets_nothing(
    office: PostOffice,
) -> None:
    await office.subscribe(INBOX, Recorder())
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    assert await office.fetch(INBOX) is None
    assert (await office.status(INBOX)).unread_count == 0


async def test_a_message_queued_without_subscribers_is_not_replayed_to_a_later_one(
    office: PostOffice,
) -> None:
    await office.post(to=INBOX, body=1)
    recorder = Recorder()
    await office.subscribe(INBOX, recorder)
    await within(office.wait_settled())
    assert recorder.calls == []
    fetched = await office.fetch(INBOX)
    assert fetched is not None
    assert fetched.body == 1


async def test_subscribing_is_a_broadcast_with_one_delivery_per_subscriber(
    office: PostOffice,
) -> None:
    first, second = Recorder(), Recorder()
    await office.subscribe(INBOX, first)
    await office.subscribe(INBOX, second)
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    assert len(first.calls) == len(second.calls) == 1


async def test_an_unsubscribed_callback_gets_nothing_and_mail_queues_again(
    office: PostOffice,
) -> None:
    recorder = Recorder()
    subscription = await office.subscribe(INBOX, recorder)
    await subscription.unsubscribe()
    await subscription.unsubscribe()
    await office.post(to=INBOX, body=1)
    assert recorder.calls == []
    assert (await office.status(INBOX)).unread_count == 1


# -- seed 3: when a subscriber fails --------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        RetriableError("x"),
        type("Flagged", (Exception,), {"is_retriable": True})(),
        type("Coded", (Exception,), {"code": 503})(),
        type("Coded", (Exception,), {"code": 504})(),
        type("Coded", (Exception,), {"code": "ECONNRESET"})(),
        type("Coded", (Exception,), {"code": "ETIMEDOUT"})(),
        OSError(errno.ECONNRESET, "reset"),
        TimeoutError(),
    ],
)
def test_retriable_means_the_flag_or_a_transient_code(error: Exception) -> None:
    assert is_retriable_error(error)


@pytest.mark.parametrize(
    "error",
    [ValueError("bad payload"), type("Coded", (Exception,), {"code": 500})(), KeyError("x")],
)
def test_anything_else_is_fatal(error: Exception) -> None:
    assert not is_retriable_error(error)


async def test_a_retriable_failure_requeues_the_message_for_fetch(office: PostOffice) -> None:
    await office.subscribe(INBOX, Recorder(retriable()))
    await office.post(to=INBOX, body="order")
    await within(office.wait_settled())
    fetched = await office.fetch(INBOX)
    assert fetched is not None
    assert fetched.body == "order"


async def test_a_fatal_failure_discards_the_message(office: PostOffice) -> None:
    await office.subscribe(INBOX, Recorder(ValueError("bad payload")))
    await office.post(to=INBOX, body="order")
    await within(office.wait_settled())
    status = await office.status(INBOX)
    assert (status.unread_count, status.in_flight_count) == (0, 0)


async def test_when_some_delivery_succeeded_the_message_stays_handled(
    clock: ManualClock,
) -> None:
    provider = HookedProvider(clock)
    office = PostOffice([provider])
    await office.subscribe(INBOX, Recorder())
    await office.subscribe(INBOX, Recorder(retriable()))
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    assert (await office.status(INBOX)).unread_count == 0
    [(_, failed)] = provider.dead
    assert [result.outcome for result in failed] == [DeliveryOutcome.RETRIABLE]


async def test_when_every_delivery_failed_retriably_one_copy_goes_to_the_head_of_the_queue(
    office: PostOffice,
) -> None:
    await office.post(to=INBOX, body="older")
    for _ in range(3):
        await office.subscribe(INBOX, Recorder(retriable()))
    await office.post(to=INBOX, body="failed")
    await within(office.wait_settled())
    assert (await office.status(INBOX)).unread_count == 2
    head = await office.fetch(INBOX)
    assert head is not None
    assert head.body == "failed"


async def test_when_every_delivery_failed_fatally_the_message_is_discarded(
    clock: ManualClock,
) -> None:
    provider = HookedProvider(clock)
    office = PostOffice([provider])
    await office.subscribe(INBOX, Recorder(ValueError("a")))
    await office.subscribe(INBOX, Recorder(ValueError("b")))
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    assert (await office.status(INBOX)).unread_count == 0
    assert len(provider.dead) == 1


async def test_post_resolves_at_dispatch_not_at_settlement(office: PostOffice) -> None:
    gate = asyncio.Event()

    async def slow(message: MailMessage) -> None:
        await gate.wait()

    await office.subscribe(INBOX, slow)
    await office.post(to=INBOX, body=1)
    assert (await office.status(INBOX)).in_flight_count == 1
    gate.set()
    await within(office.wait_settled())
    assert (await office.status(INBOX)).in_flight_count == 0


async def test_a_failing_dead_letter_hook_cannot_swallow_the_disposition(
    clock: ManualClock,
) -> None:
    class BrokenHook(MemoryProvider):
        async def _on_delivery_dead_lettered(
            self, message: MailMessage, failed: Sequence[DeliveryResult]
        ) -> None:
            raise RuntimeError("hook down")

    office = PostOffice([BrokenHook.create_isolated(clock=clock)])
    await office.subscribe(INBOX, Recorder(ValueError("bad")))
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    status = await office.status(INBOX)
    assert (status.unread_count, status.in_flight_count) == (0, 0)


# -- seed 4: retrying a failed subscriber ---------------------------------------------------


def test_retry_policy_is_validated() -> None:
    with pytest.raises(OptionsError):
        RetryPolicy(max_attempts=0)
    with pytest.raises(OptionsError):
        RetryPolicy(max_attempts=3, base_delay=-1)
    assert RetryPolicy(3, 1.0).delay_after(1) == 1.0
    assert RetryPolicy(3, 1.0).delay_after(3) == 4.0


async def test_without_a_retry_policy_the_callback_is_not_called_again(
    office: PostOffice,
) -> None:
    recorder = Recorder(retriable())
    await office.subscribe(INBOX, recorder)
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    assert len(recorder.calls) == 1


async def test_with_a_retry_policy_the_callback_is_retried_with_exponential_backoff(
    clock: ManualClock,
) -> None:
    provider = HookedProvider(
        clock, retry=RetryPolicy(max_attempts=3, base_delay=1.0), delivery_settle_timeout=0
    )
    office = PostOffice([provider])
    recorder = Recorder(retriable(), retriable())
    await office.subscribe(INBOX, recorder)
    await office.post(to=INBOX, body=1)
    await within(clock.wait_for_sleepers(1))
    assert len(recorder.calls) == 1
    clock.advance(0.99)
    assert len(recorder.calls) == 1
    clock.advance(0.01)
    await within(clock.wait_for_sleepers(1))
    assert len(recorder.calls) == 2
    clock.advance(1.99)
    assert clock.sleeper_count == 1
    clock.advance(0.01)
    await within(office.wait_settled())
    assert len(recorder.calls) == 3
    assert (await office.status(INBOX)).unread_count == 0
    assert provider.exhausted == []


async def test_only_the_failing_subscriber_is_retried(clock: ManualClock) -> None:
    provider = HookedProvider(clock, retry=RetryPolicy(3, 1.0), delivery_settle_timeout=0)
    office = PostOffice([provider])
    steady, flaky = Recorder(), Recorder(retriable())
    await office.subscribe(INBOX, steady)
    await office.subscribe(INBOX, flaky)
    await office.post(to=INBOX, body=1)
    await within(clock.wait_for_sleepers(1))
    clock.advance(1.0)
    await within(office.wait_settled())
    assert (len(steady.calls), len(flaky.calls)) == (1, 2)
    assert provider.dead == []


async def test_an_exhausted_budget_requeues_one_copy_when_nobody_handled_it(
    clock: ManualClock,
) -> None:
    provider = HookedProvider(clock, retry=RetryPolicy(2, 1.0), delivery_settle_timeout=0)
    office = PostOffice([provider])
    failing = [Recorder(retriable(), retriable()) for _ in range(3)]
    for recorder in failing:
        await office.subscribe(INBOX, recorder)
    await office.post(to=INBOX, body=1)
    await within(clock.wait_for_sleepers(3))
    clock.advance(1.0)
    await within(office.wait_settled())
    assert provider.exhausted == [2, 2, 2]
    assert (await office.status(INBOX)).unread_count == 1


async def test_set_retry_policy_none_returns_to_the_default(clock: ManualClock) -> None:
    provider = HookedProvider(clock, retry=RetryPolicy(3, 1.0))
    provider.set_retry_policy(None)
    office = PostOffice([provider])
    recorder = Recorder(retriable())
    await office.subscribe(INBOX, recorder)
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    assert len(recorder.calls) == 1
    assert provider.retry_policy is None


async def test_each_attempt_carries_mbx_attempt_round_and_max_attempts(
    clock: ManualClock,
) -> None:
    provider = HookedProvider(clock, retry=RetryPolicy(2, 1.0), delivery_settle_timeout=0)
    office = PostOffice([provider])
    recorder = Recorder(retriable())
    await office.subscribe(INBOX, recorder)
    await office.post(to=INBOX, body=1)
    await within(clock.wait_for_sleepers(1))
    clock.advance(1.0)
    await within(office.wait_settled())
    stamps = [
        (m.headers["mbx-attempt"], m.headers["mbx-round"], m.headers["mbx-max-attempts"])
        for m in recorder.calls
    ]
    assert stamps == [("1", "1", "2"), ("2", "1", "2")]


async def test_mbx_round_accumulates_across_requeues_while_mbx_attempt_restarts(
    office: PostOffice,
) -> None:
    subscription = await office.subscribe(INBOX, Recorder(retriable()))
    await office.post(to=INBOX, body=1)
    await within(office.wait_settled())
    await subscription.unsubscribe()
    lease = await office.fetch(INBOX, manual_ack=True)
    assert lease is not None
    assert (lease.message.headers["mbx-round"], lease.message.headers["mbx-attempt"]) == (
        "2",
        "1",
    )
    assert await lease.ack("unhandled")
    again = await office.fetch(INBOX)
    assert again is not None
    assert again.headers["mbx-round"] == "3"


async def test_each_attempt_gets_its_own_copy_of_the_letter(clock: ManualClock) -> None:
    provider = HookedProvider(clock, retry=RetryPolicy(2, 1.0), delivery_settle_timeout=0)
    office = PostOffice([provider])
    recorder = Recorder(retriable())
    await office.subscribe(INBOX, recorder)
    sent = await office.post(to=INBOX, body={"shared": True})
    await within(clock.wait_for_sleepers(1))
    clock.advance(1.0)
    await within(office.wait_settled())
    first, second = recorder.calls
    assert first is not second
    assert first is not sent
    assert first.key == second.key == sent.key
    assert first.body is sent.body


# -- send boundary -------------------------------------------------------------------------


async def test_system_headers_a_sender_supplied_are_stripped(office: PostOffice) -> None:
    sent = await office.post(
        to=INBOX,
        body=1,
        headers={
            "mbx-send-id": "forged",
            "mbx-round": "99",
            "mbx-max-attempts": "1000",
            "mbx-dead-letter-reason": "fatal",
            "trace": "abc",
        },
    )
    assert sent.headers["trace"] == "abc"
    assert sent.key != "forged"
    assert "mbx-round" not in sent.headers
    assert "mbx-max-attempts" not in sent.headers
    assert "mbx-dead-letter-reason" not in sent.headers


async def test_every_letter_gets_its_own_send_id_even_when_the_id_repeats(
    office: PostOffice,
) -> None:
    first = await office.post(to=INBOX, body=1, id="same")
    second = await office.post(to=INBOX, body=2, id="same")
    assert first.key != second.key
    assert (await office.status(INBOX)).unread_count == 2


async def test_two_letters_with_the_same_id_keep_separate_retry_budgets(
    clock: ManualClock,
) -> None:
    provider = HookedProvider(clock, retry=RetryPolicy(2, 1.0), delivery_settle_timeout=0)
    office = PostOffice([provider])
    recorder = Recorder(retriable(), retriable(), retriable(), retriable())
    await office.subscribe(INBOX, recorder)
    await office.post(to=INBOX, body="a", id="dup")
    await office.post(to=INBOX, body="b", id="dup")
    await within(clock.wait_for_sleepers(2))
    clock.advance(1.0)
    await within(office.wait_settled())
    attempts = sorted((m.body, m.headers["mbx-attempt"]) for m in recorder.calls)
    assert attempts == [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")]
    assert (await office.status(INBOX)).unread_count == 2


# -- seed 6: settlement safety nets --------------------------------------------------------


async def test_a_stuck_callback_is_settled_as_cancelled_and_falls_back_to_fetch(
    clock: ManualClock,
) -> None:
    office = PostOffice([MemoryProvider.create_isolated(clock=clock, delivery_settle_timeout=5)])
    started = asyncio.Event()

    async def stuck(message: MailMessage) -> None:
        started.set()
        await asyncio.Event().wait()

    await office.subscribe(INBOX, stuck)
    await office.post(to=INBOX, body=1)
    await within(started.wait())
    await within(clock.wait_for_sleepers(1))
    clock.advance(5)
    await within(office.wait_settled())
    assert (await office.status(INBOX)).unread_count == 1


async def test_the_watchdog_covers_one_attempt_never_a_backoff_wait(clock: ManualClock) -> None:
    provider = MemoryProvider.create_isolated(
        clock=clock, retry=RetryPolicy(2, base_delay=100.0), delivery_settle_timeout=5
    )
    office = PostOffice([provider])
    recorder = Recorder(retriable())
    await office.subscribe(INBOX, recorder)
    await office.post(to=INBOX, body=1)
    await within(recorder.called.wait())
    await within(clock.wait_for_sleepers(1))
    clock.advance(50)
    assert len(recorder.calls) == 1
    clock.advance(50)
    await within(office.wait_settled())
    assert len(recorder.calls) == 2
    assert (await office.status(INBOX)).unread_count == 0


async def test_a_zero_settle_timeout_opts_out_of_the_watchdog(clock: ManualClock) -> None:
    provider = MemoryProvider.create_isolated(clock=clock, delivery_settle_timeout=0)
    office = PostOffice([provider])
    gate = asyncio.Event()

    async def slow(message: MailMessage) -> None:
        await gate.wait()

    await office.subscribe(INBOX, slow)
    await office.post(to=INBOX, body=1)
    await asyncio.sleep(0)
    assert clock.sleeper_count == 0
    clock.advance(10_000)
    gate.set()
    await within(office.wait_settled())
    assert (await office.status(INBOX)).unread_count == 0


async def test_unsubscribe_cancels_only_deliveries_waiting_in_backoff(clock: ManualClock) -> None:
    provider = MemoryProvider.create_isolated(
        clock=clock, retry=RetryPolicy(3, 1.0), delivery_settle_timeout=0
    )
    office = PostOffice([provider])
    recorder = Recorder(retriable())
    subscription = await office.subscribe(INBOX, recorder)
    await office.post(to=INBOX, body=1)
    await within(clock.wait_for_sleepers(1))
    await subscription.unsubscribe()
    await within(office.wait_settled())
    assert len(recorder.calls) == 1
    assert (await office.status(INBOX)).unread_count == 1


async def test_unsubscribe_lets_a_running_callback_settle_on_its_own(office: PostOffice) -> None:
    gate, started = asyncio.Event(), asyncio.Event()

    async def slow(message: MailMessage) -> None:
        started.set()
        await gate.wait()

    subscription = await office.subscribe(INBOX, slow)
    await office.post(to=INBOX, body=1)
    await within(started.wait())
    await subscription.unsubscribe()
    gate.set()
    await within(office.wait_settled())
    status = await office.status(INBOX)
    assert (status.unread_count, status.in_flight_count) == (0, 0)


async def test_stop_tears_down_subscriptions_before_the_provider_cleans_up(
    clock: ManualClock,
) -> None:
    order: list[str] = []

    class Tracking(MemoryProvider):
        async def _close(self) -> None:
            order.append(f"close with {len(self.subscriptions)} subscriptions")
            await super()._close()

    office = PostOffice([Tracking.create_isolated(clock=clock)])
    await office.subscribe(INBOX, Recorder())
    await office.stop()
    assert order == ["close with 0 subscriptions"]


async def test_a_plain_function_works_as_a_callback(office: PostOffice) -> None:
    seen: list[object] = []
    await office.subscribe(INBOX, lambda message: seen.append(message.body))
    await office.post(to=INBOX, body="sync")
    await within(office.wait_settled())
    assert seen == ["sync"]
