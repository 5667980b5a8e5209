"""Human-in-the-loop approval over the post office.

A producer posts approval requests to an address and waits for decisions on its own
reply address. A separate reviewer (a stand-in for a person working at their own pace)
pulls each request with a lease, decides, posts the decision back and acks the request.
One request is deferred once (``ack("unhandled")``) to show that it comes back.

Run it with ``python examples/approval_flow.py``; it finishes on its own.
"""

from __future__ import annotations

import asyncio

from dovecote.addressing import MailMessage, MemoryProvider, PostOffice

REQUESTS = "mem:approvals@bank.example/requests"
DECISIONS = "mem:payments@bank.example/decisions"


async def producer(office: PostOffice, amounts: list[int]) -> list[str]:
    """Post one request per amount and collect a decision for each."""
    decisions: asyncio.Queue[MailMessage] = asyncio.Queue()

    async def on_decision(message: MailMessage) -> None:
        await decisions.put(message)

    async with await office.subscribe(DECISIONS, on_decision):
        for number, amount in enumerate(amounts, start=1):
            await office.post(
                to=REQUESTS,
                from_=DECISIONS,
                id=f"payment-{number}",
                body={"amount": amount},
            )
            print(f"producer: asked for approval of payment-{number} ({amount} EUR)")
        results = []
        for _ in amounts:
            decision = await asyncio.wait_for(decisions.get(), timeout=5)
            results.append(f"{decision.body['request']}: {decision.body['verdict']}")
            print(f"producer: {results[-1]}")
        return results


async def reviewer(office: PostOffice, expected: int) -> None:
    """Pull requests under a lease, decide, reply, and settle each one exactly once."""
    deferred: set[str] = set()
    decided = 0
    while decided < expected:
        lease = await office.fetch(REQUESTS, manual_ack=True, ack_timeout=10)
        if lease is None:
            await asyncio.sleep(0.01)  # a person checks the inbox now and then
            continue
        request = lease.message
        amount = request.body["amount"]
        if amount > 1_000 and request.id not in deferred:
            deferred.add(request.id)
            print(f"reviewer: {request.id} needs a second look, putting it back")
            await lease.ack("unhandled")
            continue
        verdict = "approved" if amount <= 5_000 else "rejected"
        assert request.from_ is not None
        await office.post(to=request.from_, body={"request": request.id, "verdict": verdict})
        await lease.ack("handled")
        decided += 1
        print(f"reviewer: {request.id} {verdict} (round {request.headers['mbx-round']})")


async def main() -> None:
    async with PostOffice([MemoryProvider.create_isolated()]) as office:
        amounts = [120, 2_500, 9_000]
        results, _ = await asyncio.gather(
            producer(office, amounts), reviewer(office, len(amounts))
        )
        status = await office.status(REQUESTS)
        print(f"done: {len(results)} decisions, {status.unread_count} requests left, "
              f"{status.in_flight_count} in flight")


if __name__ == "__main__":
    asyncio.run(main())
