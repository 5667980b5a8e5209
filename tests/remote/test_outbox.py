"""The outbox batches tells per node without losing, duplicating or reordering any."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from dovecote.remote import _wire as w
from dovecote.remote._outbox import Outbox

NODES = ["n1", "n2", "n3"]
# (node index, body size) for a tell, or (node index, None) for an ask/stop (a flush)
OPS = st.lists(st.tuples(st.integers(0, 2), st.one_of(st.none(), st.integers(0, 300))), max_size=60)


def unpack(published: list[tuple[str, bytes]]) -> dict[str, list[bytes]]:
    """What each node receives, in order, as the bodies of its tells."""
    got: dict[str, list[bytes]] = {n: [] for n in NODES}
    for subject, payload in published:
        frame = msgspec.msgpack.decode(payload)
        node = subject.split(".")[0]
        if frame[0] == w.TELL:
            got[node].append(frame[2])
        else:
            assert frame[0] == w.BATCH
            assert subject == node + "._b"
            got[node].extend(entry[2] for entry in frame[1])
    return got


@settings(max_examples=60, deadline=None)
@given(OPS, st.integers(200, 2000))
def test_every_tell_arrives_once_in_order_and_no_message_exceeds_the_limit(
    ops: list[tuple[int, int | None]], limit: int
) -> None:
    loop = asyncio.new_event_loop()
    try:
        published: list[tuple[str, bytes]] = []
        outbox = Outbox(loop, lambda subject, payload: published.append((subject, payload)))
        outbox.set_limit(limit)
        sent: dict[str, list[bytes]] = {n: [] for n in NODES}
        for seq, (index, size) in enumerate(ops):
            node = NODES[index]
            if size is None:
                outbox.flush(node)  # what an ask or a stop to that node does first
                continue
            body = seq.to_bytes(2, "big") + b"x" * min(size, limit // 4)
            sent[node].append(body)
            outbox.add(node, f"{node}.user.a", "/user/a", None, body)
        loop.call_soon(loop.stop)
        loop.run_forever()  # the end-of-iteration flush
        assert unpack(published) == sent
        assert all(len(payload) <= limit for _, payload in published)
    finally:
        loop.close()


def test_a_lone_tell_goes_to_its_actors_subject() -> None:
    loop = asyncio.new_event_loop()
    published: list[Any] = []
    outbox = Outbox(loop, lambda subject, payload: published.append((subject, payload)))
    outbox.add("n1", "n1.user.a", "/user/a", "nats://s@h/user/b", b"\x01")
    outbox.flush_all()
    assert published == [("n1.user.a", w.encode_frame(w.TELL, "nats://s@h/user/b", b"\x01"))]
    loop.close()
