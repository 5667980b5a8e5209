"""The type registry: which classes may cross the wire, under which stable names."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import attrs
import msgspec

from dovecote._errors import SerializationError
from dovecote.codec._address import ActorAddress, is_ref_type

__all__ = ["TypeRegistry", "TypeSpec"]


class TypeSpec:
    """One registered class: its wire name and, once first needed, its field layout."""

    __slots__ = ("_custom", "_fields", "_tag", "array_like", "cls", "name")

    def __init__(self, cls: type, name: str) -> None:
        self.cls = cls
        self.name = name
        self.array_like = False
        self._fields: tuple[tuple[str, str], ...] | None = None
        self._tag: tuple[str, Any] | None = None
        self._custom: dict[str, type] = {}  # wire name -> ref class of ref-typed fields

    def fields(self) -> tuple[tuple[str, str], ...]:
        """(attribute name, wire name) pairs, resolved lazily so forward refs work."""
        fields = self._fields
        if fields is None:
            try:
                info = msgspec.inspect.type_info(self.cls)
            except Exception as exc:  # unresolvable annotations and the like
                raise SerializationError(
                    f"cannot inspect registered class {self.name!r}: {exc}"
                ) from exc
            fields = tuple((f.name, f.encode_name) for f in info.fields)  # type: ignore[attr-defined]
            self._custom = {
                f.encode_name: ref_class
                for f in info.fields  # type: ignore[attr-defined]
                if (ref_class := _ref_class(f.type)) is not None
            }
            if isinstance(info, msgspec.inspect.StructType):
                self.array_like = info.array_like
                if info.tag_field is not None:
                    self._tag = (info.tag_field, info.tag)
            self._fields = fields
        return fields

    def to_wire(self, obj: Any, convert: Any) -> list[Any] | dict[str, Any]:
        """The instance's fields as wire values (``convert`` encodes each one)."""
        fields = self.fields()
        if self.array_like:
            out: list[Any] = [] if self._tag is None else [self._tag[1]]
            out.extend(convert(getattr(obj, name)) for name, _ in fields)
            return out
        body = {wire: convert(getattr(obj, name)) for name, wire in fields}
        if self._tag is not None:
            body[self._tag[0]] = self._tag[1]
        return body

    def from_wire(self, body: Any) -> Any:
        """Build the instance; typed fields get their declared types (tuples included)."""
        fields = self.fields()
        late: list[tuple[str, ActorAddress]] = []
        if self._custom:
            # A field typed as a ref class holds an ActorAddress when decoding without a
            # system. msgspec insists on an instance of the annotated class there, so it
            # sees an empty placeholder and the address is set on the built object.
            if self.array_like and type(body) is list:
                offset = 0 if self._tag is None else 1
                for index, (name, wire) in enumerate(fields, offset):
                    if index < len(body):
                        body[index] = self._placeholder(name, wire, body[index], late)
            elif type(body) is dict:
                for name, wire in fields:
                    if wire in body:
                        body[wire] = self._placeholder(name, wire, body[wire], late)
        obj: Any = msgspec.convert(body, self.cls)
        for name, address in late:
            if isinstance(obj, msgspec.Struct):
                msgspec.structs.force_setattr(obj, name, address)
            else:
                object.__setattr__(obj, name, address)
        return obj

    def _placeholder(
        self, name: str, wire: str, value: Any, late: list[tuple[str, ActorAddress]]
    ) -> Any:
        ref_class = self._custom.get(wire)
        if ref_class is None or not isinstance(value, ActorAddress):
            return value
        late.append((name, value))
        return object.__new__(ref_class)


def _ref_class(info: Any) -> type | None:
    """The ref class a field is typed as (``ActorRef`` or ``ActorRef | None``), if any."""
    if isinstance(info, msgspec.inspect.CustomType):
        return info.cls if is_ref_type(info.cls) else None
    if isinstance(info, msgspec.inspect.UnionType):
        for member in info.types:
            if isinstance(member, msgspec.inspect.CustomType) and is_ref_type(member.cls):
                return member.cls
    return None


def _is_supported(cls: type) -> bool:
    return issubclass(cls, msgspec.Struct) or dataclasses.is_dataclass(cls) or attrs.has(cls)


class TypeRegistry:
    """Name ↔ class mapping; names are unique and a class has one name."""

    __slots__ = ("_by_name", "_by_type", "_lock")

    def __init__(self) -> None:
        self._by_name: dict[str, TypeSpec] = {}
        self._by_type: dict[type, TypeSpec] = {}
        self._lock = threading.Lock()

    def register(self, cls: type, name: str | None = None) -> TypeSpec:
        """Register ``cls`` under ``name`` (default ``module.qualname``); idempotent."""
        if not isinstance(cls, type) or not _is_supported(cls):
            raise SerializationError(
                f"register() takes a msgspec Struct, a dataclass or an attrs class, got {cls!r}"
            )
        if name is None:
            name = f"{cls.__module__}.{cls.__qualname__}"
        if not isinstance(name, str) or not name or len(name) > 256:
            raise SerializationError(f"a codec type name is a non-empty str ≤ 256, got {name!r}")
        with self._lock:
            spec = self._by_type.get(cls)
            if spec is not None:
                if spec.name != name:
                    raise SerializationError(
                        f"{cls.__qualname__} is already registered as {spec.name!r}"
                    )
                return spec
            taken = self._by_name.get(name)
            if taken is not None:
                raise SerializationError(
                    f"codec type name {name!r} is already taken by {taken.cls.__qualname__}"
                )
            spec = TypeSpec(cls, name)
            self._by_type[cls] = spec
            self._by_name[name] = spec
            return spec

    def by_type(self, cls: type) -> TypeSpec | None:
        """The spec of exactly ``cls`` (subclasses register on their own)."""
        return self._by_type.get(cls)

    def by_name(self, name: str) -> TypeSpec | None:
        """The spec registered under ``name``."""
        return self._by_name.get(name)
