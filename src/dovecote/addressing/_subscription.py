"""Handles a consumer holds: a push ``Subscription`` and a pull ``Lease``."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from dovecote._errors import UnsupportedCapabilityError

from ._address import MailAddress
from ._message import MailMessage

if TYPE_CHECKING:
    from ._provider import Provider

__all__ = ["CORE_DISPOSITIONS", "Callback", "Lease", "Subscription"]

Callback = Callable[[MailMessage], Awaitable[None] | None]
"""A subscriber: ``async def cb(message) -> None``. Returning is *handled*; raising a
retriable error (see ``is_retriable_error``) is *unhandled*; raising anything else is
*discard*. A plain ``def`` works too (it is not covered by the settle watchdog)."""

CORE_DISPOSITIONS = frozenset({"handled", "discard", "unhandled"})


class Subscription:
    """One registered callback on one address; awaiting ``subscribe`` means it is live.

    ``unsubscribe()`` (or leaving ``async with``) detaches it. A callback that is running
    at that moment settles on its own; only deliveries waiting in a retry backoff are
    cancelled (their message falls back to the queue if nobody handled it).
    """

    __slots__ = ("_active", "_backoffs", "_provider", "address", "callback", "id")

    def __init__(
        self, provider: Provider, address: MailAddress, callback: Callback, sub_id: str
    ) -> None:
        self.id = sub_id
        self.address = address
        self.callback = callback
        self._provider = provider
        self._active = True
        self._backoffs: set[asyncio.Task[Any]] = set()

    @property
    def active(self) -> bool:
        """True until ``unsubscribe`` or the provider's ``close``."""
        return self._active

    @property
    def provider(self) -> Provider:
        """The provider that owns this subscription."""
        return self._provider

    async def unsubscribe(self) -> None:
        """Detach the callback; idempotent."""
        await self._provider._remove_subscription(self)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.unsubscribe()

    def __repr__(self) -> str:
        state = "active" if self._active else "closed"
        return f"<Subscription {self.id} {self.address} {state}>"


class Lease:
    """A message taken with ``fetch(..., manual_ack=True)``: settle it exactly once.

    ``ack("handled")`` (the default) removes the copy; ``ack("discard")`` removes it and
    lets the provider tidy up (dead-letter it when a DLQ is enabled); ``ack("unhandled")``
    puts it back in the queue. A second disposition, or one arriving after the lease was
    reclaimed, changes nothing and returns False.
    """

    __slots__ = ("_provider", "_settled", "ack_timeout", "address", "expires_at", "lease_id",
                 "message")

    def __init__(
        self,
        provider: Provider,
        address: MailAddress,
        message: MailMessage,
        lease_id: str,
        ack_timeout: float,
        expires_at: float | None,
    ) -> None:
        self._provider = provider
        self._settled = False
        self.address = address
        self.message = message
        self.lease_id = lease_id
        self.ack_timeout = ack_timeout
        self.expires_at = expires_at

    @property
    def key(self) -> str:
        """The copy key (``mbx-send-id``) this lease holds."""
        return self.message.key or ""

    @property
    def settled(self) -> bool:
        """True once this handle has issued its one disposition."""
        return self._settled

    async def ack(self, disposition: str = "handled") -> bool:
        """Settle the copy; True if the disposition took effect.

        An undeclared disposition raises :class:`UnsupportedCapabilityError` before
        anything changes.
        """
        if disposition not in CORE_DISPOSITIONS and not self._provider.can(
            f"disposition:{disposition}", self.address
        ):
            raise UnsupportedCapabilityError(
                f"provider {self._provider.scheme!r} does not declare disposition "
                f"{disposition!r}"
            )
        if self._settled:
            return False
        self._settled = True
        return await self._provider.settle(self.address, self.key, self.lease_id, disposition)

    async def nack(self, requeue: bool = True) -> bool:
        """Deprecated alias: ``nack(True)`` is ``ack("unhandled")``, ``nack(False)`` discard."""
        warnings.warn(
            "Lease.nack() is deprecated; use ack('unhandled') or ack('discard')",
            DeprecationWarning,
            stacklevel=2,
        )
        return await self.ack("unhandled" if requeue else "discard")

    def __repr__(self) -> str:
        return f"<Lease {self.lease_id} {self.address} key={self.key}>"
