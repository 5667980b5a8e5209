"""The inbox's input defenses: every check runs before any SQL does.

A message id and a source become a primary key. PostgreSQL ``TEXT`` cannot hold NUL and
some drivers cut a string at it, so ``"abc\\0attacker"`` could dedupe against ``"abc"``;
control characters in keys also poison logs. So ids and sources are bounded (in
characters), non-empty, valid Unicode and free of NUL / C0 / DEL. Metadata must be JSON
that both backends store byte for byte, under a size cap. Table names are interpolated
into SQL, so they must be plain identifiers.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime, timedelta

from dovecote.durable._errors import InvalidRequestError

__all__ = [
    "check_datetime",
    "check_key",
    "check_limit",
    "check_retention",
    "check_table",
    "encode_metadata",
    "retention_horizons",
]

#: NUL and the rest of C0 (U+0000-U+001F), DEL (U+007F), and lone surrogates (not text)
_FORBIDDEN = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")
#: a plain SQL identifier; 63 is PostgreSQL's identifier limit (NAMEDATALEN - 1)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
#: a JSON ``\u0000`` escape that is not itself an escaped backslash followed by "u0000"
_JSON_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
#: timedelta's own bound, halved because unprocessed rows are kept twice as long
_MAX_RETENTION_DAYS = 999_999_999 // 2


def check_table(table: object) -> str:
    """Return *table* if it is a plain SQL identifier (no schema qualifier, no quotes)."""
    if not isinstance(table, str) or _IDENTIFIER.fullmatch(table) is None:
        raise InvalidRequestError(
            f"inbox table must be a plain SQL identifier (a letter or _, then letters, "
            f"digits or _, at most 63 characters, no schema qualifier), not {table!r}"
        )
    return table


def check_limit(name: str, value: object) -> int:
    """Return *value* if it is a positive int (bool excluded)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidRequestError(f"{name} must be a positive integer, not {value!r}")
    return value


def check_retention(value: object) -> float:
    """Return *value* (days) if it is a positive, finite, representable number of days."""
    if (
        not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(value)
        and 0 < value <= _MAX_RETENTION_DAYS
    ):
        return float(value)
    raise InvalidRequestError(
        f"retention_days must be a positive number of days up to {_MAX_RETENTION_DAYS:,}, "
        f"not {value!r}"
    )


def check_key(what: str, value: object, max_len: int) -> str:
    """Return *value* if it is a usable message id or source (see the module docstring)."""
    if not isinstance(value, str):
        raise InvalidRequestError(f"inbox {what} must be a str, not {type(value).__name__}")
    if not value:
        raise InvalidRequestError(f"inbox {what} must not be empty")
    if len(value) > max_len:
        raise InvalidRequestError(
            f"inbox {what} is {len(value)} characters long; the cap is {max_len}"
        )
    bad = _FORBIDDEN.search(value)
    if bad is not None:
        raise InvalidRequestError(
            f"inbox {what} holds the character U+{ord(bad.group()):04X} at index "
            f"{bad.start()}: NUL, C0 control, DEL and lone surrogate characters are refused "
            "(they could make two different ids collide in the primary key)"
        )
    return value


def encode_metadata(metadata: object, max_bytes: int) -> str | None:
    """Serialise *metadata* to JSON text both backends store unchanged, or ``None``.

    Refused: values ``json`` cannot encode, NaN and infinities (not JSON), strings holding
    NUL (PostgreSQL ``jsonb`` refuses ``\\u0000``), lone surrogates (not UTF-8), and text
    over *max_bytes* once encoded as UTF-8.
    """
    if metadata is None:
        return None
    try:
        text = json.dumps(metadata, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        size = len(text.encode("utf-8"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidRequestError(f"inbox metadata is not JSON-serialisable: {exc}") from None
    if size > max_bytes:
        raise InvalidRequestError(
            f"inbox metadata is {size:,} bytes once serialised; the cap is {max_bytes:,}"
        )
    if _JSON_NUL.search(text) is not None:
        raise InvalidRequestError("inbox metadata must not hold NUL characters in its strings")
    return text


def check_datetime(now: object) -> datetime:
    """Return *now* if it is a timezone-aware datetime."""
    if not isinstance(now, datetime) or now.utcoffset() is None:
        raise InvalidRequestError(
            f"sweep(now=...) needs a timezone-aware datetime (e.g. datetime.now(UTC)), "
            f"not {now!r}"
        )
    return now


def retention_horizons(now: datetime, retention_days: float) -> tuple[datetime, datetime]:
    """(processed rows received before, unprocessed rows received before) for a sweep."""
    keep = timedelta(days=retention_days)
    return _minus(now, keep), _minus(now, 2 * keep)


def _minus(now: datetime, span: timedelta) -> datetime:
    try:
        return now - span
    except OverflowError:  # before year 1: nothing was received that long ago
        return datetime.min.replace(tzinfo=UTC)
