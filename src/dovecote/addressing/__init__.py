"""Addresses and the post office.

A :class:`MailAddress` names a destination (``mem://user@host/path``); a
:class:`PostOffice` routes letters to the :class:`Provider` that owns the address's scheme.
:class:`MemoryProvider` is the in-process provider for ``mem:`` addresses: queues, leases
with three dispositions, opt-in retries, a dead-letter chain with parking, and status.
See ``docs/post-office.md`` for a guided tour.
"""

from ._address import MAX_ADDRESS_LENGTH, MailAddress
from ._clock import Clock, ManualClock, SystemClock
from ._dead_letter import DeadLetterPolicy
from ._memory import MemoryProvider
from ._memory_bus import MemoryBus
from ._message import (
    HEADER_ATTEMPT,
    HEADER_MAX_ATTEMPTS,
    HEADER_ROUND,
    HEADER_SEND_ID,
    SYSTEM_HEADERS,
    MailMessage,
    is_system_header,
)
from ._post_office import PostOffice, UnknownSchemeError
from ._provider import DEFAULT_ACK_TIMEOUT, DEFAULT_DELIVERY_SETTLE_TIMEOUT, Provider
from ._retry import (
    BroadcastVerdict,
    DeliveryOutcome,
    DeliveryResult,
    RetriableError,
    RetryPolicy,
    is_retriable_error,
    next_retry_delay,
    settle_broadcast,
    should_requeue_after_broadcast,
)
from ._status import (
    AddressState,
    AddressStatus,
    CopyState,
    LocatedCopy,
    PostOfficeSnapshot,
    RecoverReport,
    RecoverResult,
)
from ._subscription import CORE_DISPOSITIONS, Callback, Lease, Subscription

__all__ = [
    "CORE_DISPOSITIONS",
    "DEFAULT_ACK_TIMEOUT",
    "DEFAULT_DELIVERY_SETTLE_TIMEOUT",
    "HEADER_ATTEMPT",
    "HEADER_MAX_ATTEMPTS",
    "HEADER_ROUND",
    "HEADER_SEND_ID",
    "MAX_ADDRESS_LENGTH",
    "SYSTEM_HEADERS",
    "AddressState",
    "AddressStatus",
    "BroadcastVerdict",
    "Callback",
    "Clock",
    "CopyState",
    "DeadLetterPolicy",
    "DeliveryOutcome",
    "DeliveryResult",
    "Lease",
    "LocatedCopy",
    "MailAddress",
    "MailMessage",
    "ManualClock",
    "MemoryBus",
    "MemoryProvider",
    "PostOffice",
    "PostOfficeSnapshot",
    "Provider",
    "RecoverReport",
    "RecoverResult",
    "RetriableError",
    "RetryPolicy",
    "Subscription",
    "SystemClock",
    "UnknownSchemeError",
    "is_retriable_error",
    "is_system_header",
    "next_retry_delay",
    "settle_broadcast",
    "should_requeue_after_broadcast",
]
