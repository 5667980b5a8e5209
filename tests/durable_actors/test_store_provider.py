"""post() to a sqlite:// address lands in the store; a durable actor on that mailbox gets it."""

from __future__ import annotations

from typing import Any

import pytest

from dovecote import ActorSystem, OptionsError
from dovecote.addressing import MailAddress
from dovecote.codec import decode
from dovecote.durable import SENDER_HEADER, StoreProvider, store_mailbox_of

from .recorder import Recorder, Seen, durable


async def test_a_post_lands_in_the_named_store_mailbox(system: ActorSystem, store: Any) -> None:
    office = system.post_office
    provider = StoreProvider(store)
    office.register_provider(provider)
    address = f"{provider.scheme}://orders@local/inbox"
    sent = await office.post(to=address, body={"order": 7}, headers={"trace": "t-1"})
    [stored] = await store.peek("orders/inbox")
    assert decode(stored.payload) == {"order": 7}
    assert stored.headers["trace"] == "t-1"
    [letter] = await office.fetch(address, peek=True, limit=5)
    assert (letter.id, letter.body) == (sent.id, {"order": 7})


async def test_a_durable_actor_on_that_mailbox_receives_posts_with_their_sender(
    system: ActorSystem, store: Any
) -> None:
    provider = StoreProvider(store)
    system.post_office.register_provider(provider)
    seen, replies = Seen(), Seen()
    sender = system.spawn(lambda: Recorder(replies), "clerk")
    system.spawn(lambda: Recorder(seen), "orders", durable(store, mailbox="orders/inbox"))
    await system.post_office.post(
        to=f"{provider.scheme}:orders@local/inbox", body=("ship", 3), from_=sender.address
    )
    await seen.count(1)
    assert seen.messages == [["ship", 3]]
    assert seen.senders == [sender]


def test_mailbox_names_and_schemes() -> None:
    assert store_mailbox_of(MailAddress.parse("sqlite://orders@local/inbox")) == "orders/inbox"
    assert store_mailbox_of(MailAddress.parse("sqlite://orders@local/a/b/")) == "orders/a/b"
    with pytest.raises(OptionsError):
        StoreProvider(object())  # type: ignore[arg-type]


async def test_the_provider_scheme_follows_the_store(store: Any) -> None:
    expected = "postgresql" if "Postgres" in type(store).__name__ else "sqlite"
    assert StoreProvider(store).scheme == expected
    assert StoreProvider(store, scheme="postgresql").scheme == "postgresql"
    assert SENDER_HEADER == "dovecote-sender"
