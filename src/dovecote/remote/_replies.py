"""Answers to asks across nodes: what the answering node sends, what the asker makes of it."""

from __future__ import annotations

import asyncio
import traceback
from typing import TYPE_CHECKING, Any

from dovecote._errors import ActorNotFoundError, ActorStoppedError, SerializationError
from dovecote.observability import get_logger
from dovecote.remote import _wire as w
from dovecote.remote._body import decode_body, encode_body
from dovecote.remote._errors import MessageTooLargeError, RemoteError

if TYPE_CHECKING:
    from dovecote.actors import ActorSystem
    from dovecote.remote._node import NatsTransport

__all__ = ["WireAnswer", "answer_items", "error_items", "send_answer", "settle"]

_log = get_logger("dovecote.remote")


class WireAnswer(asyncio.Future[Any]):
    """The reply slot of an ask that came over the wire: the moment the handler's answer
    (or failure) is set, it is published to the asker's reply subject, in the same turn."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, transport: NatsTransport, reply: str
    ) -> None:
        super().__init__(loop=loop)
        self._transport = transport
        self._reply = reply

    def set_result(self, result: Any) -> None:
        super().set_result(result)
        send_answer(self._transport, self._reply, self)

    def set_exception(self, exception: type | BaseException) -> None:
        super().set_exception(exception)
        send_answer(self._transport, self._reply, self)

    def cancel(self, msg: Any | None = None) -> bool:
        if not super().cancel(msg):
            return False
        send_answer(self._transport, self._reply, self)
        return True


def send_answer(transport: NatsTransport, reply: str, answer: asyncio.Future[Any]) -> None:
    """Publish a local ask's outcome to the asker; never raises into the actor runtime.

    An answer over the server's max payload goes as a RemoteError for
    MessageTooLargeError instead; any other failure to publish is logged (the asker then
    times out).
    """
    try:
        try:
            transport.answer_now(reply, *answer_items(answer))
        except MessageTooLargeError as error:
            transport.answer_now(reply, *error_items(error))
    except Exception:
        _log.exception("could not send the answer to a remote ask", reply=reply)


def answer_items(answer: asyncio.Future[Any]) -> tuple[Any, ...]:
    """The reply frame for a local ask's outcome: the value, or what went wrong.

    An exception travels as its type name, message and formatted traceback only.
    """
    if answer.cancelled():
        return (w.STOPPED, "the ask was cancelled")
    error = answer.exception()
    if error is None:
        try:
            return (w.OK, encode_body(answer.result()))
        except SerializationError as bad:
            error = bad
    if isinstance(error, ActorStoppedError):
        return (w.STOPPED, str(error))
    return error_items(error)


def error_items(error: BaseException) -> tuple[Any, ...]:
    """The ERROR frame for ``error``: its type name, message and formatted traceback."""
    kind = type(error)
    return (
        w.ERROR,
        f"{kind.__module__}.{kind.__qualname__}",
        str(error),
        "".join(traceback.format_exception(error)),
    )


def settle(
    future: asyncio.Future[Any], data: bytes, no_responders: bool, system: ActorSystem
) -> None:
    """Complete an ask's future from the reply that arrived for it."""
    if no_responders:
        future.set_exception(ActorNotFoundError("no node answers for that address (no responders)"))
        return
    try:
        frame = w.decode_frame(data)
        kind = frame[0]
        if kind == w.OK:
            future.set_result(decode_body(frame[1], system))
        elif kind == w.ERROR:
            future.set_exception(RemoteError(str(frame[1]), str(frame[2]), str(frame[3])))
        elif kind == w.NOT_FOUND:
            future.set_exception(ActorNotFoundError(str(frame[1])))
        elif kind == w.STOPPED:
            future.set_exception(ActorStoppedError(str(frame[1])))
        else:
            future.set_result(kind)  # control answers: WATCHING / GONE
    except SerializationError as error:
        future.set_exception(error)
    except (IndexError, TypeError) as error:
        future.set_exception(SerializationError(f"malformed reply: {error}"))
