"""Fixtures of the gateway suite: a ``dovecote serve`` subprocess per backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gateway_kit import Broker, sqlite_url

pytest.importorskip("starlette")
pytest.importorskip("grpc")
pytest.importorskip("mcp")


def _postgres_db() -> str:
    from service_urls import postgres_url

    url = postgres_url()
    try:
        from dovecote.durable import PostgresStore  # noqa: F401
    except ImportError:
        pytest.skip(
            "the PostgreSQL backend (dovecote.durable.PostgresStore, branch store-pg) is not "
            "merged into this branch yet"
        )
    return url


@pytest.fixture(scope="session")
def sqlite_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """One broker on a SQLite file for the session (tests use unique mailbox names)."""
    db = sqlite_url(tmp_path_factory.mktemp("broker") / "broker.db")
    broker = Broker.start(db)
    yield broker
    assert broker.stop() == 0, "".join(broker.stderr_lines)


@pytest.fixture(scope="session")
def postgresql_broker() -> Iterator[Broker]:
    """One broker on PostgreSQL for the session."""
    broker = Broker.start(_postgres_db())
    yield broker
    assert broker.stop() == 0, "".join(broker.stderr_lines)


@pytest.fixture(params=["sqlite", "postgresql"])
def broker(request: pytest.FixtureRequest) -> Broker:
    """The HTTP suite runs against both backends."""
    return request.getfixturevalue(f"{request.param}_broker")  # type: ignore[no-any-return]


@pytest.fixture
def db_file(tmp_path: Path) -> str:
    return sqlite_url(tmp_path / "broker.db")
