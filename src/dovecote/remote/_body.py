"""The message inside a frame: encoded and decoded by the codec (``dovecote.codec``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from dovecote._errors import SerializationError

if TYPE_CHECKING:
    from dovecote.actors import ActorSystem

__all__ = ["decode_body", "encode_body"]

# Stand-in until dovecote.codec lands on this branch: plain MessagePack values only.
_encoder = msgspec.msgpack.Encoder()


def encode_body(message: Any) -> bytes:
    """``message`` as bytes; SerializationError for a type the codec does not know."""
    try:
        return _encoder.encode(message)
    except (TypeError, msgspec.EncodeError) as error:
        raise SerializationError(f"cannot encode {type(message).__qualname__}: {error}") from None


def decode_body(data: bytes, system: ActorSystem) -> Any:
    """The message ``data`` holds, its refs made usable in ``system``."""
    try:
        return msgspec.msgpack.decode(data)
    except (msgspec.DecodeError, ValueError) as error:
        raise SerializationError(f"undecodable message: {error}") from None
