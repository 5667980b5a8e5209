"""Failures that start nothing are loud: logged with traceback, on ActorStopped, as a cause."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from actor_kit import TIMEOUT, Boom, Echo
from structlog.testing import capture_logs

from dovecote import Actor, ActorStopped, ActorStoppedError


@pytest.fixture
def logs() -> Iterator[list[dict[str, Any]]]:
    structlog.reset_defaults()
    with capture_logs() as captured:
        yield captured
    structlog.reset_defaults()


class NeedsPath(Actor):
    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path


class OpensMissingFile(Actor):
    def pre_start(self) -> None:
        open("/nonexistent/dovecote/config.toml")  # noqa: SIM115 - it raises


class AsyncPreStartFails(Actor):
    async def pre_start(self) -> None:
        await asyncio.sleep(0)
        raise Boom("async pre_start")


def failing_factory() -> Actor:
    raise Boom("factory")


CASES = {
    "missing constructor argument": (NeedsPath, TypeError),
    "factory raises": (failing_factory, Boom),
    "pre_start raises": (OpensMissingFile, FileNotFoundError),
    "async pre_start raises": (AsyncPreStartFails, Boom),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_start_failure_is_logged_published_and_the_cause_of_the_askers_error(
    system, logs, case
):
    factory, expected = CASES[case]
    stopped: list[ActorStopped] = []
    system.event_stream.subscribe(stopped.append, ActorStopped)
    ref = system.spawn(factory, "fails")
    pending = ref.ask("hello", timeout=TIMEOUT)  # queued before the start runs
    with pytest.raises(ActorStoppedError) as caught:
        await pending
    assert isinstance(caught.value.__cause__, expected), repr(caught.value.__cause__)

    await asyncio.wait_for(ref.stop(), TIMEOUT)
    assert [event.ref for event in stopped] == [ref]
    assert isinstance(stopped[0].error, expected)
    assert stopped[0].error is caught.value.__cause__

    errors = [e for e in logs if e["log_level"] == "error" and e.get("path") == "/user/fails"]
    assert errors, logs
    logged = errors[0].get("exc_info")
    assert isinstance(logged, BaseException), errors[0]  # rendered with its traceback
    assert logged.__cause__ is stopped[0].error


async def test_an_actor_stopped_on_request_has_no_error(system):
    stopped: list[ActorStopped] = []
    system.event_stream.subscribe(stopped.append, ActorStopped)
    ref = system.spawn(Echo)
    await asyncio.wait_for(ref.stop(), TIMEOUT)
    assert [(event.ref, event.error) for event in stopped] == [(ref, None)]
