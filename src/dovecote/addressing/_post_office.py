"""``PostOffice``: routes letters to the provider that owns each address's scheme.

The post office parses and validates at every entry point before anything changes
(bad address -> :class:`InvalidMailboxAddressError`, no provider for the scheme ->
:class:`UnknownSchemeError`, an operation the provider does not declare ->
:class:`UnsupportedCapabilityError`, contradictory fetch options ->
:class:`InvalidFetchOptionsError`), then delegates to the provider.

Integration seam for actors: a runtime makes an actor reachable by address with
``await office.subscribe(address, callback)`` where ``callback`` is
``async (MailMessage) -> None``; returning settles the delivery as handled, raising a
retriable error (``is_retriable_error``) sends it back to the queue, raising anything else
gives it up. Unsubscribing when the actor stops makes later posts queue for ``fetch``.
"""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Iterable, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, Literal, overload

from dovecote._errors import (
    InvalidFetchOptionsError,
    OptionsError,
    UnsupportedCapabilityError,
)
from dovecote._logs import get_logger

from ._address import MailAddress
from ._message import MailMessage
from ._provider import DEFAULT_ACK_TIMEOUT, Provider
from ._status import (
    AddressState,
    AddressStatus,
    LocatedCopy,
    PostOfficeSnapshot,
    RecoverReport,
    RecoverResult,
)
from ._subscription import Callback, Lease, Subscription

__all__ = ["PostOffice", "UnknownSchemeError"]

_log = get_logger("dovecote.addressing")


class UnknownSchemeError(UnsupportedCapabilityError, LookupError):
    """No provider is registered for the address's scheme."""


def _validate_fetch_options(manual_ack: object, ack_timeout: object, peek: object,
                            limit: object) -> None:
    if not isinstance(manual_ack, bool):
        raise InvalidFetchOptionsError(f"manual_ack must be a bool, got {manual_ack!r}")
    if not isinstance(peek, bool):
        raise InvalidFetchOptionsError(f"peek must be a bool, got {peek!r}")
    if peek and manual_ack:
        raise InvalidFetchOptionsError("peek is read-only and cannot be combined with manual_ack")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidFetchOptionsError(f"limit must be an int >= 1, got {limit!r}")
    if limit != 1 and not peek:
        raise InvalidFetchOptionsError("limit only applies to peek; a consuming fetch takes one")
    if (
        isinstance(ack_timeout, bool)
        or not isinstance(ack_timeout, (int, float))
        or not math.isfinite(ack_timeout)
        or ack_timeout < 0
    ):
        raise InvalidFetchOptionsError(
            f"ack_timeout must be a finite number of seconds >= 0 (0 = never expires), "
            f"got {ack_timeout!r}"
        )


def _validate_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise OptionsError(f"headers must be a mapping of str to str, got {headers!r}")
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise OptionsError(f"header {name!r}: names and values must be str")
    return dict(headers)


class PostOffice:
    """Registry of providers by scheme, and the single entry point for letters.

    Use as ``async with PostOffice([MemoryProvider()]) as office:`` or call
    :meth:`start` / :meth:`stop` yourself.
    """

    __slots__ = ("_providers",)

    def __init__(self, providers: Iterable[Provider] = ()) -> None:
        self._providers: dict[str, Provider] = {}
        for provider in providers:
            self.register_provider(provider)

    # -- providers --------------------------------------------------------------------
    def register_provider(self, provider: Provider) -> None:
        """Route ``provider.scheme`` to ``provider`` (replacing any earlier one).

        A provider belongs to one post office: its subscriptions live on it, so stopping
        one office would unsubscribe the other's. Registering it twice logs a warning.
        Call :meth:`start` again after registering on a running office.
        """
        if not isinstance(provider, Provider):
            raise OptionsError(f"{provider!r} is not a dovecote Provider")
        scheme = provider.scheme.lower()
        if not scheme:
            raise OptionsError(f"{provider!r} has no scheme")
        if provider.owner is not None and provider.owner is not self:
            provider._warn_once(
                "two-offices", "provider is registered on two post offices; stop() on one "
                "unsubscribes the other"
            )
        provider.owner = self
        self._providers[scheme] = provider

    @property
    def providers(self) -> Mapping[str, Provider]:
        """A read-only view of the registered providers by scheme."""
        return MappingProxyType(self._providers)

    @overload
    def get_provider(self, scheme: str, required: Literal[True]) -> Provider: ...
    @overload
    def get_provider(self, scheme: str, required: bool = False) -> Provider | None: ...

    def get_provider(self, scheme: str, required: bool = False) -> Provider | None:
        """The provider for ``scheme`` (``"mem"`` or ``"mem:"``); raise if ``required``."""
        provider = self._providers.get(scheme.removesuffix(":").lower())
        if provider is None and required:
            raise UnknownSchemeError(f"no provider registered for scheme {scheme!r}")
        return provider

    def _route(self, address: str | MailAddress) -> tuple[MailAddress, Provider]:
        parsed = MailAddress.coerce(address)
        return parsed, self.get_provider(parsed.scheme, required=True)

    # -- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        """Start every provider concurrently (idempotent)."""
        await asyncio.gather(*(p.start() for p in self._providers.values()))

    async def stop(self, *, purge: bool = False) -> None:
        """Close every provider (subscriptions end; backlog kept unless ``purge``)."""
        await asyncio.gather(*(p.close() for p in self._providers.values()))
        if purge:
            await self.clear()

    async def __aenter__(self) -> PostOffice:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def wait_settled(self) -> None:
        """Return once every dispatched broadcast of every provider has settled."""
        await asyncio.gather(*(p.wait_settled() for p in self._providers.values()))

    # -- publish / subscribe ------------------------------------------------------------
    async def post(
        self,
        *,
        to: str | MailAddress,
        body: Any = None,
        from_: str | MailAddress | None = None,
        headers: Mapping[str, str] | None = None,
        id: str | None = None,
    ) -> MailMessage:
        """Send a letter; returns it as sent (with its ``mbx-send-id`` copy key).

        With subscribers on ``to`` it is handed to each of them and not queued; without,
        it is queued for ``fetch``. It resolves at dispatch, not when deliveries settle.
        """
        address, provider = self._route(to)
        sender = MailAddress.coerce(from_) if from_ is not None else None
        if id is not None and (not isinstance(id, str) or not id):
            raise OptionsError(f"id must be a non-empty string, got {id!r}")
        message = MailMessage(
            id=id or uuid.uuid4().hex,
            to=address,
            body=body,
            from_=sender,
            headers=_validate_headers(headers),
        )
        return await provider.send(message)

    async def subscribe(self, address: str | MailAddress, callback: Callback) -> Subscription:
        """Register ``callback`` on ``address``; the await returns once it is established."""
        parsed, provider = self._route(address)
        if not callable(callback):
            raise OptionsError(f"callback must be callable, got {callback!r}")
        provider.require("subscribe", parsed)
        return await provider.subscribe(parsed, callback)

    # -- fetch ----------------------------------------------------------------------------
    @overload
    async def fetch(
        self,
        address: str | MailAddress,
        *,
        manual_ack: Literal[False] = False,
        ack_timeout: float = ...,
        peek: Literal[False] = False,
        limit: int = ...,
    ) -> MailMessage | None: ...
    @overload
    async def fetch(
        self,
        address: str | MailAddress,
        *,
        manual_ack: Literal[True],
        ack_timeout: float = ...,
        peek: Literal[False] = False,
        limit: int = ...,
    ) -> Lease | None: ...
    @overload
    async def fetch(
        self,
        address: str | MailAddress,
        *,
        manual_ack: Literal[False] = False,
        ack_timeout: float = ...,
        peek: Literal[True],
        limit: int = ...,
    ) -> list[MailMessage]: ...
    @overload
    async def fetch(
        self,
        address: str | MailAddress,
        *,
        manual_ack: bool = ...,
        ack_timeout: float = ...,
        peek: bool = ...,
        limit: int = ...,
    ) -> MailMessage | Lease | list[MailMessage] | None: ...

    async def fetch(
        self,
        address: str | MailAddress,
        *,
        manual_ack: bool = False,
        ack_timeout: float = DEFAULT_ACK_TIMEOUT,
        peek: bool = False,
        limit: int = 1,
    ) -> MailMessage | Lease | list[MailMessage] | None:
        """Pull from ``address``.

        * plain: take the next queued message (or None); it counts as handled.
        * ``manual_ack=True``: take it under a lease of ``ack_timeout`` seconds
          (0 = never expires) and return a :class:`Lease` to settle with ``ack()``.
        * ``peek=True``: copies of up to ``limit`` queued messages; changes nothing.
        """
        _validate_fetch_options(manual_ack, ack_timeout, peek, limit)
        parsed, provider = self._route(address)
        if peek:
            provider.require("peek", parsed)
            return await provider.peek(parsed, limit)
        if manual_ack:
            provider.require("manual-ack", parsed)
            return await provider.fetch_leased(parsed, float(ack_timeout))
        provider.require("fetch", parsed)
        return await provider.fetch_message(parsed)

    # -- status, recovery, reset ------------------------------------------------------------
    @overload
    async def status(self, address: None = None) -> PostOfficeSnapshot: ...
    @overload
    async def status(self, address: str | MailAddress) -> AddressStatus: ...

    async def status(
        self, address: str | MailAddress | None = None
    ) -> AddressStatus | PostOfficeSnapshot:
        """Status of one address, or with no argument a snapshot of every address."""
        if address is None:
            return await self.snapshot()
        parsed, provider = self._route(address)
        if not provider.can("status", parsed):
            return AddressStatus(str(parsed), AddressState.UNKNOWN, None)
        return await provider.status(parsed)

    async def snapshot(self) -> PostOfficeSnapshot:
        """Every address of every provider, sorted; ``degraded`` if some cannot enumerate."""
        entries: list[AddressStatus] = []
        unsupported: list[str] = []
        for scheme in sorted(self._providers):
            provider = self._providers[scheme]
            if provider.can("enumerate"):
                entries.extend(await provider.list_statuses())
            else:
                unsupported.append(scheme)
        entries.sort(key=lambda entry: entry.address)
        if unsupported:
            state = AddressState.DEGRADED
        else:
            state = AddressState.ONLINE if entries else AddressState.UNKNOWN
        return PostOfficeSnapshot(
            state=state,
            address_count=len(entries),
            unread_count=sum(entry.unread_count for entry in entries),
            in_flight_count=sum(entry.in_flight_count for entry in entries),
            addresses=tuple(entries),
            unsupported_providers=tuple(unsupported),
        )

    @overload
    async def recover(self, address: None = None) -> RecoverReport: ...
    @overload
    async def recover(self, address: str | MailAddress) -> RecoverResult: ...

    async def recover(
        self, address: str | MailAddress | None = None
    ) -> RecoverResult | RecoverReport:
        """Reclaim expired leases now (idempotent); valid and ``0`` leases are left alone."""
        if address is not None:
            parsed, provider = self._route(address)
            if not provider.can("recover", parsed):
                return RecoverResult(0, supported=False)
            counts = await provider.recover(parsed)
            return RecoverResult(sum(counts.values()), supported=True)
        by_address: dict[str, int] = {}
        unreachable: list[str] = []
        for scheme in sorted(self._providers):
            provider = self._providers[scheme]
            if provider.can("recover") and provider.can("enumerate"):
                by_address.update(await provider.recover())
            else:
                unreachable.append(scheme)
        return RecoverReport(sum(by_address.values()), by_address, tuple(unreachable))

    async def clear(self) -> int:
        """Drop every provider's backlog (queued + in flight); subscriptions stay."""
        dropped = 0
        for provider in self._providers.values():
            if provider.can("clear"):
                dropped += await provider.clear()
        return dropped

    async def locate(self, message_id: str) -> list[LocatedCopy]:
        """Read-only: every copy named ``message_id``, with the key to settle it by."""
        found: list[LocatedCopy] = []
        for provider in self._providers.values():
            if provider.can("locate"):
                found.extend(await provider.locate(message_id))
        return found

    def __repr__(self) -> str:
        return f"<PostOffice schemes={sorted(self._providers)}>"
