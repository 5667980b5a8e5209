"""Event-loop selection: uvloop when it is installed, unless the user opts out."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["loop_factory", "note_fatal_error", "run", "uvloop_available"]

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


# id(loop) -> the first BaseException that stopped an actor system on that loop
_fatal_errors: dict[int, BaseException] = {}


def note_fatal_error(loop: asyncio.AbstractEventLoop, error: BaseException) -> None:
    """Record that ``error`` (a BaseException escaping an actor) stopped work on ``loop``;
    :func:`run` re-raises it."""
    _fatal_errors.setdefault(id(loop), error)


def run(
    main: Coroutine[Any, Any, T], *, use_uvloop: bool | None = None, debug: bool | None = None
) -> T:
    """Run ``main`` to completion on a fresh event loop, like :func:`asyncio.run`.

    The loop is uvloop when it is installed (see :func:`loop_factory`). If a
    ``BaseException`` that is not an ``Exception`` (``SystemExit``...) escaped an actor,
    its system stops and the exception is raised from here.
    """
    with asyncio.Runner(debug=debug, loop_factory=loop_factory(use_uvloop)) as runner:
        key = id(runner.get_loop())
        _fatal_errors.pop(key, None)
        try:
            result = runner.run(main)
        except BaseException as error:
            fatal = _fatal_errors.pop(key, None)
            if fatal is None or fatal is error:
                raise
            raise fatal from None
        fatal = _fatal_errors.pop(key, None)
        if fatal is not None:
            raise fatal
        return result
