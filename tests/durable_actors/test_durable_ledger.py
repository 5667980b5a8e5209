"""The ledger holds for durable actors: every told message is handled, stored or a dead letter."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dovecote import Actor, ActorOptions, ActorSystem, OneForOneStrategy
from dovecote.durable import NonRetriableError, open_store

from .recorder import Seen


class Mixed(Actor):
    """ "ok" is handled, "bad" fails for good, "flaky" fails once per incarnation."""

    def __init__(self, seen: Seen, handled: list[int]) -> None:
        super().__init__()
        self.seen = seen
        self.handled = handled
        self.failed_once = False

    def on_receive(self, message: Any) -> None:
        kind, number = message
        self.seen.add(message)
        if kind == "bad":
            raise NonRetriableError(f"bad {number}")
        if kind == "flaky" and self.seen.messages.count(message) == 1:
            raise ValueError(f"flaky {number}")
        self.handled.append(number)


@settings(max_examples=8, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(["ok", "bad", "flaky"]), min_size=1, max_size=25),
    stop_after=st.integers(min_value=0, max_value=30),
)
def test_told_equals_handled_plus_dead_lettered_plus_still_stored(
    kinds: list[str], stop_after: int
) -> None:
    import asyncio

    asyncio.run(_scenario(kinds, stop_after))


async def _scenario(kinds: list[str], stop_after: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'ledger.db'}"
        async with open_store(url, sweep_interval=None) as store:
            seen, handled = Seen(), []
            async with ActorSystem("ledger") as system:
                # a restart budget that no scenario spends: the model has no STOP in it
                options = (
                    ActorOptions.create()
                    .with_durable_mailbox(store, mailbox="ledger")
                    .with_supervisor_strategy(OneForOneStrategy(max_restarts=1_000))
                )
                ref = system.spawn(lambda: Mixed(seen, handled), "mixed", options)
                for number, kind in enumerate(kinds):
                    ref.tell((kind, number))
                await seen.count(min(stop_after, len(kinds)))
                ref.stop()
            stats = await store.stats("ledger")
            told = len(kinds)
            assert stats.claimed_count == 0  # every claim was settled on the way out
            assert stats.committed_count == len(handled) == len(set(handled))
            assert stats.committed_count + stats.dead_lettered_count + stats.pending_count == told
            assert stats.dead_lettered_count == sum(
                1
                for number, kind in enumerate(kinds)
                if kind == "bad" and ["bad", number] in seen.messages
            )
            assert system.dead_letters_count == 0
