"""The smallest round trip every backend must pass: send, claim, commit."""

from __future__ import annotations

from typing import Any


async def test_a_sent_message_is_claimed_and_committed(store: Any) -> None:
    await store.ensure_mailbox("alice")
    sent = await store.send("alice", b"hello", sender="ops")
    claim = await store.claim("alice", claimer="worker-1")
    assert claim is not None
    assert claim.message.message_id == sent.message_id
    await store.commit(sent.message_id, claimer="worker-1", checkpoint_token="t")
    assert await store.is_committed("alice", sent.message_id)
