"""Fixtures for remote-actor tests: the shared NATS server, unique names, cleanup."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from remote_kit import bucket_of

from service_urls import nats_url


@pytest.fixture
def nats() -> str:
    """The NATS URL (skips locally / fails in CI when the server is not there)."""
    return nats_url()


@pytest.fixture
async def system_name(nats: str) -> AsyncIterator[str]:
    """A system name no other test uses; its membership bucket (see bucket_of) is deleted
    afterwards."""
    import nats as nats_client

    name = f"t{uuid.uuid4().hex[:10]}"
    yield name
    nc = await nats_client.connect(nats)
    with contextlib.suppress(Exception):
        await nc.jetstream().delete_key_value(bucket_of(name))
    await nc.close()


@pytest.fixture
def fast(nats: str, system_name: str) -> Callable[..., object]:
    """``fast()`` -> NatsRemote with quick failure detection (0.2 s beats, down after 1.5 s)."""
    from dovecote.remote import NatsRemote

    def make(**overrides: object) -> object:
        options: dict[str, object] = {
            "servers": nats,
            "heartbeat_interval": 0.2,
            "down_after": 1.5,
            "bucket": bucket_of(system_name),
        }
        options.update(overrides)
        return NatsRemote(**options)  # type: ignore[arg-type]

    return make


@pytest.fixture
async def nodes(system_name: str, fast: Callable[..., Any]) -> AsyncIterator[tuple[Any, Any]]:
    """Two nodes of one system, ``node-a`` and ``node-b``, in this process."""
    from dovecote import ActorSystem

    async with (
        ActorSystem(system_name, host="node-a", remote=fast()) as a,
        ActorSystem(system_name, host="node-b", remote=fast()) as b,
    ):
        yield a, b
