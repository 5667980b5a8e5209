"""The message inside a frame: encoded and decoded by the codec (``dovecote.codec``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dovecote import codec

if TYPE_CHECKING:
    from dovecote.actors import ActorSystem

__all__ = ["decode_body", "encode_body"]

_codec = codec.default_codec


def encode_body(message: Any) -> bytes:
    """``message`` as bytes; SerializationError for a type the codec does not know."""
    return _codec.encode(message)


def decode_body(data: bytes, system: ActorSystem) -> Any:
    """The message ``data`` holds, its refs made usable in ``system`` (remote refs for
    other nodes' addresses); SerializationError if it does not decode."""
    return _codec.decode(data, system=system)
