"""``Provider``: the base class every post-office transport extends.

The base owns the bookkeeping that is easy to get wrong by hand: the send boundary
(stripping system headers a sender supplied, stamping ``mbx-send-id``), subscriptions and
their teardown on ``close()``, per-delivery settlement of broadcasts, retry chains with
backoff, the settle watchdog, and capability declarations. A transport implements the
``_underscore`` hooks; pull-side operations it cannot do raise
:class:`UnsupportedCapabilityError` (the default).
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Awaitable, Sequence
from typing import Any

import attrs

from dovecote._errors import UnsupportedCapabilityError
from dovecote._logs import get_logger

from ._address import MailAddress
from ._clock import Clock, SystemClock, iso_timestamp
from ._message import (
    HEADER_ATTEMPT,
    HEADER_MAX_ATTEMPTS,
    HEADER_ROUND,
    HEADER_SEND_ID,
    HEADER_SENT_AT,
    MailMessage,
    is_system_header,
)
from ._pull_side import PullSide
from ._retry import (
    BroadcastVerdict,
    DeliveryOutcome,
    DeliveryResult,
    RetryPolicy,
    is_retriable_error,
    settle_broadcast,
)
from ._subscription import Callback, Subscription

__all__ = ["DEFAULT_ACK_TIMEOUT", "DEFAULT_DELIVERY_SETTLE_TIMEOUT", "Provider"]

DEFAULT_ACK_TIMEOUT = 30.0
"""Seconds a ``manual_ack`` lease lasts unless the fetch asks otherwise."""
DEFAULT_DELIVERY_SETTLE_TIMEOUT = 30.0
"""Seconds one delivery attempt may run before the watchdog settles it as cancelled."""

_log = get_logger("dovecote.addressing")


class Provider(PullSide):
    """Base class of every transport registered on a :class:`PostOffice` for one scheme.

    Subclasses set ``scheme``, declare what they can do in :attr:`supports`, and implement
    ``_send`` (plus ``_subscribe`` / ``_unsubscribe`` / ``_nack`` / ``_ack`` as needed).
    Clean-up goes in ``_close()``; ``close()`` itself tears subscriptions down first.
    """

    scheme: str = ""
    broadcast_deliveries: bool = False

    def __init__(
        self,
        *,
        retry: RetryPolicy | None = None,
        clock: Clock | None = None,
        delivery_settle_timeout: float = DEFAULT_DELIVERY_SETTLE_TIMEOUT,
    ) -> None:
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.delivery_settle_timeout = delivery_settle_timeout
        self._retry = retry
        self._subscriptions: dict[str, Subscription] = {}
        self._subscribed: dict[str, int] = {}  # live subscriptions per address
        self._barriers: set[str] = set()  # copies whose settlement _broadcast attached
        self._pending: set[asyncio.Task[None]] = set()
        self._started = False
        self._warned: set[str] = set()
        self.owner: object | None = None

    # -- capabilities ---------------------------------------------------------------
    @property
    def supports(self) -> frozenset[str]:
        """Operations this provider can perform (``"subscribe"``, ``"peek"``, ...)."""
        return frozenset({"subscribe"})

    def can(self, op: str, address: MailAddress | str | None = None) -> bool:
        """Whether ``op`` is supported (for ``address``, when the answer depends on it)."""
        return op in self.supports

    def require(self, op: str, address: MailAddress | str | None = None) -> None:
        """Raise :class:`UnsupportedCapabilityError` unless ``can(op, address)``."""
        if not self.can(op, address):
            where = f" for {address}" if address is not None else ""
            raise UnsupportedCapabilityError(
                f"provider {self.scheme!r} does not support {op!r}{where}"
            )

    # -- retry policy ----------------------------------------------------------------
    @property
    def retry_policy(self) -> RetryPolicy | None:
        """The opt-in retry policy, or None (retriable failures are requeued once)."""
        return self._retry

    def set_retry_policy(self, policy: RetryPolicy | None) -> None:
        """Install a retry policy, or None to return to the default."""
        self._retry = policy

    # -- lifecycle -------------------------------------------------------------------
    @property
    def started(self) -> bool:
        """True between ``start()`` and ``close()``."""
        return self._started

    async def start(self) -> None:
        """Open the transport (idempotent)."""
        if not self._started:
            await self._open()
            self._started = True

    async def close(self) -> None:
        """Tear down every subscription, then run ``_close()``. Messages are kept."""
        for subscription in list(self._subscriptions.values()):
            await self._remove_subscription(subscription)
        self._started = False
        await self._close()

    async def _open(self) -> None:
        """Transport start-up hook."""

    async def _close(self) -> None:
        """Transport clean-up hook (runs after the subscriptions are gone)."""

    async def wait_settled(self) -> None:
        """Return once every broadcast this provider dispatched has settled."""
        while self._pending:
            await asyncio.wait(set(self._pending))

    # -- send boundary -----------------------------------------------------------------
    async def send(self, message: MailMessage) -> MailMessage:
        """Strip system headers, stamp the copy key, hand the letter to ``_send``."""
        headers = {k: v for k, v in message.headers.items() if not is_system_header(k)}
        headers[HEADER_SEND_ID] = uuid.uuid4().hex
        headers[HEADER_SENT_AT] = iso_timestamp(self.clock.wall())
        stamped = attrs.evolve(message, headers=headers)
        key = stamped.key or ""
        try:
            await self._send(stamped)
        finally:
            attached = key in self._barriers
            self._barriers.discard(key)
        if (
            self.broadcast_deliveries
            and not attached
            and self._subscribed.get(str(stamped.to), 0) > 0
        ):
            # A broadcast transport whose _send never called _broadcast: nothing would
            # settle the deliveries, so fall back to requeueing the whole message.
            self._warn_once(
                "barrier",
                "broadcast provider's _send did not attach settlement (call _broadcast); "
                "requeueing whole messages instead",
            )
            await self._call_nack(stamped, True)
        return stamped

    async def _send(self, message: MailMessage) -> None:
        raise NotImplementedError

    # -- subscriptions ---------------------------------------------------------------
    @property
    def subscriptions(self) -> tuple[Subscription, ...]:
        """Live subscriptions owned by this provider."""
        return tuple(self._subscriptions.values())

    async def subscribe(self, address: MailAddress, callback: Callback) -> Subscription:
        """Register ``callback``; returns once the transport confirms it."""
        self.require("subscribe", address)
        subscription = Subscription(self, address, callback, uuid.uuid4().hex)
        await self._subscribe(subscription)
        self._register_subscription(subscription)
        return subscription

    def _register_subscription(self, subscription: Subscription) -> None:
        """Book a live subscription (for transports that attach one themselves)."""
        self._subscriptions[subscription.id] = subscription
        address = str(subscription.address)
        self._subscribed[address] = self._subscribed.get(address, 0) + 1

    def _unregister_subscription(self, subscription: Subscription) -> None:
        """Undo :meth:`_register_subscription`; idempotent."""
        if self._subscriptions.pop(subscription.id, None) is None:
            return
        address = str(subscription.address)
        left = self._subscribed.get(address, 0) - 1
        if left > 0:
            self._subscribed[address] = left
        else:
            self._subscribed.pop(address, None)

    async def _remove_subscription(self, subscription: Subscription) -> None:
        if not subscription._active:
            return
        subscription._active = False
        self._unregister_subscription(subscription)
        for task in list(subscription._backoffs):
            task.cancel()
        await self._unsubscribe(subscription)

    async def _subscribe(self, subscription: Subscription) -> None:
        raise UnsupportedCapabilityError(f"provider {self.scheme!r} cannot subscribe")

    async def _unsubscribe(self, subscription: Subscription) -> None:
        """Detach ``subscription`` from the transport."""

    # -- deliveries and settlement ---------------------------------------------------
    def _broadcast(self, message: MailMessage, subscriptions: Sequence[Subscription]) -> None:
        """Deliver one copy to each subscriber and settle once all deliveries are done.

        Call it synchronously from ``_send`` (before any ``await``) so settlement is
        attached before anything else can observe the message.
        """
        self._barriers.add(message.key or "")
        task = asyncio.get_running_loop().create_task(
            self._settle(message, tuple(subscriptions))
        )
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def _deliver_to_local_subscription(self, subscription_id: str, message: MailMessage) -> None:
        """Deliver a message a producer-style transport built itself to one subscription."""
        subscription = self._subscriptions.get(subscription_id)
        if subscription is not None:
            self._broadcast(message, [subscription])

    async def _settle(self, message: MailMessage, subscriptions: Sequence[Subscription]) -> None:
        try:
            await self._settle_deliveries(message, subscriptions)
        finally:
            self._delivery_settled(message)

    async def _settle_deliveries(
        self, message: MailMessage, subscriptions: Sequence[Subscription]
    ) -> None:
        round_ = message.round + 1
        results: list[DeliveryResult] = list(
            await asyncio.gather(*(self._deliver(s, message, round_) for s in subscriptions))
        )
        settled = message.with_headers({HEADER_ROUND: str(round_)}, drop=(HEADER_ATTEMPT,))
        verdict = settle_broadcast(results)
        failed = [result for result in results if not result.succeeded]
        if verdict is BroadcastVerdict.HANDLED:
            await self._ack(settled)
        else:
            await self._call_nack(settled, verdict is BroadcastVerdict.REQUEUE)
        if failed and verdict is not BroadcastVerdict.REQUEUE:
            try:
                await self._on_delivery_dead_lettered(settled, failed)
            except Exception:
                _log.exception("dead-letter hook failed", key=message.key, to=str(message.to))

    async def _deliver(
        self, subscription: Subscription, message: MailMessage, round_: int
    ) -> DeliveryResult:
        policy = self._retry
        max_attempts = policy.max_attempts if policy is not None else 1
        delivery_id = f"{subscription.id}:{message.key}"
        attempt = 0
        while True:
            attempt += 1
            stamp = {HEADER_ATTEMPT: str(attempt), HEADER_ROUND: str(round_)}
            if policy is not None:
                stamp[HEADER_MAX_ATTEMPTS] = str(policy.max_attempts)
            outcome, error = await self._attempt(subscription, message.with_headers(stamp))
            if outcome is not DeliveryOutcome.RETRIABLE or policy is None:
                return DeliveryResult(delivery_id, subscription.id, outcome, attempt, error)
            if attempt >= max_attempts or not subscription.active:
                if attempt >= max_attempts:
                    await self._on_retry_exhausted(message, attempt)
                return DeliveryResult(delivery_id, subscription.id, outcome, attempt, error)
            task = asyncio.current_task()
            assert task is not None
            subscription._backoffs.add(task)
            try:
                await self.clock.sleep(policy.delay_after(attempt))
            except asyncio.CancelledError:
                if subscription.active:
                    raise
                task.uncancel()
                return DeliveryResult(
                    delivery_id, subscription.id, DeliveryOutcome.CANCELLED, attempt, error
                )
            finally:
                subscription._backoffs.discard(task)

    async def _attempt(
        self, subscription: Subscription, copy: MailMessage
    ) -> tuple[DeliveryOutcome, str | None]:
        try:
            result = subscription.callback(copy)
            if inspect.isawaitable(result):
                await self._watch(result, copy)
        except _SettleTimeout:
            return DeliveryOutcome.CANCELLED, "delivery settle timeout"
        except Exception as error:
            outcome = (
                DeliveryOutcome.RETRIABLE if is_retriable_error(error) else DeliveryOutcome.FATAL
            )
            return outcome, f"{type(error).__name__}: {error}"
        return DeliveryOutcome.HANDLED, None

    async def _watch(self, awaitable: Awaitable[Any], copy: MailMessage) -> None:
        timeout = self.delivery_settle_timeout
        if not timeout or timeout <= 0:
            await awaitable
            return
        work = asyncio.ensure_future(awaitable)
        timer = asyncio.ensure_future(self.clock.sleep(timeout))
        try:
            await asyncio.wait({work, timer}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            work.cancel()
            timer.cancel()
            raise
        if work.done():
            timer.cancel()
            work.result()
            return
        work.cancel()
        _log.warning(
            "delivery did not settle in time; settled as cancelled",
            key=copy.key,
            to=str(copy.to),
            timeout=timeout,
        )
        raise _SettleTimeout

    async def _call_nack(self, message: MailMessage, requeue: bool) -> None:
        if type(self)._nack is Provider._nack:
            self._warn_once("nack", "provider does not implement _nack; decision not carried out")
            return
        await self._nack(message, requeue)

    async def _ack(self, message: MailMessage) -> None:
        """A broadcast copy was handled by at least one subscriber."""

    def _delivery_settled(self, message: MailMessage) -> None:
        """Called last, once a broadcast's settlement (and dead-letter hook) is done."""

    async def _nack(self, message: MailMessage, requeue: bool) -> None:
        """Put the copy back (``requeue``) or give it up. Transports override this."""

    async def _on_delivery_dead_lettered(
        self, message: MailMessage, failed: Sequence[DeliveryResult]
    ) -> None:
        """Failed deliveries that will not be requeued (persist or alert here)."""

    async def _on_retry_exhausted(self, message: MailMessage, attempts: int) -> None:
        """A delivery used its whole retry budget (not a give-up: it may be requeued)."""

    def _warn_once(self, topic: str, text: str) -> None:
        if topic not in self._warned:
            self._warned.add(topic)
            _log.warning(text, provider=type(self).__name__, scheme=self.scheme)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} scheme={self.scheme!r}>"


class _SettleTimeout(Exception):
    """Internal: the settle watchdog fired for one attempt."""
