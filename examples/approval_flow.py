"""Human-in-the-loop approval: an actor asks by address, a person answers at their own pace.

The ``clerk`` actor posts each payment it is given to the address
``mem://approvals@local/queue/requests`` through ``self.context.system.post_office``,
with its own address as ``from_``. Nobody subscribes to that address, so the requests
queue there. A reviewer (a plain coroutine standing in for a person) pulls them with a
lease (``fetch(..., manual_ack=True, ack_timeout=...)``), decides, posts the decision to
the requester's address and acks the request ``"handled"``. One request is deferred once
(``ack("unhandled")``) and comes back. A letter to a live actor's address is delivered into
its mailbox: the clerk's ``on_receive`` gets the decision's body and prints the outcome.

Run it with ``python examples/approval_flow.py``; it finishes on its own in about a second.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import dovecote
from dovecote import Actor, ActorSystem
from dovecote.addressing import PostOffice

REQUESTS = "mem://approvals@local/queue/requests"


@dataclass(frozen=True)
class Submit:
    """Ask the clerk to get a payment approved."""

    number: int
    amount: int


class Clerk(Actor):
    """Posts approval requests and handles the decisions that come back to its address."""

    def __init__(self, expected: int, finished: asyncio.Future[list[str]]) -> None:
        super().__init__()
        self.expected = expected
        self.finished = finished
        self.outcomes: list[str] = []

    async def on_receive(self, message: Any) -> None:
        if isinstance(message, Submit):
            await self.context.system.post_office.post(
                to=REQUESTS,
                from_=self.context.self.address,  # where the decision must come back
                id=f"payment-{message.number}",
                body={"amount": message.amount},
            )
            print(f"clerk: asked for approval of payment-{message.number} "
                  f"({message.amount} EUR)")
        elif isinstance(message, dict) and "verdict" in message:
            # a letter posted to this actor's address: on_receive gets its body
            self.outcomes.append(f"{message['request']}: {message['verdict']}")
            print(f"clerk: {self.outcomes[-1]}")
            if len(self.outcomes) == self.expected and not self.finished.done():
                self.finished.set_result(self.outcomes)


async def reviewer(office: PostOffice, expected: int) -> None:
    """Pull requests under a lease, decide, answer, and settle each lease exactly once."""
    deferred: set[str] = set()
    decided = 0
    while decided < expected:
        lease = await office.fetch(REQUESTS, manual_ack=True, ack_timeout=10)
        if lease is None:
            await asyncio.sleep(0.01)  # a person checks the inbox now and then
            continue
        request = lease.message
        await asyncio.sleep(0.05)  # reading it takes a moment
        amount = request.body["amount"]
        if amount > 1_000 and request.id not in deferred:
            deferred.add(request.id)
            print(f"reviewer: {request.id} needs a second look, putting it back")
            await lease.ack("unhandled")  # back in the queue, handed out again later
            continue
        verdict = "approved" if amount <= 5_000 else "rejected"
        assert request.from_ is not None
        await office.post(to=request.from_, body={"request": request.id, "verdict": verdict})
        await lease.ack("handled")
        decided += 1
        print(f"reviewer: {request.id} {verdict} (round {request.headers['mbx-round']})")


async def main() -> None:
    amounts = [120, 2_500, 9_000]
    async with ActorSystem("payments") as system:
        office = system.post_office
        finished: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        clerk = system.spawn(lambda: Clerk(len(amounts), finished), "clerk")
        print(f"clerk lives at {clerk.address}")
        for number, amount in enumerate(amounts, start=1):
            clerk.tell(Submit(number, amount))
        await asyncio.wait_for(reviewer(office, len(amounts)), timeout=5)
        outcomes = await asyncio.wait_for(finished, timeout=5)
        await office.wait_settled()
        status = await office.status(REQUESTS)
        print(f"done: {len(outcomes)} decisions, {status.unread_count} requests left, "
              f"{status.in_flight_count} in flight")


if __name__ == "__main__":
    dovecote.run(main())
