"""The wire codec: msgspec MessagePack for everything that leaves the process.

``encode(obj) -> bytes`` and ``decode(data, *, system=None)`` handle builtins,
``datetime`` / ``date`` / ``time`` / ``timedelta``, ``uuid.UUID``, ``Decimal``, sets, and
classes registered with ``register(cls, name=None)`` (msgspec Structs, dataclasses, attrs
classes) under a stable name. Actor refs travel as addresses. Never pickle: decoding
only ever builds those types, and anything else raises :class:`SerializationError`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from dovecote._errors import SerializationError
from dovecote.codec._address import (
    ActorAddress,
    AddressResolver,
    HasAddress,
    register_ref_type,
)
from dovecote.codec._codec import Codec

__all__ = [
    "ActorAddress",
    "AddressResolver",
    "Codec",
    "HasAddress",
    "SerializationError",
    "decode",
    "default_codec",
    "encode",
    "register",
    "register_ref_type",
]

T = TypeVar("T", bound=type)

default_codec = Codec()
"""The process-wide codec behind the module-level functions."""


def encode(obj: Any) -> bytes:
    """Encode ``obj`` with the default codec (see :meth:`Codec.encode`)."""
    return default_codec.encode(obj)


def decode(data: bytes | bytearray | memoryview, *, system: AddressResolver | None = None) -> Any:
    """Decode ``data`` with the default codec (see :meth:`Codec.decode`)."""
    return default_codec.decode(data, system=system)


def register(cls: T, name: str | None = None) -> T:
    """Register ``cls`` with the default codec under ``name`` (default ``module.qualname``)."""
    return default_codec.register(cls, name)
