"""Registered Structs, dataclasses and attrs classes travel by their stable names."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dovecote.codec import Codec, SerializationError, decode, encode, register


@register
class Point(msgspec.Struct, frozen=True):
    x: int
    y: int


@register
@dataclasses.dataclass(frozen=True)
class Order:
    order_id: uuid.UUID
    lines: tuple[tuple[str, int], ...]
    placed_at: dt.datetime
    origin: Point
    note: str | None = None


@register
@attrs.frozen
class Shipment:
    order: Order
    points: list[Point]
    tags: frozenset[str] = frozenset()
    anything: Any = None


@register
class Compact(msgspec.Struct, array_like=True, tag=True):
    a: int
    b: tuple[int, int]


@register
@attrs.define
class Private:
    _secret: int
    shown: int = 0


@dataclasses.dataclass
class Renamed:
    v: int


register(Renamed, "custom.Name")


orders = st.builds(
    Order,
    order_id=st.uuids(),
    lines=st.lists(st.tuples(st.text(), st.integers(-(2**63), 2**63)), max_size=3).map(tuple),
    placed_at=st.datetimes(),
    origin=st.builds(Point, x=st.integers(), y=st.integers()),
    note=st.none() | st.text(),
)


@given(orders)
def test_registered_dataclasses_round_trip_with_typed_tuples(order: Order) -> None:
    back = decode(encode(order))
    assert back == order
    assert type(back.lines) is tuple
    assert all(type(line) is tuple for line in back.lines)


@given(
    st.builds(
        Shipment, order=orders, points=st.lists(st.builds(Point)), tags=st.frozensets(st.text())
    )
)
def test_nested_registered_classes_round_trip(shipment: Shipment) -> None:
    assert decode(encode(shipment)) == shipment


def test_untyped_fields_keep_lists_but_registered_values_inside_them() -> None:
    shipment = Shipment(
        order=Order(uuid.uuid4(), (), dt.datetime(2026, 1, 1), Point(0, 0)),
        points=[],
        anything=(Point(1, 2), (3, 4)),
    )
    assert decode(encode(shipment)).anything == [Point(1, 2), [3, 4]]


def test_array_like_tagged_structs_and_private_attrs_fields() -> None:
    assert decode(encode(Compact(1, (2, 3)))) == Compact(1, (2, 3))
    assert decode(encode(Private(7, 8))) == Private(7, 8)


def test_default_name_is_module_qualname_and_custom_names_are_used() -> None:
    data = encode(Point(1, 2))
    assert f"{Point.__module__}.Point".encode() in data
    assert b"custom.Name" in encode(Renamed(1))


def test_registering_is_idempotent_but_names_and_classes_are_unique() -> None:
    register(Point)
    with pytest.raises(SerializationError, match="already registered"):
        register(Point, "other.name")

    @dataclasses.dataclass
    class Impostor:
        x: int

    with pytest.raises(SerializationError, match="already taken"):
        register(Impostor, f"{Point.__module__}.Point")


@pytest.mark.parametrize("bad", [int, object, "Point", 3])
def test_only_structs_dataclasses_and_attrs_classes_register(bad: Any) -> None:
    with pytest.raises(SerializationError):
        register(bad)


def test_a_subclass_of_a_registered_class_is_not_registered() -> None:
    @dataclasses.dataclass(frozen=True)
    class SubOrder(Order):
        pass

    with pytest.raises(SerializationError, match="SubOrder"):
        encode(SubOrder(uuid.uuid4(), (), dt.datetime(2026, 1, 1), Point(0, 0)))


def test_an_unknown_type_name_is_a_serialization_error() -> None:
    @dataclasses.dataclass
    class Elsewhere:
        x: int

    other = Codec()
    other.register(Elsewhere, "not.known.Here")
    with pytest.raises(SerializationError, match=r"not\.known\.Here"):
        decode(other.encode(Elsewhere(1)))


def test_fields_of_the_wrong_type_are_a_serialization_error() -> None:
    @dataclasses.dataclass
    class Loose:
        x: Any

    other = Codec()
    other.register(Loose, f"{Point.__module__}.Point")
    with pytest.raises(SerializationError, match="bad fields"):
        decode(other.encode(Loose("not an int")))
