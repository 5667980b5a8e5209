"""Parse what NATS sends in the iteration it arrives, not one later in nats-py's read loop.

nats-py reads its socket in a task: the stream protocol's ``data_received`` puts the bytes
in a ``StreamReader`` and wakes the task, which parses them in the next event-loop
iteration. On a sequential ask that is one iteration more on each node, for nothing.

:class:`InlineReader` takes the bytes at ``StreamReader.feed_data`` (the one call
``data_received`` makes) and runs nats-py's own parser on them at once. The read-loop task
stays where it was, waiting on the reader, and still ends the connection as before: the
end of the stream (``feed_eof``) and a broken socket (``set_exception``) are not
intercepted, so nats-py's read loop wakes on them and starts its reconnect.

The parser is a coroutine. Nearly always it finishes without waiting (a message, a PING
answered into the outbound buffer, a PONG); when it does wait (an error callback, say),
it goes on in a task, and bytes that arrive meanwhile are queued behind it so the order
of the stream is kept, with the socket paused while more than ``_BACKLOG_LIMIT`` bytes
wait. An error from the parser is handed to nats-py as its read loop would
(``_process_op_err``: a protocol error or a broken socket starts a reconnect).

The hook goes on only while the read loop is waiting on an empty reader, so no bytes
are parsed by both or out of order; after a reconnect (a new reader) it is put on again.
Bytes that reach a reader nats-py no longer reads (its read task ended or was cancelled,
or a newer connection's reader took over) are left in that reader, as without the hook.
All of this rests on nats-py internals (``_transport._io_reader``, ``_ps``,
``_process_op_err``, ``_reading_task``); when they are not as expected (another
transport, such as websockets), nothing is changed and nats-py reads as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import deque
from typing import TYPE_CHECKING, Any

from dovecote.dispatch import continue_in_task, step_inline
from dovecote.observability import get_logger

if TYPE_CHECKING:
    from nats.aio.client import Client

__all__ = ["InlineReader"]

_log = get_logger("dovecote.remote")
_BACKLOG_LIMIT = 1 << 20  # bytes queued behind a waiting parse before the socket pauses
_INSTALL_TRIES = 100  # iterations to wait for the read loop to be idle on its reader


def _stream_reader(nc: Client) -> asyncio.StreamReader | None:
    reader = getattr(getattr(nc, "_transport", None), "_io_reader", None)
    if type(reader) is not asyncio.StreamReader:  # (a subclass may read differently)
        return None
    if not all(hasattr(reader, name) for name in ("_buffer", "_waiter", "_transport")):
        return None
    return reader


def _has_internals(nc: Client) -> bool:
    return (
        callable(getattr(getattr(nc, "_ps", None), "parse", None))
        and callable(getattr(nc, "_process_op_err", None))
        and hasattr(nc, "_reading_task")
    )


class InlineReader:
    """Feeds a nats-py client's parser from ``data_received`` (see the module docstring)."""

    __slots__ = (
        "_backlog",
        "_backlog_size",
        "_hooked",
        "_loop",
        "_nc",
        "_parsing",
        "_paused",
        "_reader",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, nc: Client) -> None:
        self._loop = loop
        self._nc = nc
        self._reader: asyncio.StreamReader | None = None  # the reader the hook is on
        self._hooked: asyncio.StreamReader | None = None  # the reader we try to hook
        self._parsing = False  # a parse is waiting in a task: new bytes queue behind it
        self._backlog: deque[bytes] = deque()
        self._backlog_size = 0
        self._paused = False

    @property
    def active(self) -> bool:
        """True while the current connection's bytes are parsed on arrival."""
        reader = self._reader
        return reader is not None and reader is _stream_reader(self._nc)

    def install(self) -> bool:
        """Put the hook on the connection's current reader (now, or within a few
        iterations once nats-py's read loop is idle). False if nats-py does not look as
        expected; nothing is changed then."""
        reader = _stream_reader(self._nc)
        if reader is None or not _has_internals(self._nc):
            return False
        if reader is self._reader or reader is self._hooked:
            return True
        self._hooked = reader
        self._try_install(reader, _INSTALL_TRIES)
        return True

    def _try_install(self, reader: asyncio.StreamReader, tries: int) -> None:
        if reader is not self._hooked or reader is not _stream_reader(self._nc):
            return  # a newer reader came (a reconnect) or the connection went
        task = self._nc._reading_task
        idle = (
            task is not None
            and not task.done()
            and reader._waiter is not None  # type: ignore[attr-defined]
            and not reader._buffer  # type: ignore[attr-defined]
            and not reader.at_eof()
        )
        if not idle:
            if tries > 0:
                self._loop.call_soon(self._try_install, reader, tries - 1)
            else:
                _log.debug("nats-py's read loop stayed busy; it keeps reading the socket")
            return
        self._parsing = False
        self._backlog.clear()
        self._backlog_size = 0
        self._paused = False
        reader.feed_data = functools.partial(self._feed, reader)  # type: ignore[method-assign]
        self._reader = reader
        self._hooked = None

    # -- the bytes --------------------------------------------------------------------------
    def _feed(self, reader: asyncio.StreamReader, data: bytes) -> None:
        """``StreamReader.feed_data`` of the hooked reader: parse now, in order."""
        task = self._nc._reading_task
        if reader is not self._reader or task is None or task.done():
            # nats-py stopped reading this connection (closing, or reconnecting to a new
            # one): the bytes stay in the reader, unread, as they would without the hook
            asyncio.StreamReader.feed_data(reader, data)
            return
        if self._parsing:
            self._queue(data)
            return
        self._parsing = True
        coro = self._parse(data)
        try:
            finished, yielded = step_inline(coro)
        except BaseException as error:
            self._parsing = False
            self._failed(error)
            if not isinstance(error, Exception):
                raise
            return
        if not finished:
            continue_in_task(self._loop, coro, yielded, self._parsed)

    async def _parse(self, data: bytes) -> None:
        parse = self._nc._ps.parse
        await parse(data)
        backlog = self._backlog
        while backlog:  # (only after a parse that waited)
            chunk = backlog.popleft()
            self._backlog_size -= len(chunk)
            await parse(chunk)
        self._parsing = False
        if self._paused:
            self._paused = False
            self._reading(resume=True)

    def _parsed(self, task: asyncio.Task[Any]) -> None:
        self._parsing = False
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            self._failed(error)

    def _queue(self, data: bytes) -> None:
        self._backlog.append(data)
        self._backlog_size += len(data)
        if self._backlog_size > _BACKLOG_LIMIT and not self._paused:
            self._paused = True
            self._reading(resume=False)

    def _reading(self, *, resume: bool) -> None:
        transport = getattr(self._reader, "_transport", None)
        if transport is None:
            return
        with contextlib.suppress(AttributeError, RuntimeError):  # closing, or already so
            transport.resume_reading() if resume else transport.pause_reading()

    def _failed(self, error: BaseException) -> None:
        """What nats-py's read loop does with an error from its parser."""
        from nats import errors

        self._backlog.clear()
        self._backlog_size = 0
        if isinstance(error, errors.ProtocolError):
            error = errors.ProtocolError()
        elif not isinstance(error, OSError):
            _log.error("nats: error while parsing", error=repr(error))
            return
        task = self._loop.create_task(self._nc._process_op_err(error))
        task.add_done_callback(_retrieve)


def _retrieve(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()
