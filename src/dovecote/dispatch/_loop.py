"""Event-loop selection: uvloop when it is installed, unless the user opts out."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["loop_factory", "run", "uvloop_available"]

T = TypeVar("T")

#: Set this environment variable to ``1`` to keep the default asyncio loop.
NO_UVLOOP_ENV = "DOVECOTE_NO_UVLOOP"


def uvloop_available() -> bool:
    """Return True when uvloop can be imported on this platform."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def loop_factory(use_uvloop: bool | None = None) -> Callable[[], asyncio.AbstractEventLoop]:
    """Return the event-loop factory dovecote would use.

    ``use_uvloop=None`` means "uvloop if installed, unless ``DOVECOTE_NO_UVLOOP=1``".
    ``True`` insists on uvloop (ImportError if missing); ``False`` never uses it.
    """
    if use_uvloop is None:
        use_uvloop = os.environ.get(NO_UVLOOP_ENV, "") not in ("1", "true", "yes") and (
            uvloop_available()
        )
    if use_uvloop:
        import uvloop

        return uvloop.new_event_loop
    return asyncio.new_event_loop


def run(
    main: Coroutine[Any, Any, T], *, use_uvloop: bool | None = None, debug: bool | None = None
) -> T:
    """Run ``main`` to completion on a fresh event loop, like :func:`asyncio.run`.

    The loop is uvloop when it is installed (see :func:`loop_factory`).
    """
    with asyncio.Runner(debug=debug, loop_factory=loop_factory(use_uvloop)) as runner:
        return runner.run(main)
