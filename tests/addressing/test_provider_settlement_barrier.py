"""Seed 000 §6: a broadcast provider that forgets its settlement barrier loses nothing."""

from __future__ import annotations

from typing import Any

from structlog.testing import capture_logs

from dovecote.addressing import MailMessage, PostOffice, Provider, Subscription


class ForgetfulBroadcaster(Provider):
    """A broadcast transport whose _send forgets to call _broadcast."""

    scheme = "fake"
    broadcast_deliveries = True

    def __init__(self) -> None:
        super().__init__()
        self.requeued: list[MailMessage] = []
        self.delivered: list[Any] = []

    async def _subscribe(self, subscription: Subscription) -> None:
        return None

    async def _send(self, message: MailMessage) -> None:
        return None  # the bug under test: no _broadcast, so no settlement barrier

    async def _nack(self, message: MailMessage, requeue: bool) -> None:
        if requeue:
            self.requeued.append(message)


class CarefulBroadcaster(ForgetfulBroadcaster):
    """The same transport doing it right: _send attaches the barrier via _broadcast."""

    async def _send(self, message: MailMessage) -> None:
        self._broadcast(message, list(self.subscriptions))


async def test_a_broadcast_provider_that_forgets_its_barrier_falls_back_to_a_requeue():
    provider = ForgetfulBroadcaster()
    office = PostOffice([provider])

    async def callback(message: MailMessage) -> None:
        provider.delivered.append(message.body)

    await office.subscribe("fake://a@b/inbox", callback)
    with capture_logs() as logs:
        sent = await office.post(to="fake://a@b/inbox", body="hello")
        await office.post(to="fake://a@b/inbox", body="again")
    assert [m.key for m in provider.requeued][:1] == [sent.key]
    assert [m.body for m in provider.requeued] == ["hello", "again"]
    warnings = [e for e in logs if "did not attach settlement" in e["event"]]
    assert len(warnings) == 1  # warned once per provider, not once per message


async def test_no_fallback_when_the_barrier_is_attached_or_nobody_is_subscribed():
    careful = CarefulBroadcaster()
    office = PostOffice([careful])

    async def callback(message: MailMessage) -> None:
        careful.delivered.append(message.body)

    await office.subscribe("fake://a@b/inbox", callback)
    await office.post(to="fake://a@b/inbox", body="hello")
    await office.wait_settled()
    assert careful.delivered == ["hello"]
    assert careful.requeued == []

    lonely = ForgetfulBroadcaster()  # no subscriber: nothing was owed a barrier
    await PostOffice([lonely]).post(to="fake://a@b/other", body="x")
    assert lonely.requeued == []
