"""Fixtures of the gateway suite: a ``dovecote serve`` subprocess per backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gateway_kit import _SCHEMAS, Broker, _drop_schema, postgres_test_url, sqlite_url

pytest.importorskip("uvicorn")
pytest.importorskip("grpc")
pytest.importorskip("mcp")


@pytest.fixture(scope="session")
def sqlite_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """One broker on a SQLite file for the session (tests use unique mailbox names)."""
    db = sqlite_url(tmp_path_factory.mktemp("broker") / "broker.db")
    broker = Broker.start(db)
    yield broker
    assert broker.stop() == 0, "".join(broker.stderr_lines)


@pytest.fixture(scope="session", autouse=True)
def _drop_test_schemas() -> Iterator[None]:
    yield
    for url, schema in _SCHEMAS:
        _drop_schema(url, schema)


@pytest.fixture(scope="session")
def postgresql_broker() -> Iterator[Broker]:
    """One broker on PostgreSQL for the session, in a schema of its own (the server is
    shared with other test runs), dropped afterwards."""
    broker = Broker.start(postgres_test_url())
    try:
        yield broker
        assert broker.stop() == 0, "".join(broker.stderr_lines)
    finally:
        broker.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def broker(request: pytest.FixtureRequest) -> Broker:
    """The HTTP suite runs against both backends."""
    return request.getfixturevalue(f"{request.param}_broker")  # type: ignore[no-any-return]


@pytest.fixture
def db_file(tmp_path: Path) -> str:
    return sqlite_url(tmp_path / "broker.db")
