"""A worker whose queue survives ``kill -9``: durable actor mailboxes on SQLite.

The parent fills the store mailbox ``jobs`` with 30 jobs, starts a worker process, and
kills it with SIGKILL after it has handled a few of them — in the middle of a job. It
then starts a second worker on the same database file. That worker handles every job
the first one did not commit, including the one that was in progress when the first
died: its claim's lease (here 300 ms) runs out, the sweeper puts it back, and it is
delivered again. Delivery is at-least-once, so the handler is written to be safe to
run twice for one job.

Run it with:  python examples/durable_worker.py
"""

from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
from pathlib import Path

import msgspec

from dovecote import Actor, ActorOptions, ActorSystem
from dovecote.codec import encode, register
from dovecote.durable import open_store

JOBS = 30
KILL_AFTER = 8
LEASE_MS = 300


@register
class Job(msgspec.Struct, frozen=True):
    """One unit of work (registered with the codec: it crosses the process boundary)."""

    number: int


class Worker(Actor):
    """Handles jobs one at a time; each is committed in the store after it returns."""

    def __init__(self, finished: asyncio.Future[None]) -> None:
        super().__init__()
        self.finished = finished

    async def on_receive(self, message: object) -> None:
        if message == "no more jobs":
            self.finished.set_result(None)
            return
        assert isinstance(message, Job)
        await asyncio.sleep(0.02)  # the work; a kill -9 lands in here
        print(f"handled job {message.number}", flush=True)


async def run_worker(database: str) -> None:
    """The child process: a durable worker over the shared database file."""
    async with (
        open_store(f"sqlite:///{database}", sweep_interval=0.1) as store,
        ActorSystem("worker") as system,  # shut down first: its last commits reach the store
    ):
        finished = asyncio.get_running_loop().create_future()
        options = ActorOptions.create().with_durable_mailbox(
            store, "jobs", lease_duration_ms=LEASE_MS
        )
        system.spawn(lambda: Worker(finished), "worker", options)
        await finished


async def start_worker(database: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--worker", database, stdout=asyncio.subprocess.PIPE
    )


async def read_handled(process: asyncio.subprocess.Process, stop_after: int | None) -> list[int]:
    """Job numbers the worker reports, until it exits (or ``stop_after`` of them)."""
    assert process.stdout is not None
    handled: list[int] = []
    while stop_after is None or len(handled) < stop_after:
        line = await process.stdout.readline()
        if not line:
            break
        if line.startswith(b"handled job "):
            handled.append(int(line.split()[-1]))
    return handled


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        database = str(Path(tmp) / "jobs.db")
        async with open_store(f"sqlite:///{database}", sweep_interval=None) as store:
            await store.ensure_mailbox("jobs", ordering_mode="unordered")
            for number in range(JOBS):
                await store.send("jobs", encode(Job(number)), sender="producer")
            await store.send("jobs", encode("no more jobs"), sender="producer")
        print(f"queued {JOBS} jobs in {Path(database).name}")

        first = await start_worker(database)
        before = await read_handled(first, KILL_AFTER)
        first.send_signal(signal.SIGKILL)
        await first.wait()
        print(f"worker 1 handled {len(before)} jobs, then got kill -9 (exit {first.returncode})")

        second = await start_worker(database)
        after = await asyncio.wait_for(read_handled(second, None), 60)
        await second.wait()
        again = sorted(set(before) & set(after))
        print(f"worker 2 handled the other {len(set(after) - set(before))} jobs")
        print(f"handled twice (at-least-once): {again}")

        async with open_store(f"sqlite:///{database}", sweep_interval=None) as store:
            stats = await store.stats("jobs")
        missing = sorted(set(range(JOBS)) - set(before) - set(after))
        print(f"every job handled: {not missing}")
        print(
            f"store: committed {stats.committed_count}, pending {stats.pending_count}, "
            f"claimed {stats.claimed_count}"
        )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        asyncio.run(run_worker(sys.argv[2]))
    else:
        asyncio.run(main())
