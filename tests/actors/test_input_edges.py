"""Input edges of issue 8 (item 9): every invalid option is an OptionsError, a bad system
name an InvalidActorNameError, and nothing is created before the error."""

from __future__ import annotations

from typing import Any

import pytest
from actor_kit import Echo

from dovecote import ActorOptions, ActorSystem, InvalidActorNameError, OptionsError
from dovecote.supervision import OneForOneStrategy

BAD_SYSTEM_OPTIONS: dict[str, dict[str, Any]] = {
    "throughput zero": {"throughput": 0},
    "throughput bool": {"throughput": True},
    "throughput float": {"throughput": 2.0},
    "dispatch_slice negative": {"dispatch_slice": -1.0},
    "dispatch_slice inf": {"dispatch_slice": float("inf")},
    "dispatch_slice nan": {"dispatch_slice": float("nan")},
    "guardian_strategy not a strategy": {"guardian_strategy": "one-for-one"},
    "blocking_workers zero": {"blocking_workers": 0},
    "dead_letter_log_limit negative": {"dead_letter_log_limit": -1},
    "metrics_sample_every zero": {"metrics_sample_every": 0},
    "bad host": {"host": "bad host!"},
    "interrupt_timeout zero": {"interrupt_timeout": 0},
}


@pytest.mark.parametrize("kwargs", BAD_SYSTEM_OPTIONS.values(), ids=BAD_SYSTEM_OPTIONS.keys())
async def test_every_invalid_system_option_raises_options_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(OptionsError):
        ActorSystem("s", **kwargs)


async def test_throughput_zero_is_the_same_error_as_the_builder() -> None:
    with pytest.raises(OptionsError):
        ActorOptions.create().with_throughput(0)
    with pytest.raises(OptionsError):
        ActorSystem("s", throughput=0)


@pytest.mark.parametrize("name", ["bad name!", "", "-lead", "a/b", 7])
async def test_bad_system_name_raises_invalid_actor_name_error(name: Any) -> None:
    with pytest.raises(InvalidActorNameError):
        ActorSystem(name)


async def test_valid_system_options_still_work() -> None:
    async with ActorSystem(
        "ok",
        throughput=1,
        dispatch_slice=0,
        guardian_strategy=OneForOneStrategy(),
        blocking_workers=2,
        dead_letter_log_limit=0,
    ) as system:
        assert await system.spawn(Echo).ask("x", timeout=2.0) == "x"


async def test_mailbox_factory_returning_a_non_mailbox_raises_options_error_at_spawn(
    system: ActorSystem,
) -> None:
    options = ActorOptions.create().with_mailbox(list)  # type: ignore[arg-type]
    with pytest.raises(OptionsError, match="not a dovecote Mailbox"):
        system.spawn(Echo, "m", options)
    # nothing was created: the name is still free
    assert await system.spawn(Echo, "m").ask(1, timeout=2.0) == 1
