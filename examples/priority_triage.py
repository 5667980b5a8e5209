"""A triage worker that always handles the most urgent ticket first: a PriorityMailbox.

``priority_for`` maps each message to a number; lower numbers come out first and
tickets of equal priority keep their arrival order (FIFO within a tier). The mailbox
is built by a factory, so every incarnation of the actor (after a restart) gets a
fresh one.

Run it with:  python examples/priority_triage.py
"""

import asyncio

import attrs

import dovecote
from dovecote import Actor, ActorOptions, ActorSystem, PriorityMailbox

SEVERITY = {"critical": 0, "high": 1, "normal": 2, "low": 3}


@attrs.frozen
class Ticket:
    id: int
    severity: str
    title: str


def priority_for(message: object) -> int:
    """Tickets by severity; anything else (queries like "report") after every ticket."""
    if isinstance(message, Ticket):
        return SEVERITY[message.severity]
    return 9


class TriageWorker(Actor):
    def __init__(self) -> None:
        super().__init__()
        self.handled: list[Ticket] = []

    async def on_receive(self, message: object) -> list[int] | None:
        if isinstance(message, Ticket):
            await asyncio.sleep(0.001)  # pretend to work on it
            self.handled.append(message)
            print(f"  handled #{message.id:<2} {message.severity:<8} {message.title}")
            return None
        if message == "report":
            return [ticket.id for ticket in self.handled]
        return None


async def main() -> None:
    async with ActorSystem("helpdesk") as system:
        options = ActorOptions.create().with_mailbox(
            lambda: PriorityMailbox(priority_for=priority_for)
        )
        worker = system.spawn(TriageWorker, "triage", options)

        inbox = [
            Ticket(1, "low", "typo on the about page"),
            Ticket(2, "normal", "export button is slow"),
            Ticket(3, "critical", "checkout returns 500"),
            Ticket(4, "low", "dark mode colours"),
            Ticket(5, "high", "password reset email delayed"),
            Ticket(6, "critical", "database disk at 95%"),
            Ticket(7, "normal", "CSV has a stray column"),
        ]
        print("arrival order:", [f"#{t.id} {t.severity}" for t in inbox])
        for ticket in inbox:  # all queued before the worker's first turn
            worker.tell(ticket)

        order = await worker.ask("report")  # priority 9: answered after every ticket
        print("handled order:", order)
        assert order == [3, 6, 5, 2, 7, 1, 4]  # critical, high, normal, low; FIFO within each

        # A ticket arriving while the worker is busy still jumps the queue.
        for ticket in (Ticket(8, "low", "favicon missing"), Ticket(9, "low", "footer link")):
            worker.tell(ticket)
        await asyncio.sleep(0)  # the worker starts on #8 and awaits inside it
        worker.tell(Ticket(10, "critical", "payments down"))
        order = await worker.ask("report")
        print("second round:", order[7:], "(#10 overtook #9 while #8 was in progress)")


if __name__ == "__main__":
    dovecote.run(main())
