"""A connection actor that stashes requests until it is connected (stash + become).

While "connecting", the actor cannot serve requests, but it must not lose them either:
it sets each one aside with ``context.stash()``. When the connection is up it switches
behaviour with ``context.become(self.online)`` and replays everything with
``context.unstash_all()``: stashed messages go back to the front of the mailbox, in the
order they arrived, ahead of anything sent later. On a disconnect it goes back to its
original behaviour with ``context.unbecome()`` and starts stashing again.

Stashing an ``ask`` is fine: the asker simply waits until the message is handled.

Run it with:  python examples/connection_stash.py
"""

import asyncio
import time

import dovecote
from dovecote import Actor, ActorSystem

CONNECT_DELAY = 0.05  # seconds the fake network takes to connect
START = time.monotonic()


def log(text: str) -> None:
    print(f"  {time.monotonic() - START:5.2f}s  {text}")


class Connected:
    """Sent by the connection's own timer when the (fake) handshake completes."""


class Disconnected:
    """Sent when the network drops."""


class Connection(Actor):
    def __init__(self) -> None:
        super().__init__()
        self.attempt = 0

    def pre_start(self) -> None:
        self.connect()

    def connect(self) -> None:
        self.attempt += 1
        log(f"connecting (attempt {self.attempt})...")
        # A timer owned by this actor: it is cancelled automatically if the actor stops.
        self.context.schedule_once(CONNECT_DELAY, Connected())

    # The initial behaviour: offline.
    def on_receive(self, message: object) -> None:
        if isinstance(message, Connected):
            log("connected: replaying the stash")
            self.context.become(self.online)
            self.context.unstash_all()
        elif isinstance(message, Disconnected):
            pass  # already offline
        else:
            log(f"offline, stashing {message!r}")
            self.context.stash()

    # The behaviour after become(): same signature as on_receive.
    async def online(self, message: object) -> str | None:
        if isinstance(message, Disconnected):
            log("disconnected: back to stashing")
            self.context.unbecome()  # back to on_receive
            self.connect()
            return None
        await asyncio.sleep(0.005)  # a network round trip; no other message interleaves
        log(f"sent {message!r}")
        return f"ok:{message}"


async def main() -> None:
    async with ActorSystem("net") as system:
        conn = system.spawn(Connection, "db-connection")

        # Requests arrive before the connection is up: two tells and two asks.
        conn.tell("SET a 1")
        conn.tell("SET b 2")
        replies = asyncio.gather(conn.ask("GET a"), conn.ask("GET b"))
        print("asks answered after connecting:", await replies)

        conn.tell(Disconnected())
        conn.tell("SET c 3")  # stashed until the reconnect
        print("ask after reconnect:", await conn.ask("GET c"))


if __name__ == "__main__":
    dovecote.run(main())
