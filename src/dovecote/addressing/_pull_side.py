"""The pull side of a provider: operations a transport may or may not support.

Each default raises :class:`UnsupportedCapabilityError`; a provider overrides what its
transport can do and declares it in ``supports``.
"""

from __future__ import annotations

from dovecote._errors import UnsupportedCapabilityError

from ._address import MailAddress
from ._message import MailMessage
from ._status import AddressStatus, LocatedCopy
from ._subscription import Lease

__all__ = ["PullSide"]


class PullSide:
    """Fetch, peek, leases, status, recover, clear, locate: unsupported unless overridden."""

    scheme: str = ""

    async def fetch_message(self, address: MailAddress) -> MailMessage | None:
        """Take the next queued message (it counts as handled)."""
        raise UnsupportedCapabilityError(f"provider {self.scheme!r} cannot fetch")

    async def fetch_leased(self, address: MailAddress, ack_timeout: float) -> Lease | None:
        """Take the next queued message under a lease (0 = never expires)."""
        raise UnsupportedCapabilityError(f"provider {self.scheme!r} cannot lease messages")

    async def peek(self, address: MailAddress, limit: int) -> list[MailMessage]:
        """Copies of up to ``limit`` queued messages; changes nothing."""
        raise UnsupportedCapabilityError(f"provider {self.scheme!r} cannot peek")

    async def settle(self, address: MailAddress, key: str, lease_id: str, disposition: str) -> bool:
        """Settle a leased copy by its key and lease id; False if the lease is stale."""
        raise UnsupportedCapabilityError(f"provider {self.scheme!r} cannot settle leases")

    async def status(self, address: MailAddress) -> AddressStatus:
        """Status of one address."""
        raise UnsupportedCapabilityError(f"provider {self.scheme!r} cannot report status")

    async def list_statuses(self) -> list[AddressStatus]:
        """Status of every address this provider knows (needs ``"enumerate"``)."""
        raise UnsupportedCapabilityError(f"provider {self.scheme!r} cannot enumerate")

    async def recover(self, address: MailAddress | None = None) -> dict[str, int]:
        """Reclaim expired leases; returns reclaimed counts by address."""
        raise UnsupportedCapabilityError(f"provider {self.scheme!r} has no leases to recover")

    async def clear(self) -> int:
        """Drop the backlog (queued + in flight); returns how many copies were dropped."""
        raise UnsupportedCapabilityError(f"provider {self.scheme!r} cannot clear")

    async def locate(self, message_id: str) -> list[LocatedCopy]:
        """Every copy whose sender-chosen ``id`` is ``message_id`` (read-only)."""
        raise UnsupportedCapabilityError(f"provider {self.scheme!r} cannot locate")
