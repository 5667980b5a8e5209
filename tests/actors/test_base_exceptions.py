"""A BaseException that is not an Exception stops the whole system and comes back out.

In-process tests use a BaseException subclass of their own (and SystemExit, which
pytest survives); the real ``sys.exit(3)`` and Ctrl-C run in subprocesses, bounded in
time.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest
from actor_kit import TIMEOUT, Echo, Inbox

from dovecote import Actor, ActorOptions, ActorStoppedError, ActorSystem

BLOCKING = ActorOptions.create().with_dispatcher("blocking")
PROMPT = 1.0 + 1.0  # the contract's 1 s, plus slack for this busy machine


class Halt(BaseException):
    """A user's own BaseException."""


class Raiser(Actor):
    """Raises ``error`` from the place named by ``where``."""

    def __init__(self, where: str, error: BaseException, inbox: Inbox) -> None:
        super().__init__()
        self.where = where
        self.error = error
        self.inbox = inbox

    def pre_start(self) -> None:
        if self.where == "pre_start":
            raise self.error

    async def post_stop(self) -> None:
        self.inbox.add("post_stop")
        if self.where == "post_stop":
            raise self.error

    def on_receive(self, message: Any) -> Any:
        if self.where == "sync handler":
            raise self.error
        return self._async(message)

    async def _async(self, message: Any) -> Any:
        await asyncio.sleep(0)
        if self.where == "async handler":
            raise self.error
        return message


class BlockingRaiser(Actor):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    def on_receive(self, message: Any) -> Any:
        raise self.error


def spawn_raiser(system: ActorSystem, where: str, error: BaseException, inbox: Inbox) -> Any:
    if where == "blocking handler":
        return system.spawn(lambda: BlockingRaiser(error), "raiser", BLOCKING)
    return system.spawn(lambda: Raiser(where, error, inbox), "raiser")


async def serve_until_halted(where: str, error: BaseException, seen: dict[str, Any]) -> None:
    """A program that serves forever; ``error`` is raised in the actor at ``where``."""
    async with ActorSystem("halting") as system:
        seen["system"] = system
        seen["bystander"] = bystander = system.spawn(Echo, "bystander")
        seen["raiser"] = raiser = spawn_raiser(system, where, error, Inbox())
        assert await bystander.ask("alive", timeout=TIMEOUT) == "alive"
        if where == "post_stop":
            raiser.stop()
        else:
            seen["answers"].append(raiser.ask("go", timeout=TIMEOUT * 5))
        await asyncio.Event().wait()  # a server that would wait forever


WHERE = ["sync handler", "async handler", "blocking handler", "pre_start", "post_stop"]


@pytest.mark.parametrize("error_type", [Halt, SystemExit])
@pytest.mark.parametrize("where", WHERE)
async def test_a_base_exception_stops_the_system_and_is_reraised_from_async_with(
    where, error_type
):
    error = error_type(3)
    seen: dict[str, Any] = {"answers": []}
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(error_type) as caught:
        await serve_until_halted(where, error, seen)
    assert caught.value is error
    system, raiser, bystander, answers = (
        seen["system"], seen["raiser"], seen["bystander"], seen["answers"]
    )
    assert loop.time() - started < PROMPT
    assert not raiser.is_alive
    assert not bystander.is_alive
    assert system.is_shut_down
    for answer in answers:  # the asker is not left waiting, and learns why
        with pytest.raises(ActorStoppedError) as stopped:
            await answer
        assert stopped.value.__cause__ is error


def run_script(source: str, *, timeout: float = 20.0, sigint_after: str | None = None) -> Any:
    """Run a Python script in a fresh interpreter; SIGINT once it prints ``sigint_after``."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(source)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    started = time.monotonic()
    if sigint_after is not None:
        assert process.stdout is not None
        line = process.stdout.readline()  # blocks until the script is ready
        assert line.strip() == sigint_after, (line, process.stderr.read() if process.stderr else "")
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"the script did not end within {timeout}s\n{err}") from None
    return process.returncode, time.monotonic() - started, out, err


SYS_EXIT_SCRIPT = """
    import asyncio, sys
    import dovecote
    from dovecote import Actor, ActorSystem

    class Quitter(Actor):
        def on_receive(self, message):
            sys.exit(3)

    async def main():
        {body}

    dovecote.run(main())
    print("not reached")
"""

WITH_BLOCK = """async with ActorSystem("quits") as system:
            system.spawn(Quitter).tell("quit")
            await asyncio.Event().wait()"""
WITHOUT_BLOCK = """system = ActorSystem("quits")
        system.spawn(Quitter).tell("quit")
        await asyncio.Event().wait()"""


@pytest.mark.parametrize("body", [WITH_BLOCK, WITHOUT_BLOCK], ids=["async with", "no async with"])
def test_sys_exit_in_a_handler_exits_the_process_promptly_with_its_code(body):
    code, seconds, out, err = run_script(SYS_EXIT_SCRIPT.format(body=body))
    assert code == 3, err
    assert seconds < 8.0, f"took {seconds:.1f}s\n{err}"  # interpreter start included
    assert "not reached" not in out


SIGINT_SCRIPT = """
    import asyncio, threading
    import dovecote
    from dovecote import Actor, ActorOptions, ActorSystem

    started = threading.Event()

    class Sleeper(Actor):
        def on_receive(self, message):
            started.set()
            threading.Event().wait()  # stuck for good: only the process's end frees it

    async def main():
        async with ActorSystem("sleepy") as system:
            ref = system.spawn(Sleeper, options=ActorOptions.create().with_dispatcher("blocking"))
            ref.tell("sleep")
            await asyncio.to_thread(started.wait)
            print("ready", flush=True)
            await asyncio.Event().wait()

    dovecote.run(main())
"""


def test_the_first_ctrl_c_ends_a_program_whose_blocking_handler_is_stuck():
    code, seconds, _, err = run_script(SIGINT_SCRIPT, sigint_after="ready")
    assert code != 0
    assert seconds < 5.0, f"took {seconds:.1f}s after SIGINT\n{err}"


async def test_blocking_workers_are_daemon_threads(system):
    class WhoAmI(Actor):
        def on_receive(self, message: Any) -> Any:
            return threading.current_thread().daemon

    ref = system.spawn(WhoAmI, options=BLOCKING)
    assert await ref.ask("daemon?", timeout=TIMEOUT) is True
