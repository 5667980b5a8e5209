"""``open_store(url)``: pick the backend from the URL, open it, own its lifetime.

The result is awaitable *and* an async context manager, like ``asyncpg.create_pool``::

    store = await open_store("sqlite:///var/lib/app/mail.db")
    async with open_store("sqlite::memory:") as store: ...

Backends are classes with an async classmethod
``open(target, *, sweep_interval, clock, **backend_options)``: ``SqliteStore`` gets a
path (or ``":memory:"``), ``PostgresStore`` (``dovecote.durable._postgres``, imported only
when a ``postgresql://`` URL is opened) gets the URL itself.
"""

from __future__ import annotations

import importlib
import urllib.parse
from collections.abc import Generator
from types import TracebackType
from typing import Any

from dovecote._clock import Clock
from dovecote.durable._errors import InvalidRequestError
from dovecote.durable._protocol import MailboxStore

__all__ = [
    "ACCEPTED_SCHEMES",
    "StoreOpener",
    "open_store",
    "parse_store_url",
    "sqlite_url_options",
]

ACCEPTED_SCHEMES = ("sqlite::memory:", "sqlite:///abs/path.db", "sqlite://./rel.db",
                    "postgresql://", "postgres://")
MEMORY = ":memory:"


def parse_store_url(url: object) -> tuple[str, str]:
    """``(backend, target)``: ``("sqlite", path or ":memory:")`` or ``("postgresql", url)``."""
    if not isinstance(url, str):
        raise InvalidRequestError(f"a store URL must be a string, not {type(url).__name__}")
    accepted = ", ".join(ACCEPTED_SCHEMES)
    if url in ("sqlite::memory:", "sqlite://:memory:"):
        return "sqlite", MEMORY
    if url.startswith("sqlite:"):
        rest = url[len("sqlite:"):]
        path = rest[2:] if rest.startswith("//") else rest
        path = path.split("?", 1)[0]
        if not path or path == "/":
            raise InvalidRequestError(f"store URL {url!r} has no database path ({accepted})")
        return "sqlite", path
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql", url
    raise InvalidRequestError(f"unsupported store URL {url[:80]!r}: accepted forms are {accepted}")


def sqlite_url_options(url: str) -> dict[str, Any]:
    """Options in a SQLite URL's query: ``?durability=normal&busy_timeout=10``."""
    if "?" not in url:
        return {}
    options: dict[str, Any] = {}
    for key, values in urllib.parse.parse_qs(url.split("?", 1)[1],
                                             keep_blank_values=True).items():
        value = values[-1]
        if key == "durability":
            options[key] = value
        elif key == "busy_timeout":
            try:
                options[key] = float(value)
            except ValueError:
                raise InvalidRequestError(f"busy_timeout={value!r} is not a number") from None
        else:
            raise InvalidRequestError(
                f"unknown SQLite URL option {key!r} (known: durability, busy_timeout)"
            )
    return options


async def _open(url: str, sweep_interval: float | None, clock: Clock | None,
                options: dict[str, Any]) -> MailboxStore:
    backend, target = parse_store_url(url)
    if backend == "sqlite":
        from dovecote.durable._sqlite import SqliteStore

        from_url = sqlite_url_options(url)
        both = sorted(set(from_url) & set(options))
        if both:
            raise InvalidRequestError(f"{', '.join(both)} given in the URL and as an argument")
        return await SqliteStore.open(target, sweep_interval=sweep_interval, clock=clock,
                                      **from_url, **options)
    try:
        module = importlib.import_module("dovecote.durable._postgres")
    except ModuleNotFoundError as error:
        missing = error.name or "dovecote.durable._postgres"
        hint = ("install the 'postgres' extra: pip install 'dovecote[postgres]'"
                if missing == "asyncpg" else "this build has no PostgreSQL backend")
        raise InvalidRequestError(f"cannot open {url.split('@')[-1]!r}: {hint} "
                                  f"(missing module {missing!r})") from error
    store: MailboxStore = await module.PostgresStore.open(
        target, sweep_interval=sweep_interval, clock=clock, **options
    )
    return store


class StoreOpener:
    """What :func:`open_store` returns: ``await`` it, or use it with ``async with``."""

    __slots__ = ("_clock", "_options", "_store", "_sweep_interval", "_url")

    def __init__(self, url: str, sweep_interval: float | None, clock: Clock | None,
                 options: dict[str, Any]) -> None:
        # a bad URL fails at the call, before anything is awaited
        if parse_store_url(url)[0] == "sqlite":
            sqlite_url_options(url)
        self._url = url
        self._sweep_interval = sweep_interval
        self._clock = clock
        self._options = options
        self._store: MailboxStore | None = None

    def __await__(self) -> Generator[Any, None, MailboxStore]:
        return _open(self._url, self._sweep_interval, self._clock, self._options).__await__()

    async def __aenter__(self) -> MailboxStore:
        self._store = await _open(self._url, self._sweep_interval, self._clock, self._options)
        return self._store

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        store, self._store = self._store, None
        if store is not None:
            await store.close()


def open_store(url: str, *, sweep_interval: float | None = 5.0, clock: Clock | None = None,
               **backend_options: Any) -> StoreOpener:
    """Open the store named by ``url``; awaitable and an async context manager.

    ``sqlite::memory:``, ``sqlite:///abs/path.db``, ``sqlite://./rel.db`` open a
    :class:`SqliteStore`; ``postgresql://...`` (or ``postgres://``) a ``PostgresStore``.
    ``sweep_interval`` seconds between background sweeps (``None``: no sweeper);
    ``clock`` the injectable clock (default: the system clock); ``backend_options`` go to
    the backend (for SQLite: ``durability="full" | "normal"``, ``busy_timeout``, which a
    SQLite URL may also carry: ``sqlite:///x.db?durability=normal``).
    Anything else raises :class:`InvalidRequestError` naming the accepted schemes.
    """
    return StoreOpener(url, sweep_interval, clock, backend_options)
