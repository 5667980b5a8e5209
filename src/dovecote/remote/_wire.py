"""What one NATS message between nodes holds: a small frame around a codec-encoded body.

A frame is a MessagePack array whose first item is its kind. The message itself is
encoded by the codec (registered types only, refs as addresses, never pickle) and
travels as the frame's ``body`` bytes, so a body that does not decode is told apart
from a frame that does not parse.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from dovecote._errors import SerializationError

__all__ = [
    "ASK",
    "BATCH",
    "ERROR",
    "GONE",
    "NOT_FOUND",
    "OK",
    "PING",
    "STOP",
    "STOPPED",
    "STOP_NOW",
    "TELL",
    "TERMINATED",
    "UNWATCH",
    "WATCH",
    "WATCHING",
    "FrameError",
    "decode_frame",
    "encode_frame",
]

# to an actor's subject (its lane: order kept per sender)
TELL: Final = 0  # [TELL, sender address | None, body]
ASK: Final = 1  # [ASK, body]; the NATS reply subject is the asker's inbox
STOP: Final = 2  # [STOP]: PoisonPill, behind what was sent before
STOP_NOW: Final = 3  # [STOP_NOW]: context.stop / system.stop
BATCH: Final = 4  # [BATCH, [[path, sender address | None, body], ...]] to <node>._b
# to an asker's reply inbox
OK: Final = 10  # [OK, body]
ERROR: Final = 11  # [ERROR, type name, message, traceback]
NOT_FOUND: Final = 12  # [NOT_FOUND, text]
STOPPED: Final = 13  # [STOPPED, text]
WATCHING: Final = 14  # [WATCHING]: the watch is registered
GONE: Final = 15  # [GONE]: watched actor was not there
# to a node's control subject
WATCH: Final = 20  # [WATCH, watcher node prefix, path] (a request: WATCHING / GONE)
UNWATCH: Final = 21  # [UNWATCH, watcher node prefix, path]
TERMINATED: Final = 22  # [TERMINATED, target node address, path]
PING: Final = 23  # [PING] (a request: OK): is a node serving this prefix?

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(list)


class FrameError(SerializationError):
    """Bytes from the wire that are not a dovecote frame."""


def encode_frame(*items: Any) -> bytes:
    """A frame (kind first) as bytes; items are ints, strings, bytes or None."""
    return _encoder.encode(items)


def decode_frame(data: bytes) -> list[Any]:
    """The items of a frame; FrameError if ``data`` is not one."""
    try:
        frame = _decoder.decode(data)
    except (msgspec.DecodeError, ValueError) as error:
        raise FrameError(f"not a dovecote frame: {error}") from None
    if not frame or type(frame[0]) is not int:
        raise FrameError("not a dovecote frame: no kind")
    return frame
