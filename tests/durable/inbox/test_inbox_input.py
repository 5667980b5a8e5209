"""The input defenses: every bad id, source, metadata, option or table name is refused
with InvalidRequestError before any SQL runs, on every method that takes it."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inbox_kit import Db

from dovecote.durable import Inbox, InvalidRequestError
from dovecote.durable._inbox_input import check_key, check_table, encode_metadata

SRC = "webhook:stripe"
FORBIDDEN = [chr(c) for c in range(0x20)] + ["\x7f"]
#: characters a valid key may hold, the awkward ones over-represented
KEY_CHARS = st.one_of(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="".join(FORBIDDEN)),
    st.sampled_from([" ", "\x80", "\x9f", "\u2028", "é", "😀", "\\", "'", '"', "%", "_"]),
)
VALID_KEYS = st.text(KEY_CHARS, min_size=1, max_size=40)

BAD_KEYS: list[tuple[str, Any]] = [
    ("empty", ""),
    ("too long", "x" * 257),
    ("NUL", "abc\0attacker"),
    ("C0", "line\nbreak"),
    ("tab", "a\tb"),
    ("ESC", "\x1b[31m"),
    ("DEL", "a\x7f"),
    ("surrogate", "a\ud800"),
    ("int", 123),
    ("None", None),
    ("bytes", b"abc"),
]


# -- pure properties of the checks ------------------------------------------------------


@given(st.text(max_size=300))
def test_a_key_is_accepted_exactly_when_it_is_short_non_empty_and_clean(text: str):
    clean = re.search("[\x00-\x1f\x7f\ud800-\udfff]", text) is None
    acceptable = 1 <= len(text) <= 256 and clean
    try:
        assert check_key("message_id", text, 256) == text
    except InvalidRequestError:
        assert not acceptable
    else:
        assert acceptable


@given(VALID_KEYS, st.sampled_from(FORBIDDEN), st.data())
def test_one_control_character_anywhere_gets_the_key_refused(key: str, bad: str, data: Any):
    at = data.draw(st.integers(0, len(key)))
    poisoned = key[:at] + bad + key[at:]
    with pytest.raises(InvalidRequestError, match=f"U\\+{ord(bad):04X} at index {at}"):
        check_key("source", poisoned, 256)


@given(st.integers(1, 300), st.sampled_from(["a", "é", "😀", "中"]))
def test_caps_count_characters_not_bytes(n: int, char: str):
    key = char * n
    if n <= 256:
        assert check_key("message_id", key, 256) == key
    else:
        with pytest.raises(InvalidRequestError, match=f"{n} characters"):
            check_key("message_id", key, 256)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\0" in value
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    return False


def _has_surrogate(value: Any) -> bool:
    return re.search("[\ud800-\udfff]", json.dumps(value, ensure_ascii=False)) is not None


@given(JSON, st.integers(16, 400))
def test_metadata_round_trips_or_is_refused_for_a_stated_reason(value: Any, cap: int):
    try:
        text = encode_metadata(value, cap)
    except InvalidRequestError:
        raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        size = len(raw.encode("utf-8", "surrogatepass"))
        assert size > cap or _has_nul(value) or _has_surrogate(value)
    else:
        if value is None:  # no metadata: stored as NULL
            assert text is None
            return
        assert text is not None
        assert len(text.encode("utf-8")) <= cap
        assert not _has_nul(value)
        assert json.loads(text) == value


def test_metadata_size_is_measured_in_utf8_bytes_of_the_json_text():
    exactly = "é" * 10  # '"' + 20 bytes + '"' = 22 bytes
    assert encode_metadata(exactly, 22) == '"éééééééééé"'
    with pytest.raises(InvalidRequestError, match="23 bytes once serialised; the cap is 22"):
        encode_metadata(exactly + "a", 22)


@pytest.mark.parametrize(
    "metadata",
    [object(), {1, 2}, {"when": datetime(2026, 1, 1)}, float("nan"), {"x": float("inf")}],
    ids=["object", "set", "datetime", "nan", "inf"],
)
def test_metadata_that_is_not_json_is_refused(metadata: Any):
    with pytest.raises(InvalidRequestError, match="not JSON-serialisable"):
        encode_metadata(metadata, 65_536)


def test_metadata_with_nul_is_refused_but_an_escaped_backslash_u0000_is_kept():
    with pytest.raises(InvalidRequestError, match="NUL"):
        encode_metadata({"k": "a\0b"}, 65_536)
    with pytest.raises(InvalidRequestError, match="NUL"):
        encode_metadata({"a\0": 1}, 65_536)
    text = encode_metadata({"k": "\\u0000", "j": "\\\\\0"[:-1]}, 65_536)
    assert text is not None
    assert json.loads(text) == {"k": "\\u0000", "j": "\\\\"}


# -- table names and options ------------------------------------------------------------


@pytest.mark.parametrize(
    "table",
    [
        "",
        "1inbox",
        "public.inbox",
        'inbox"; DROP TABLE users; --',
        "in box",
        "inbox-events",
        "x" * 64,
        "ínbox",
        "inbox\0",
        None,
        7,
    ],
)
def test_a_table_name_that_is_not_a_plain_identifier_is_refused(table: Any):
    with pytest.raises(InvalidRequestError, match="plain SQL identifier"):
        check_table(table)


@given(st.text(max_size=80))
def test_only_plain_identifiers_pass_as_table_names(text: str):
    plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", text) is not None
    try:
        check_table(text)
    except InvalidRequestError:
        assert not plain
    else:
        assert plain


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("retention_days", 0),
        ("retention_days", -1),
        ("retention_days", float("nan")),
        ("retention_days", float("inf")),
        ("retention_days", True),
        ("retention_days", "30"),
        ("retention_days", 10**12),
        ("max_payload_bytes", 0),
        ("max_payload_bytes", 1.5),
        ("message_id_max_len", True),
        ("source_max_len", -3),
        ("audit", "yes"),
        ("table", "bad.name"),
    ],
)
async def test_bad_options_are_refused_when_the_inbox_is_built(sqlite_db: Db, option, value):
    with pytest.raises(InvalidRequestError, match=option.split("_")[0]):
        sqlite_db.inbox(**{option: value})


# -- every method, before any SQL -------------------------------------------------------


async def _sent(seen: list[str]) -> list[str]:
    """The statements recorded so far (asyncpg calls its query loggers on the next tick)."""
    await asyncio.sleep(0)
    return seen


async def _statements(db: Db) -> list[str]:
    """Start recording every statement the connection sends; returns the live list."""
    seen: list[str] = []
    if db.kind == "sqlite":
        await db.db.set_trace_callback(seen.append)
    else:
        db.db.add_query_logger(lambda record: seen.append(record.query))
    return seen


def _calls(inbox: Inbox, tx: Any, mid: Any, src: Any) -> dict[str, Any]:
    return {
        "handle": lambda: inbox.handle(mid, src, lambda tx: pytest.fail("handler ran")),
        "record_receive": lambda: inbox.record_receive(tx, mid, src),
        "mark_processed": lambda: inbox.mark_processed(tx, mid, src),
        "is_fresh": lambda: inbox.is_fresh(mid, src),
    }


@pytest.mark.parametrize("method", ["handle", "record_receive", "mark_processed", "is_fresh"])
@pytest.mark.parametrize("field", ["message_id", "source"])
@pytest.mark.parametrize(("why", "bad"), BAD_KEYS, ids=[w for w, _ in BAD_KEYS])
async def test_every_method_refuses_a_bad_id_or_source_before_any_sql(
    single: Db, method: str, field: str, why: str, bad: Any
):
    inbox = single.inbox()
    await inbox.declare_schema()
    seen = await _statements(single)
    mid, src = (bad, SRC) if field == "message_id" else ("m-1", bad)
    with pytest.raises(InvalidRequestError, match=field):
        await _calls(inbox, single.db, mid, src)[method]()
    assert await _sent(seen) == []
    await inbox.is_fresh("m-1", SRC)  # the recorder does see the inbox's statements
    assert await _sent(seen)


@pytest.mark.parametrize(
    ("why", "bad"),
    [(w, b) for w, b in BAD_KEYS if b is not None],  # source=None means every source
    ids=[w for w, b in BAD_KEYS if b is not None],
)
async def test_get_stats_refuses_a_bad_source_before_any_sql(single: Db, why: str, bad: Any):
    inbox = single.inbox()
    seen = await _statements(single)
    with pytest.raises(InvalidRequestError, match="source"):
        await inbox.get_stats(source=bad)
    assert await _sent(seen) == []


@pytest.mark.parametrize("method", ["handle", "record_receive"])
async def test_bad_metadata_is_refused_before_any_sql(single: Db, method: str):
    inbox = single.inbox(max_payload_bytes=100)
    await inbox.declare_schema()
    seen = await _statements(single)
    for metadata in ({"blob": "x" * 200}, {"not": object()}, {"nul": "\0"}):
        call = (
            inbox.handle("m-1", SRC, lambda tx: None, metadata=metadata)
            if method == "handle"
            else inbox.record_receive(single.db, "m-1", SRC, metadata=metadata)
        )
        with pytest.raises(InvalidRequestError, match="metadata"):
            await call
    assert await _sent(seen) == []


async def test_sweep_refuses_a_naive_datetime_before_any_sql(single: Db):
    inbox = single.inbox()
    seen = await _statements(single)
    for now in (datetime(2026, 1, 1), "2026-01-01", 0):
        with pytest.raises(InvalidRequestError, match="timezone-aware"):
            await inbox.sweep(now=now)  # type: ignore[arg-type]
    assert await _sent(seen) == []


async def test_handle_refuses_a_handler_that_is_not_callable(single: Db):
    inbox = single.inbox()
    seen = await _statements(single)
    with pytest.raises(InvalidRequestError, match="callable"):
        await inbox.handle("m-1", SRC, "not a function")  # type: ignore[call-overload]
    assert await _sent(seen) == []


# -- end to end on the real databases ----------------------------------------------------


async def test_abc_nul_attacker_cannot_collide_with_abc(backend: Db):
    """The seed's dedupe-collision attack: a NUL-truncated key must not match a real one."""
    inbox = backend.inbox()
    await inbox.declare_schema()
    assert (await inbox.handle("abc", SRC, lambda tx: "real")).fresh
    with pytest.raises(InvalidRequestError, match="U\\+0000 at index 3"):
        await inbox.handle("abc\0attacker", SRC, lambda tx: "attack")
    with pytest.raises(InvalidRequestError, match="U\\+0000"):
        await inbox.is_fresh("abc\0attacker", SRC)
    # and the other way round: the attacker's id first cannot pre-empt the real one
    with pytest.raises(InvalidRequestError):
        await inbox.handle("xyz\0", SRC, lambda tx: "attack")
    assert (await inbox.handle("xyz", SRC, lambda tx: "real")).fresh
    assert (await inbox.get_stats()).total == 2


async def test_the_length_caps_are_configurable_and_inclusive(backend: Db):
    inbox = backend.inbox(message_id_max_len=8, source_max_len=4)
    await inbox.declare_schema()
    assert (await inbox.handle("😀" * 8, "ééé€", lambda tx: None)).fresh
    with pytest.raises(InvalidRequestError, match="9 characters long; the cap is 8"):
        await inbox.handle("a" * 9, "s", lambda tx: None)
    with pytest.raises(InvalidRequestError, match="5 characters long; the cap is 4"):
        await inbox.handle("a", "s" * 5, lambda tx: None)


# the fixture's table is shared by the examples on purpose: each example has its own source
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(VALID_KEYS, max_size=12))
async def test_any_valid_ids_are_fresh_exactly_once_each(backend: Db, ids: list[str]):
    inbox = backend.inbox()
    await inbox.declare_schema()
    source = f"prop-{uuid.uuid4().hex}"  # one source per example keeps examples apart
    seen: set[str] = set()
    for mid in ids:
        outcome = await inbox.handle(mid, source, lambda tx, mid=mid: mid)
        assert outcome.fresh is (mid not in seen)
        assert outcome.result == (mid if mid not in seen else None)
        seen.add(mid)
    assert (await inbox.get_stats(source=source)).total == len(seen)
    for mid in seen:
        assert not await inbox.is_fresh(mid, source)
