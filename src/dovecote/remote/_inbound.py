"""What arrives on a node's one subscription: actor messages, batches, replies, control.

Everything from the wire is untrusted: a frame or body that does not decode, an unknown
type, or a path this node does not host is counted as a dead letter (``undecodable`` /
``unknown-recipient``), logged at a bounded rate, and dropped; nothing raised here can
reach nats-py's subscription task.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from dovecote._errors import ActorNotFoundError, SerializationError
from dovecote.actors._remote_seam import queue_ask
from dovecote.observability import get_logger
from dovecote.remote import _wire as w
from dovecote.remote._body import decode_body
from dovecote.remote._replies import WireAnswer, send_answer
from dovecote.remote._subjects import path_of_subject
from dovecote.remote._wire_log import WireLog

if TYPE_CHECKING:
    from nats.aio.msg import Msg

    from dovecote.actors import ActorRef
    from dovecote.remote._node import NatsTransport

__all__ = ["Inbound"]

_log = get_logger("dovecote.remote")
_CACHE_LIMIT = 10_000


class Inbound:
    """The callback of a node's subscription, and the lookups it caches."""

    def __init__(self, transport: NatsTransport) -> None:
        self._t = transport
        self._system = transport.system
        prefix = transport.prefix
        self._prefix_len = len(prefix) + 1
        self._reply_prefix = prefix + "._r."
        self._batch = prefix + "._b"
        self._control = prefix + "._c"
        self._local: dict[str, ActorRef] = {}  # subject or path -> local ref (cache)
        self._senders: dict[str, ActorRef] = {}  # sender address -> ref (cache)
        self._wire_log = WireLog(transport.system)
        self._loop = transport.loop

    async def on_message(self, msg: Msg) -> None:
        """The subscription callback (when nats-py's parser cannot be served directly)."""
        self.on_raw(msg.subject, msg.reply, msg.data, msg.headers)

    def on_raw(self, subject: str, reply: str, data: bytes, headers: dict[str, str] | None) -> None:
        """One message of the node's subscription, as the parser read it."""
        try:
            if subject.startswith(self._reply_prefix):
                self._t.on_reply(subject[len(self._reply_prefix) :], data, headers)
            elif subject == self._batch:
                self._on_batch(subject, data)
            elif subject == self._control:
                self._on_control(subject, reply, data)
            else:
                self._on_actor_message(subject, reply, data)
        except Exception:  # never let one message break the node's subscription
            _log.exception("failed to handle a message from NATS", subject=subject)

    def _local_ref(self, key: str, path: str | None) -> ActorRef | None:
        """The live local actor a subject (``path`` None) or a batch entry's path names."""
        ref = self._local.get(key)
        if ref is None or not ref.is_alive:
            try:
                if path is None:
                    path = path_of_subject(self._prefix_len, key)
                if not path.startswith("/user/"):
                    return None
                ref = self._system.resolve(path)
            except (ActorNotFoundError, ValueError, UnicodeDecodeError, IndexError):
                return None
            if len(self._local) >= _CACHE_LIMIT:
                self._local.clear()
            self._local[key] = ref
        return ref

    def _on_batch(self, subject: str, data: bytes) -> None:
        try:
            frame = w.decode_frame(data)
            entries = frame[1] if frame[0] == w.BATCH else None
            if not isinstance(entries, list):
                raise SerializationError("not a batch frame")
        except (SerializationError, IndexError) as error:
            self._wire_log.undecodable(subject, SerializationError(str(error)))
            return
        system = self._system
        for entry in entries:
            try:
                path, origin, body = entry
                message = decode_body(body, system)
            except (SerializationError, ValueError, TypeError) as error:
                self._wire_log.undecodable(subject, SerializationError(str(error)))
                continue
            ref = self._local_ref(path, path) if isinstance(path, str) else None
            if ref is None:
                self._wire_log.unknown_recipient(f"{subject} {path!r}", message)
            else:
                ref.tell(message, self._sender_ref(origin))

    def _on_actor_message(self, subject: str, reply: str, data: bytes) -> None:
        ref = self._local_ref(subject, None)
        try:
            frame = w.decode_frame(data)
            kind = frame[0]
            message = decode_body(frame[-1], self._system) if kind in (w.TELL, w.ASK) else None
        except SerializationError as error:
            self._wire_log.undecodable(subject, error)
            if reply:
                self._t.answer_now(
                    reply, w.ERROR, "dovecote.SerializationError", str(error), ""
                )
            return
        if ref is None:
            self._wire_log.unknown_recipient(subject, message)
            if reply:
                self._t.answer_now(
                    reply, w.NOT_FOUND, f"no actor at {self._address_of(subject)}"
                )
            return
        if kind == w.TELL:
            ref.tell(message, self._sender_ref(frame[1]))
        elif kind == w.ASK:
            self._ask_local(ref, message, reply)
        elif kind == w.STOP:
            ref.stop()
        elif kind == w.STOP_NOW:
            self._system.stop(ref)

    def _ask_local(self, ref: ActorRef, message: Any, reply: str) -> None:
        """Queue an ask now (in lane order); its answer is published to ``reply`` as soon
        as the handler settles it (a plain mailbox), or once its future is done."""
        answer = WireAnswer(self._loop, self._t, reply)
        if not queue_ask(ref, message, answer):
            ref.ask(message, timeout=None).add_done_callback(
                functools.partial(send_answer, self._t, reply)
            )

    def _address_of(self, subject: str) -> str:
        try:
            path = path_of_subject(self._prefix_len, subject)
        except (ValueError, UnicodeDecodeError):
            path = "/?"
        return self._system._address_prefix + path

    def _on_control(self, subject: str, reply: str, data: bytes) -> None:
        try:
            frame = w.decode_frame(data)
            kind = frame[0]
            if kind == w.PING:
                if reply:
                    self._t.answer_now(reply, w.OK, b"")
            else:
                self._t.watches.on_control(kind, frame, reply)
        except (SerializationError, IndexError, TypeError, ValueError) as error:
            self._wire_log.undecodable(subject, SerializationError(str(error)))

    def _sender_ref(self, address: str | None) -> ActorRef | None:
        if not isinstance(address, str):
            return None
        ref = self._senders.get(address)
        if ref is None or not ref.is_alive:
            try:
                ref = self._system.resolve(address)
            except (ActorNotFoundError, ValueError):
                return None
            if len(self._senders) >= _CACHE_LIMIT:
                self._senders.clear()
            self._senders[address] = ref
        return ref
