"""Where the test suite finds the real services it talks to (PostgreSQL, NATS).

Each ``*_url()`` returns the service's URL when it answers. When it does not, the calling
test is skipped with a reason that says how to start the service, except under ``CI=true``
or ``DOVECOTE_REQUIRE_SERVICES=1``: there an unreachable service fails the test, so CI can
never go green by skipping what it was meant to check.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

import pytest

__all__ = ["nats_url", "postgres_url", "services_required"]

_POSTGRES_DEFAULT = "postgresql://postgres@127.0.0.1:5432/test"
_NATS_DEFAULT = "nats://127.0.0.1:4222"

_HOW_TO_START = {
    "PostgreSQL": (
        "start it with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` "
        "or point DOVECOTE_TEST_POSTGRES_URL at a server"
    ),
    "NATS": (
        "start it with `nats-server -a 127.0.0.1 -p 4222 -js` "
        "or point DOVECOTE_TEST_NATS_URL at a server"
    ),
}


def services_required() -> bool:
    """True under CI (``CI=true``) or when ``DOVECOTE_REQUIRE_SERVICES=1``."""
    return (
        os.environ.get("CI", "").lower() == "true"
        or os.environ.get("DOVECOTE_REQUIRE_SERVICES") == "1"
    )


def _reachable(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or default_port
    try:
        with socket.create_connection((host, port), timeout=2.0):
            return True
    except OSError:
        return False


def _url_or_skip(service: str, env: str, default: str, port: int) -> str:
    url = os.environ.get(env, default)
    if _reachable(url, port):
        return url
    reason = f"{service} is not reachable at {url}: {_HOW_TO_START[service]}"
    if services_required():
        pytest.fail(f"{reason} (required because CI=true or DOVECOTE_REQUIRE_SERVICES=1)")
    pytest.skip(reason)


def postgres_url() -> str:
    """The PostgreSQL URL for tests (``DOVECOTE_TEST_POSTGRES_URL``), or skip / fail."""
    return _url_or_skip("PostgreSQL", "DOVECOTE_TEST_POSTGRES_URL", _POSTGRES_DEFAULT, 5432)


def nats_url() -> str:
    """The NATS URL for tests (``DOVECOTE_TEST_NATS_URL``), or skip / fail."""
    return _url_or_skip("NATS", "DOVECOTE_TEST_NATS_URL", _NATS_DEFAULT, 4222)
