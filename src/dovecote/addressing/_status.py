"""Status, snapshot, recovery and lookup result values."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

from ._message import MailMessage

__all__ = [
    "AddressState",
    "AddressStatus",
    "CopyState",
    "LocatedCopy",
    "PostOfficeSnapshot",
    "RecoverReport",
    "RecoverResult",
]


class AddressState(enum.StrEnum):
    """A provider's view of one address (or, in a snapshot, of all of them)."""

    ONLINE = "online"
    UNKNOWN = "unknown"
    DEGRADED = "degraded"
    OFFLINE = "offline"


def _freeze(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value or {}))


@attrs.frozen(slots=True)
class AddressStatus:
    """What a provider knows about one address.

    ``state`` is ``unknown`` and ``exists`` False for an address the provider has never
    seen; ``exists`` is None when the provider cannot answer at all. ``unread_count`` counts
    queued copies only; copies handed out and not yet settled are ``in_flight_count``.
    ``last_activity_time`` is an ISO 8601 string or None. Provider-specific numbers live in
    ``extensions`` under scheme-prefixed keys (``mem.parked_count``) and can also be read
    with ``status["mem.parked_count"]``.
    """

    address: str
    state: AddressState
    exists: bool | None
    unread_count: int = 0
    in_flight_count: int = 0
    last_activity_time: str | None = None
    extensions: Mapping[str, Any] = attrs.field(factory=dict, converter=_freeze, eq=False)

    def __getitem__(self, key: str) -> Any:
        return self.extensions[key]

    def get(self, key: str, default: Any = None) -> Any:
        """An extension value, or ``default``."""
        return self.extensions.get(key, default)


@attrs.frozen(slots=True)
class PostOfficeSnapshot:
    """Every address of every registered provider, sorted by address string.

    ``state`` is ``degraded`` when some provider cannot enumerate its addresses (listed in
    ``unsupported_providers``), ``online`` when at least one address is known, else
    ``unknown``. Only core fields are aggregated; extension keys stay per address.
    """

    state: AddressState
    address_count: int
    unread_count: int
    in_flight_count: int
    addresses: tuple[AddressStatus, ...]
    unsupported_providers: tuple[str, ...] = ()


@attrs.frozen(slots=True)
class RecoverResult:
    """Result of recovering one address: ``supported`` False means "cannot ask", not 0."""

    reclaimed: int
    supported: bool


@attrs.frozen(slots=True)
class RecoverReport:
    """Result of recovering every enumerable address."""

    reclaimed: int
    by_address: Mapping[str, int] = attrs.field(factory=dict, converter=_freeze, eq=False)
    unreachable_providers: tuple[str, ...] = ()


class CopyState(enum.StrEnum):
    """Where one copy of a letter currently is."""

    QUEUED = "queued"
    IN_FLIGHT = "in-flight"
    DELIVERING = "delivering"
    PARKED = "parked"


@attrs.frozen(slots=True)
class LocatedCopy:
    """One copy found by ``locate``: settle it by ``key`` (and ``lease_id``), not by id."""

    key: str
    topic: str
    state: CopyState
    message: MailMessage
    lease_id: str | None = None
