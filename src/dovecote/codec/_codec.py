"""Codec: values ↔ MessagePack bytes with msgspec, never pickle.

Builtins map to MessagePack types (a tuple becomes an array, so it arrives as a list).
Everything else rides in an extension type of ours, so that decoding can only ever build
the types listed here or classes someone registered:

====  =====================================================================
code  payload
====  =====================================================================
1     a registered class: ``[name, fields]`` (fields a map, or an array for
      ``array_like`` Structs)
2     ``datetime`` (ISO 8601 text: naive stays naive, the offset is kept)
3     ``uuid.UUID`` (16 bytes)
4     an actor address (UTF-8 text)
5     ``date``; 6 ``time``; 7 ``timedelta`` (``[days, seconds, µs]``)
8     ``Decimal`` (text); 9 an int beyond 64 bits (text)
10    ``set``; 11 ``frozenset`` (arrays)
12    a ``dict`` whose keys MessagePack maps cannot hold (``[[k, v], ...]``)
====  =====================================================================
"""

from __future__ import annotations

import contextvars
import datetime as dt
import decimal
import uuid
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec
from msgspec.msgpack import Ext

from dovecote._errors import SerializationError
from dovecote.codec._address import ActorAddress, AddressResolver, is_ref
from dovecote.codec._registry import TypeRegistry

__all__ = ["Codec"]

T = TypeVar("T", bound=type)

_OBJECT, _DATETIME, _UUID, _ADDRESS = 1, 2, 3, 4
_DATE, _TIME, _TIMEDELTA, _DECIMAL, _BIGINT = 5, 6, 7, 8, 9
_SET, _FROZENSET, _PAIRS = 10, 11, 12

_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1
# Keys a MessagePack map can carry and msgspec decodes back as themselves.
_PLAIN_KEYS = frozenset({str, int, float, bytes, bool, type(None)})
_BINARY = (bytes, bytearray, memoryview)
_NO_WEAKREF: set[type] = set()  # resolver classes whose instances take no weak reference
# The resolver of a decode whose system cannot be weakly referenced (see Codec.decode).
_resolver: contextvars.ContextVar[AddressResolver | None] = contextvars.ContextVar(
    "dovecote_codec_resolver", default=None
)


class _Hook:
    """A decoder's ext_hook: the codec's extensions, refs resolved by one system.

    ``resolver`` is a weak reference (the codec outlives the systems it decodes for), or
    None for the codec's own decoder, which takes the resolver from a context variable.
    """

    __slots__ = ("codec", "decode", "resolver")

    def __init__(self, codec: Codec, resolver: weakref.ref[Any] | None) -> None:
        self.codec = codec
        self.resolver = resolver
        self.decode: Callable[[Any], Any] = _unset

    def __call__(self, code: int, data: memoryview) -> Any:
        return self.codec._extension(code, data, self)


def _unset(data: Any) -> Any:
    raise AssertionError("the hook's decoder is not set")


def _freeze_key(value: Any) -> Any:
    # A list can never be a dict key, so a list in key position was a tuple.
    if type(value) is list:
        return tuple(_freeze_key(v) for v in value)
    return value


class Codec:
    """An encoder/decoder pair plus its own type registry.

    The module-level ``encode`` / ``decode`` / ``register`` use one default instance;
    make your own ``Codec()`` when a component wants a registry of its own.
    """

    __slots__ = ("_decoder", "_decoders", "_encoder", "_extensions", "_recent", "registry")

    def __init__(self) -> None:
        self.registry = TypeRegistry()
        self._encoder = msgspec.msgpack.Encoder()
        self._decoder = self._new_decoder(None)
        # one decoder per system decoded for (by id, with a weak reference to the system),
        # and the last one used, so a decode sets no context variable
        self._decoders: dict[int, tuple[weakref.ref[Any], msgspec.msgpack.Decoder[Any]]] = {}
        self._recent: tuple[weakref.ref[Any] | None, msgspec.msgpack.Decoder[Any]] = (
            None,
            self._decoder,
        )
        encode = self._encoder.encode
        self._extensions: dict[type, Callable[[Any], Ext]] = {
            dt.datetime: lambda v: Ext(_DATETIME, v.isoformat().encode()),
            dt.date: lambda v: Ext(_DATE, v.isoformat().encode()),
            dt.time: lambda v: Ext(_TIME, v.isoformat().encode()),
            dt.timedelta: lambda v: Ext(_TIMEDELTA, encode([v.days, v.seconds, v.microseconds])),
            uuid.UUID: lambda v: Ext(_UUID, v.bytes),
            decimal.Decimal: lambda v: Ext(_DECIMAL, str(v).encode()),
            set: lambda v: Ext(_SET, encode([self._wire(x) for x in v])),
            frozenset: lambda v: Ext(_FROZENSET, encode([self._wire(x) for x in v])),
            ActorAddress: lambda v: Ext(_ADDRESS, v.address.encode()),
        }

    def register(self, cls: T, name: str | None = None) -> T:
        """Allow ``cls`` on the wire under ``name`` (default ``module.qualname``).

        Works for msgspec Structs, dataclasses and attrs classes; returns ``cls`` so it
        can decorate. Re-registering the same class under the same name is a no-op.
        """
        self.registry.register(cls, name)
        return cls

    # -- encoding ------------------------------------------------------------------------
    def encode(self, obj: Any) -> bytes:
        """MessagePack bytes for ``obj``; :class:`SerializationError` names what is not allowed."""
        try:
            return self._encoder.encode(self._wire(obj))
        except SerializationError:
            raise
        except RecursionError as exc:
            raise SerializationError("value is nested too deeply (or holds a cycle)") from exc
        except Exception as exc:
            raise SerializationError(f"cannot encode {type(obj).__qualname__}: {exc}") from exc

    def _wire(self, obj: Any) -> Any:
        cls = type(obj)
        if cls is str or cls is bytes or cls is bool or cls is float or obj is None:
            return obj
        if cls is int:
            return obj if _INT_MIN <= obj <= _INT_MAX else Ext(_BIGINT, str(obj).encode())
        if cls is list or cls is tuple:
            return [self._wire(item) for item in obj]
        if cls is dict:
            if all(type(key) in _PLAIN_KEYS for key in obj):
                return {self._wire(k): self._wire(v) for k, v in obj.items()}
            pairs = [[self._wire(k), self._wire(v)] for k, v in obj.items()]
            return Ext(_PAIRS, self._encoder.encode(pairs))
        extension = self._extensions.get(cls)
        if extension is not None:
            return extension(obj)
        spec = self.registry.by_type(cls)
        if spec is not None:
            body = spec.to_wire(obj, self._wire)
            return Ext(_OBJECT, self._encoder.encode([spec.name, body]))
        if is_ref(obj):
            return Ext(_ADDRESS, obj.address.encode())
        raise SerializationError(
            f"cannot encode {cls.__module__}.{cls.__qualname__}: it is not a builtin and not "
            "registered (use dovecote.codec.register)"
        )

    # -- decoding ------------------------------------------------------------------------
    def decode(
        self, data: bytes | bytearray | memoryview, *, system: AddressResolver | None = None
    ) -> Any:
        """The value encoded in ``data``; refs become ``system``'s refs when one is given.

        Without ``system`` refs arrive as :class:`ActorAddress`. Malformed bytes, unknown
        extension codes or type names raise :class:`SerializationError`.
        """
        if not isinstance(data, _BINARY):
            raise SerializationError(f"decode() takes bytes, got {type(data).__qualname__}")
        token = None
        if system is None:
            decoder = self._decoder
        else:
            recent = self._recent
            ref = recent[0]
            if ref is not None and ref() is system:
                decoder = recent[1]
            else:
                found = self._decoder_for(system)
                if found is None:  # (a resolver that takes no weak reference)
                    decoder = self._decoder
                    token = _resolver.set(system)
                else:
                    decoder = found
        try:
            return decoder.decode(data)
        except SerializationError:
            raise
        except Exception as exc:
            raise SerializationError(f"undecodable data: {exc}") from exc
        finally:
            if token is not None:
                _resolver.reset(token)

    def _new_decoder(self, resolver: weakref.ref[Any] | None) -> msgspec.msgpack.Decoder[Any]:
        hook = _Hook(self, resolver)
        decoder: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(ext_hook=hook)
        hook.decode = decoder.decode
        return decoder

    def _decoder_for(self, system: AddressResolver) -> msgspec.msgpack.Decoder[Any] | None:
        """``system``'s own decoder (made on first use, dropped with the system)."""
        key = id(system)
        decoders = self._decoders
        entry = decoders.get(key)
        if entry is None or entry[0]() is not system:

            def forget(gone: weakref.ref[Any]) -> None:
                held = decoders.get(key)
                if held is not None and held[0] is gone:
                    del decoders[key]

            if type(system) in _NO_WEAKREF:
                return None
            try:
                ref = weakref.ref(system, forget)
            except TypeError:
                _NO_WEAKREF.add(type(system))
                return None
            entry = decoders[key] = (ref, self._new_decoder(ref))
        self._recent = entry
        return entry[1]

    def _extension(self, code: int, data: memoryview, hook: _Hook) -> Any:
        if code == _OBJECT:
            name, body = hook.decode(data)
            spec = self.registry.by_name(name) if isinstance(name, str) else None
            if spec is None:
                raise SerializationError(f"unknown codec type name {name!r}")
            try:
                return spec.from_wire(body)
            except msgspec.ValidationError as exc:
                raise SerializationError(f"bad fields for {name!r}: {exc}") from exc
        if code == _ADDRESS:
            resolver = hook.resolver() if hook.resolver is not None else _resolver.get()
            return self._address(bytes(data).decode(), resolver)
        if code == _DATETIME:
            return dt.datetime.fromisoformat(bytes(data).decode())
        if code == _UUID:
            return uuid.UUID(bytes=bytes(data))
        if code == _DATE:
            return dt.date.fromisoformat(bytes(data).decode())
        if code == _TIME:
            return dt.time.fromisoformat(bytes(data).decode())
        if code == _TIMEDELTA:
            days, seconds, micros = hook.decode(data)
            return dt.timedelta(days=days, seconds=seconds, microseconds=micros)
        if code == _DECIMAL:
            return decimal.Decimal(bytes(data).decode())
        if code == _BIGINT:
            return int(bytes(data).decode())
        if code in (_SET, _FROZENSET):
            items = (_freeze_key(v) for v in hook.decode(data))
            return set(items) if code == _SET else frozenset(items)
        if code == _PAIRS:
            return {_freeze_key(k): v for k, v in hook.decode(data)}
        raise SerializationError(f"unknown MessagePack extension code {code}")

    def _address(self, address: str, resolver: AddressResolver | None) -> Any:
        if resolver is None:
            return ActorAddress(address)
        try:
            return resolver.resolve(address)
        except LookupError:  # the actor is gone (ActorNotFoundError): keep the address
            return ActorAddress(address)
