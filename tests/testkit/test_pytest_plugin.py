"""The pytest plugin: its fixtures work in a project that only installed dovecote."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

_PROJECT_TEST = '''
from dovecote import Actor

class Echo(Actor):
    def on_receive(self, message):
        self.context.sender.tell(message)

async def test_probe_and_system(actor_system, probe):
    ref = actor_system.spawn(Echo, "echo")
    ref.tell("hi", sender=probe.ref)
    assert await probe.expect_message("hi") == "hi"

def test_manual_clock_alone(manual_clock):
    manual_clock.advance(2.5)
    assert manual_clock.now() == 2.5
'''

_CLOCK_TEST = '''
async def test_system_runs_on_the_manual_clock(actor_system, manual_clock):
    assert actor_system.clock is manual_clock
'''

_STORE_TEST = '''
async def test_durable_store(durable_store):
    await durable_store.send("alice", b"hi", sender="bob")
    claim = await durable_store.claim("alice", claimer="w")
    assert claim.message.payload == b"hi"
'''


def _run(pytester: pytest.Pytester, source: str, passed: int) -> None:
    pytester.makepyfile(test_project=source)
    pytester.makeini(
        "[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n"
    )
    # strict mode: the plugin's fixtures must work without auto mode.
    source_strict = source.replace("async def test", "@pytest.mark.asyncio\nasync def test")
    pytester.makepyfile(test_project="import pytest\n" + source_strict)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=passed)


def test_plugin_fixtures_are_registered_by_entry_point(pytester: pytest.Pytester) -> None:
    _run(pytester, _PROJECT_TEST, passed=2)


def test_actor_system_uses_the_manual_clock_when_both_are_requested(
    pytester: pytest.Pytester,
) -> None:
    _run(pytester, _CLOCK_TEST, passed=1)


def test_durable_store_fixture_is_an_in_memory_sqlite_store(pytester: pytest.Pytester) -> None:
    _run(pytester, _STORE_TEST, passed=1)
