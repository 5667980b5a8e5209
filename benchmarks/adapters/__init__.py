"""Runtime adapters, imported lazily so that a missing peer only affects its own cells."""

from __future__ import annotations

import importlib

from ._base import BaseRuntime, Metrics, Runtime, Unavailable

__all__ = ["ADAPTERS", "BaseRuntime", "Metrics", "Runtime", "Unavailable", "load"]

#: runtime name -> "module:Class" inside this package
ADAPTERS: dict[str, str] = {
    "dovecote": "dovecote:DovecoteRuntime",
    "handwritten": "handwritten:HandwrittenRuntime",
    "handwritten_lazy": "handwritten:LazyHandwrittenRuntime",
    "asyncio_queue": "asyncio_queue:QueueRuntime",
    "pykka": "pykka:PykkaRuntime",
    "thespian_simple": "thespian:SimpleThespianRuntime",
    "thespian_mp": "thespian:MultiprocThespianRuntime",
    "xoscar": "xoscar:XoscarRuntime",
    "sqlite3": "sqlite_plain:PlainSqliteRuntime",
    "asyncpg": "asyncpg_plain:PlainAsyncpgRuntime",
}


def load(name: str) -> Runtime:
    """Instantiate the adapter for `name`; raise Unavailable if its runtime cannot load."""
    try:
        target = ADAPTERS[name]
    except KeyError:
        raise Unavailable(f"unknown runtime {name!r}") from None
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
    except ImportError as exc:
        raise Unavailable(f"{type(exc).__name__}: {exc}") from exc
    runtime: Runtime = getattr(module, class_name)()
    return runtime
