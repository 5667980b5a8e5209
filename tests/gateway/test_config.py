"""The serve configuration's parsers and the HTTP listener's socket."""

from __future__ import annotations

import asyncio
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dovecote.gateway import Address, ConfigError, GatewayConfig
from dovecote.gateway._config import parse_address, parse_duration, parse_size
from dovecote.gateway._serve import _bind, store_options


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("5s", 5.0), ("100ms", 0.1), ("1m30s", 90.0), ("2h", 7200.0), ("1.5s", 1.5), ("off", None)],
)
def test_durations_are_humantime_style(text: str, seconds: float | None) -> None:
    assert parse_duration(text, flag="--x") == seconds


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(["ms", "s", "m", "h"]))
def test_every_positive_duration_parses(n: int, unit: str) -> None:
    factor = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
    assert parse_duration(f"{n}{unit}", flag="--x") == pytest.approx(n * factor)


@pytest.mark.parametrize("text", ["", "5", "5x", "s5", "-1s", "0s", "5s junk", "ms"])
def test_malformed_durations_name_the_flag(text: str) -> None:
    with pytest.raises(ConfigError, match="--sweep-interval"):
        parse_duration(text, flag="--sweep-interval")


def test_addresses() -> None:
    assert parse_address("127.0.0.1:8080", flag="--http") == Address("127.0.0.1", 8080)
    assert parse_address("[::1]:0", flag="--http") == Address("::1", 0)
    assert parse_address(":9000", flag="--http") == Address("127.0.0.1", 9000)
    assert parse_address("OFF", flag="--http") is None
    for bad in ("localhost", "1.2.3.4:", "1.2.3.4:70000", "a:b"):
        with pytest.raises(ConfigError, match="--http"):
            parse_address(bad, flag="--http")


def test_sizes() -> None:
    assert parse_size("2MiB", flag="--m") == 2 * 2**20
    assert parse_size("512kb", flag="--m") == 512_000
    assert parse_size("100", flag="--m") == 100
    for bad in ("0", "lots", "-5", "5 PB"):
        with pytest.raises(ConfigError):
            parse_size(bad, flag="--m")


def test_a_config_with_every_front_end_off_is_refused() -> None:
    with pytest.raises(ConfigError, match="every front end is off"):
        GatewayConfig(http=None, grpc=None, mcp=False)
    assert GatewayConfig(http=None, grpc=None, mcp=True).mcp


async def test_accepted_http_connections_have_tcp_nodelay() -> None:
    sock = _bind(Address("127.0.0.1", 0))
    nodelay = asyncio.get_running_loop().create_future()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted = writer.get_extra_info("socket")
        nodelay.set_result(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(handler, sock=sock)
    async with server:
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        assert await asyncio.wait_for(nodelay, 5) != 0
        writer.close()


def test_a_schema_query_parameter_becomes_the_postgres_stores_schema() -> None:
    assert store_options("postgresql://u@h/db?schema=broker") == (
        "postgresql://u@h/db",
        {"schema": "broker"},
    )
    assert store_options("postgresql://u@h/db?sslmode=disable&schema=s1") == (
        "postgresql://u@h/db?sslmode=disable",
        {"schema": "s1"},
    )
    assert store_options("postgresql://u@h/db") == ("postgresql://u@h/db", {})
    assert store_options("sqlite:///x.db?schema=no") == ("sqlite:///x.db?schema=no", {})
