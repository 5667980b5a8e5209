"""The codec round-trips builtins and the extension types, and refuses everything else."""

from __future__ import annotations

import contextlib
import datetime as dt
import decimal
import math
import pickle
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dovecote import codec
from dovecote._errors import DovecoteError
from dovecote.codec import Codec, SerializationError, decode, encode

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary()
    | st.datetimes()
    | st.datetimes(timezones=st.timezones()).map(lambda d: d.astimezone(dt.UTC))
    | st.dates()
    | st.times()
    | st.timedeltas()
    | st.uuids()
    | st.decimals(allow_nan=False)
)
keys = st.none() | st.text() | st.integers(-(2**63), 2**64 - 1) | st.binary() | st.uuids()


def lists_only(value: Any) -> Any:
    """What a value looks like after the trip: tuples become lists."""
    if isinstance(value, list | tuple):
        return [lists_only(v) for v in value]
    if isinstance(value, dict):
        return {k: lists_only(v) for k, v in value.items()}
    return value


values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(keys, inner, max_size=4)
        | st.frozensets(st.integers() | st.text(), max_size=4)
    ),
    max_leaves=20,
)


@given(values)
def test_every_supported_value_round_trips_with_its_type(value: Any) -> None:
    back = decode(encode(value))
    assert back == lists_only(value)
    assert type(back) is type(lists_only(value))


@given(st.datetimes(timezones=st.none() | st.timezones()))
def test_datetimes_keep_naivety_and_their_utc_offset(value: dt.datetime) -> None:
    back = decode(encode(value))
    assert type(back) is dt.datetime
    assert back.utcoffset() == value.utcoffset()
    assert back.replace(tzinfo=None) == value.replace(tzinfo=None)


def test_tuples_arrive_as_lists_but_tuple_dict_keys_stay_tuples() -> None:
    assert decode(encode((1, (2, 3)))) == [1, [2, 3]]
    assert decode(encode({(1, "a"): 2})) == {(1, "a"): 2}


def test_big_ints_and_special_floats_survive() -> None:
    assert decode(encode([2**200, -(2**70), math.inf])) == [2**200, -(2**70), math.inf]
    assert math.isnan(decode(encode(math.nan)))


class Unregistered:
    pass


@pytest.mark.parametrize(
    "value",
    [Unregistered(), [1, {"x": Unregistered()}], object(), bytearray(b"x"), (lambda: 1)],
)
def test_unregistered_types_raise_serialization_error_naming_the_type(value: Any) -> None:
    with pytest.raises(SerializationError) as info:
        encode(value)
    assert isinstance(info.value, DovecoteError)
    inner = value[1]["x"] if isinstance(value, list) else value
    assert type(inner).__qualname__ in str(info.value)


def test_a_cycle_is_a_serialization_error() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    with pytest.raises(SerializationError):
        encode(loop)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xc1",
        b"\x92\x01",
        b"\x01\x02",
        b"\xd4\x63\x00",  # extension code 99: not ours
        b"\xd4\x02\xff",  # a datetime whose text is not UTF-8
        pickle.dumps(Unregistered()),
        encode([1, 2])[:-1],
    ],
)
def test_undecodable_bytes_raise_serialization_error(data: bytes) -> None:
    with pytest.raises(SerializationError):
        decode(data)


def test_pickle_payloads_never_build_objects() -> None:
    data = pickle.dumps(Unregistered())
    with pytest.raises(SerializationError):
        decode(data)


def test_decode_refuses_non_bytes() -> None:
    with pytest.raises(SerializationError):
        decode("text")  # type: ignore[arg-type]


@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_to_a_value_or_a_serialization_error(data: bytes) -> None:
    with contextlib.suppress(SerializationError):
        decode(data)


def test_separate_codecs_have_separate_registries() -> None:
    import dataclasses

    @dataclasses.dataclass
    class Local:
        x: int

    mine = Codec()
    mine.register(Local)
    assert mine.decode(mine.encode(Local(1))) == Local(1)
    with pytest.raises(SerializationError):
        codec.encode(Local(1))
    with pytest.raises(SerializationError, match="unknown codec type name"):
        codec.decode(mine.encode(Local(1)))


def test_serialization_error_is_reexported() -> None:
    import dovecote

    assert codec.SerializationError is dovecote._errors.SerializationError
    assert decimal.Decimal("1.5") == decode(encode(decimal.Decimal("1.5")))
    assert decode(encode(uuid.UUID(int=7))) == uuid.UUID(int=7)
