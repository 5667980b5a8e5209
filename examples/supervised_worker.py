"""A worker that crashes and is restarted by its parent, with backoff and a restart budget.

The parent's ``supervisor_strategy`` decides what happens when a child's handler raises:
here ``OneForOneStrategy`` restarts only the failing child, at most 3 times within
10 seconds, waiting ``min(max_delay, min_delay * 2**n)`` seconds (plus up to 20% jitter)
before the n-th consecutive restart. A fourth failure inside the window stops the worker
for good, and the parent, which watches it, receives ``Terminated``.

What a restart keeps and loses:
  * the actor *instance* is new (fresh state from the factory), so is its mailbox;
  * messages queued behind the failing one are carried over, in order;
  * the failing message itself is not redelivered (it was delivered, and it failed).

Run it with:  python examples/supervised_worker.py
"""

import asyncio
import itertools
import time

import dovecote
from dovecote import (
    Actor,
    ActorSystem,
    Backoff,
    DeadLetter,
    OneForOneStrategy,
    Terminated,
)
from dovecote.observability import configure_logging

START = time.monotonic()
incarnations = itertools.count(1)


def log(text: str) -> None:
    print(f"  {time.monotonic() - START:5.2f}s  {text}")


class Worker(Actor):
    def __init__(self) -> None:
        super().__init__()
        self.incarnation = next(incarnations)
        self.done = 0
        log(f"worker #{self.incarnation}: __init__")

    def pre_start(self) -> None:
        log(f"worker #{self.incarnation}: pre_start")

    def pre_restart(self, error: BaseException, message: object) -> None:
        log(f"worker #{self.incarnation}: pre_restart({error!r}, failing message={message!r})")
        super().pre_restart(error, message)  # default: stop children, then post_stop()

    def post_restart(self, error: BaseException) -> None:
        log(f"worker #{self.incarnation}: post_restart({error!r})")
        super().post_restart(error)  # default: pre_start()

    def post_stop(self) -> None:
        log(f"worker #{self.incarnation}: post_stop")

    def on_receive(self, message: str) -> None:
        if message.startswith("poison"):
            log(f"worker #{self.incarnation}: {message!r} -> raising ValueError")
            raise ValueError(f"cannot digest {message}")
        self.done += 1
        log(f"worker #{self.incarnation}: processed {message!r} ({self.done} so far)")


class Supervisor(Actor):
    # How THIS actor treats its failing children.
    supervisor_strategy = OneForOneStrategy(
        max_restarts=3, within=10.0, backoff=Backoff(min_delay=0.05, max_delay=0.5)
    )

    def __init__(self, finished: asyncio.Future[None]) -> None:
        super().__init__()
        self.finished = finished

    def pre_start(self) -> None:
        self.worker = self.context.spawn(Worker, "worker")
        self.context.watch(self.worker)  # death watch: Terminated(worker) when it stops

    def on_receive(self, message: object) -> None:
        if isinstance(message, Terminated):
            log(f"supervisor: {message.ref.path} stopped for good (restart budget spent)")
            self.finished.set_result(None)
        else:
            self.worker.tell(message)  # forward jobs


async def main() -> None:
    configure_logging("CRITICAL")  # hide the runtime's "actor failed" tracebacks
    async with ActorSystem("jobs") as system:
        finished = asyncio.get_running_loop().create_future()
        supervisor = system.spawn(lambda: Supervisor(finished), "supervisor")
        system.event_stream.subscribe(
            lambda letter: log(f"dead letter: {letter.message!r} ({letter.reason})"), DeadLetter
        )

        # Round 1: the poison pill sits between two good jobs. The job queued behind it
        # survives the restart; the poison is not redelivered.
        for job in ("job-1", "poison-1", "job-2"):
            supervisor.tell(job)
        await asyncio.sleep(0.3)

        # Round 2: keep poisoning. Restarts 2 and 3 wait longer (backoff doubles);
        # the 4th failure within 10 s exceeds max_restarts=3 and stops the worker.
        for job in ("poison-2", "poison-3", "poison-4", "job-3"):
            supervisor.tell(job)
        await asyncio.wait_for(finished, timeout=2.0)
        print(f"worker incarnations: {next(incarnations) - 1}; supervisor alive: ", end="")
        print(f"{supervisor.is_alive}; dead letters: {system.dead_letters_count}")


if __name__ == "__main__":
    dovecote.run(main())
