"""A post-office provider over a store: ``post()`` to ``sqlite://orders@local/inbox``.

The address's user and path name the store mailbox (``orders`` + ``/inbox`` →
``orders/inbox``); the host is not used (one provider serves one store). The body goes
through the codec, so a durable actor on that mailbox receives it decoded, and the
letter's ``from_`` becomes the message's sender (``context.sender`` when it is an actor
of the receiving system). ``peek`` shows what is pending, decoded.
"""

from __future__ import annotations

from typing import Any

from dovecote._errors import OptionsError
from dovecote.addressing import MailAddress, MailMessage, Provider
from dovecote.codec import Codec, default_codec
from dovecote.durable._lane_spec import ANONYMOUS, SENDER_HEADER
from dovecote.durable._protocol import MailboxStore

__all__ = ["LETTER_ID_HEADER", "StoreProvider", "store_mailbox_of"]

LETTER_ID_HEADER = "dovecote-letter-id"
"""Store header holding the letter's sender-chosen ``id``."""


def store_mailbox_of(address: MailAddress) -> str:
    """The store mailbox an address names: ``user`` plus ``path`` (``orders/inbox``)."""
    path = address.path.rstrip("/")
    return f"{address.user}{path}"


def _scheme_of(store: object) -> str:
    return "postgresql" if "postgres" in type(store).__name__.lower() else "sqlite"


class StoreProvider(Provider):
    """Routes one URI scheme (``sqlite`` or ``postgresql``) of a post office into ``store``."""

    def __init__(
        self,
        store: MailboxStore,
        *,
        scheme: str | None = None,
        codec: Codec | None = None,
        **options: Any,
    ) -> None:
        if not isinstance(store, MailboxStore):
            raise OptionsError(f"StoreProvider needs a MailboxStore, got {store!r}")
        super().__init__(**options)
        self.store = store
        self.scheme = scheme or _scheme_of(store)
        self.codec = codec or default_codec

    @property
    def supports(self) -> frozenset[str]:
        return frozenset({"peek"})

    async def _send(self, message: MailMessage) -> None:
        headers = dict(message.headers)
        headers[LETTER_ID_HEADER] = message.id
        origin = message.from_
        if origin is not None:
            headers[SENDER_HEADER] = str(origin)
        payload = self.codec.encode(message.body)
        sender = str(origin) if origin is not None else ANONYMOUS
        if len(sender.encode()) > 256:
            sender = ANONYMOUS
        await self.store.send(store_mailbox_of(message.to), payload, sender=sender, headers=headers)

    async def peek(self, address: MailAddress, limit: int) -> list[MailMessage]:
        """The pending messages of the address's store mailbox, decoded, oldest first."""
        stored = await self.store.peek(store_mailbox_of(address), max=limit)
        letters = []
        for item in stored:
            headers = dict(item.headers)
            origin = headers.get(SENDER_HEADER)
            letters.append(
                MailMessage(
                    id=headers.pop(LETTER_ID_HEADER, item.message_id),
                    to=address,
                    body=self.codec.decode(item.payload),
                    from_=MailAddress.parse(origin) if origin else None,
                    headers=headers,
                )
            )
        return letters
