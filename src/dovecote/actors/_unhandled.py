"""Unhandled messages: published, warned about (rate-limited), and an ask fails.

A message is unhandled when the default ``Actor.on_receive`` gets it (no handler, or a
misspelt one) or a handler calls ``self.unhandled(message)``. It is not a failure (the
supervisor is not involved): the event stream gets an :class:`UnhandledMessage`, a
warning is logged at most once per :data:`WARN_EVERY` seconds for each actor class and
message type (with how many were not logged), and a pending ask fails with
:class:`UnhandledMessageError` instead of answering ``None``.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from dovecote._errors import UnhandledMessageError
from dovecote.actors._envelope_kinds import Posted, is_runtime_envelope
from dovecote.actors._messages import UnhandledMessage

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell

__all__ = ["WARN_EVERY", "report"]

#: Seconds between two warnings for one (actor class, message type).
WARN_EVERY = 10.0
_MAX_KEYS = 1024  # distinct (class, type) pairs remembered before the table starts over


def report(cell: ActorCell, message: Any) -> None:
    """``message`` went unhandled in ``cell`` (callable from a blocking worker thread)."""
    current = cell._current
    envelope = current if is_runtime_envelope(current) else None
    ask = envelope.reply if type(envelope) is Posted else None  # not a post-office letter
    if ask is not None:
        cell._replied = True  # the handler's return value must not answer it
    system = cell._system
    if threading.get_ident() != system._loop_thread:
        system._loop.call_soon_threadsafe(_report_on_loop, cell, message, envelope, ask)
    else:
        _report_on_loop(cell, message, envelope, ask)


def _report_on_loop(cell: ActorCell, message: Any, envelope: Any, ask: Any) -> None:
    if ask is not None and not ask.done():
        ask.set_exception(
            UnhandledMessageError(f"{cell.path} did not handle a {type(message).__name__} message")
        )
    system = cell._system
    sender = envelope.sender if envelope is not None else None
    stream = system.event_stream
    if stream._subs:
        stream.publish(UnhandledMessage(message, sender, cell._ref))
    _warn(cell, message)


def _warn(cell: ActorCell, message: Any) -> None:
    system = cell._system
    seen: dict[tuple[str, type], list[float]] = system._unhandled_warned
    key = (cell._class_name, type(message))
    now = time.monotonic()
    entry = seen.get(key)
    if entry is not None and now - entry[0] < WARN_EVERY:
        entry[1] += 1  # not logged: counted in the next warning
        return
    if entry is None and len(seen) >= _MAX_KEYS:
        seen.clear()
    suppressed = int(entry[1]) if entry is not None else 0
    seen[key] = [now, 0]
    cell.log.warning(
        "unhandled message",
        message_type=type(message).__qualname__,
        not_logged_since_last=suppressed,
    )
