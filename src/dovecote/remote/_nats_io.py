"""A node's reads and writes on its nats-py connection, one layer below ``Msg`` and the flusher.

nats-py hands every message of a subscription to a queue that a task drains (one more
event-loop iteration, a ``Msg`` object each), and every publish waits for the
connection's flusher task (one more iteration before the bytes reach the socket). On the
path of an ask that is two iterations on each node, which is most of a round trip's CPU.

Reading: the node's one subscription is served straight from the protocol parser
(:meth:`NatsIO.deliver`): the parser's ``_process_msg`` is wrapped so that messages for
that subscription's id go to a plain callback as ``(subject, reply, data, headers)``,
in the iteration they were parsed; every other subscription (JetStream, nats-py's own
request inbox) takes nats-py's usual way.

Writing: :meth:`NatsIO.publish` builds the ``PUB`` command and, when nothing is waiting in
nats-py's outbound buffer and the socket takes it, writes it to the transport at once.
Further publishes in the same iteration join nats-py's buffer and go out together at its
end (one write, so a burst costs one syscall). Whenever the connection is not plainly up
(reconnecting, draining, a socket that pushes back), the publish goes through nats-py's
``publish`` unchanged, so its buffering during an outage and its back-pressure apply.
The order of one node's publishes is kept either way: a command is written directly only
when nats-py's buffer is empty.

Both rest on nats-py internals (``Client._process_msg``, ``_pending``, ``_transport``);
when they are not there as expected, :meth:`NatsIO.deliver` returns False (the caller
keeps the subscription callback) and :attr:`NatsIO.direct` is False (every publish goes
through nats-py).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dovecote.dispatch import continue_in_task, step_inline

if TYPE_CHECKING:
    from nats.aio.client import Client

__all__ = ["NatsIO", "RawHandler"]

#: ``(subject, reply, data, headers)`` of one message, headers None when there are none
RawHandler = Callable[[str, str, bytes, "dict[str, str] | None"], None]

_PARSER_ARGS = ["sid", "subject", "reply", "data", "headers"]
_CRLF = b"\r\n"


def _has_internals(nc: Client) -> bool:
    try:
        params = list(inspect.signature(nc._process_msg).parameters)
    except (AttributeError, TypeError, ValueError):
        return False
    return (
        params == _PARSER_ARGS
        and isinstance(getattr(nc, "_pending", None), list)
        and isinstance(getattr(nc, "_pending_data_size", None), int)
        and isinstance(getattr(nc, "stats", None), dict)
        and hasattr(nc, "_transport")
        and hasattr(nc, "_status")
    )


class NatsIO:
    """Publishing on, and the raw delivery of one subscription from, a nats-py client."""

    __slots__ = (
        "_burst",
        "_connected",
        "_flushing",
        "_loop",
        "_nc",
        "_writing",
        "delivering",
        "direct",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, nc: Client) -> None:
        from nats.aio.client import Client

        self._loop = loop
        self._nc = nc
        self._connected = Client.CONNECTED
        self._writing = False  # wrote directly since the last read: the rest joins the buffer
        self._flushing = False  # _write_buffered is scheduled
        self._burst = 0  # messages read since the last write
        self.direct = _has_internals(nc)
        """True while publishes may bypass nats-py's flusher (its internals are as known)."""
        self.delivering = False
        """True once :meth:`deliver` serves a subscription from the parser."""

    # -- reading -------------------------------------------------------------------------------
    def deliver(self, sid: int, handler: RawHandler) -> bool:
        """Hand subscription ``sid``'s messages to ``handler`` as the parser reads them.

        False (and nothing changed) if this nats-py does not look as expected.
        """
        nc = self._nc
        if not self.direct or sid not in getattr(nc, "_subs", {}):
            return False
        process_msg = nc._process_msg
        process_headers = nc._process_headers
        stats = nc.stats

        async def deliver(
            sid_: int, subject: bytes, reply: bytes, data: bytes, headers: bytes
        ) -> None:
            if sid_ != sid:
                await process_msg(sid_, subject, reply, data, headers)
                return
            self._writing = False  # a new read: the next publish may go out at once,
            self._burst += 1  # unless this read brought several (then they answer together)
            stats["in_msgs"] += 1
            stats["in_bytes"] += len(data)
            handler(
                subject.decode(),
                reply.decode(),
                data,
                await process_headers(headers) if headers else None,
            )

        nc._process_msg = deliver  # type: ignore[method-assign, assignment]
        self.delivering = True
        return True

    # -- writing -------------------------------------------------------------------------------
    def publish(self, subject: str, payload: bytes, reply: str = "") -> None:
        """Publish now (see the module docstring); never awaits."""
        nc = self._nc
        if self.direct and nc._status == self._connected:
            if self._writing or self._burst > 1:
                self._writing = True
                command = f"PUB {subject} {reply} {len(payload)}\r\n".encode() + payload + _CRLF
                nc._pending.append(command)
                nc._pending_data_size += len(command)
                _count(nc, payload)
                if not self._flushing:
                    self._flushing = True
                    self._loop.call_soon(self._write_buffered)
                return
            transport = nc._transport
            if not nc._pending and transport is not None and _takes_more(transport):
                self._burst = 0
                transport.write(
                    f"PUB {subject} {reply} {len(payload)}\r\n".encode() + payload + _CRLF
                )
                self._writing = True
                _count(nc, payload)
                return
        publishing = nc.publish(subject, payload, reply=reply)
        self._run(publishing)

    def _run(self, coro: Any) -> None:
        finished, yielded = step_inline(coro)
        if not finished:  # the outbound buffer is full: let it wait for the flusher
            continue_in_task(self._loop, coro, yielded)

    def _write_buffered(self) -> None:
        """The end of an iteration that published: what joined nats-py's buffer goes out."""
        self._writing = self._flushing = False
        self._burst = 0
        nc = self._nc
        pending = nc._pending
        transport = nc._transport
        if (
            pending
            and nc._status == self._connected
            and transport is not None
            and _takes_more(transport)
        ):
            nc._pending = []
            nc._pending_data_size = 0
            transport.writelines(pending)
        elif pending:  # reconnecting, or the socket pushes back: nats-py's flusher takes over
            self._run(nc._flush_pending())


def _count(nc: Client, payload: bytes) -> None:
    stats = nc.stats
    stats["out_msgs"] += 1
    stats["out_bytes"] += len(payload)


def _takes_more(transport: Any) -> bool:
    """True if the socket has taken everything so far (nothing waits in asyncio's buffer)."""
    writer = getattr(transport, "_io_writer", None)
    if writer is None:
        return False
    return bool(writer.transport.get_write_buffer_size() == 0)
