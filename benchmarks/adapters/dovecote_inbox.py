"""dovecote's inbox rows (mixed into the dovecote adapter): see ``_inbox`` and ``_inbox_actor``."""

from __future__ import annotations

from ._base import Metrics
from ._inbox import inbox_postgres, inbox_sqlite
from ._inbox_actor import durable_actor_inbox


class DovecoteInboxWorkloads:
    """``inbox_sqlite``, ``inbox_postgres`` and ``durable_actor_inbox``."""

    async def wl_inbox_sqlite(self, n: int) -> Metrics:
        return await inbox_sqlite(n)

    async def wl_inbox_postgres(self, n: int) -> Metrics:
        return await inbox_postgres(n)

    async def wl_durable_actor_inbox(self, n: int) -> Metrics:
        return await durable_actor_inbox(n)
