"""Input checks shared by every backend: each raises :class:`InvalidRequestError` before
anything changes, naming the field and what is wrong with it.

Limits (API.md "Durable store"): agent ids are 1-256 bytes of UTF-8 with no Unicode
whitespace and no control characters; at most 100 headers, keys 1-256 bytes, values at
most 8 KiB; message ids are ULIDs; checkpoint tokens are non-empty.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any, NoReturn

from dovecote.durable._errors import InvalidRequestError
from dovecote.durable._model import (
    DEAD_LETTER_REASONS,
    ORDERING_MODES,
    RELEASE_KINDS,
    DeadLetterReason,
    MailboxConfig,
    OrderingMode,
    ReleaseKind,
)
from dovecote.durable._ulid import is_ulid, normalize_ulid

__all__ = [
    "MAX_AGENT_ID_BYTES",
    "MAX_HEADERS",
    "MAX_HEADER_KEY_BYTES",
    "MAX_HEADER_VALUE_BYTES",
    "MAX_MS",
    "MAX_NOTE_BYTES",
    "MAX_TOKEN_BYTES",
    "check_agent_id",
    "check_checkpoint_token",
    "check_count",
    "check_headers",
    "check_int",
    "check_lease_token",
    "check_mailbox_config",
    "check_message_id",
    "check_ms",
    "check_note",
    "check_optional_count",
    "check_optional_ms",
    "check_ordering_mode",
    "check_payload",
    "check_priority",
    "check_reason",
    "check_release_kind",
]

MAX_AGENT_ID_BYTES = 256
MAX_HEADERS = 100
MAX_HEADER_KEY_BYTES = 256
MAX_HEADER_VALUE_BYTES = 8 * 1024
MAX_TOKEN_BYTES = 8 * 1024
MAX_NOTE_BYTES = 64 * 1024
#: the largest duration or time in milliseconds a store accepts (fits SQLite and int8)
MAX_MS = 2**53
_I32 = 2**31


def _bad(message: str) -> NoReturn:
    raise InvalidRequestError(message)


def _utf8_len(text: str, what: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        _bad(f"{what} is not valid Unicode text (lone surrogate)")


def check_agent_id(value: object, what: str = "agent id") -> str:
    """An agent (mailbox, sender, claimer) id: 1-256 bytes, no whitespace or controls."""
    if not isinstance(value, str):
        _bad(f"{what} must be a string, not {type(value).__name__}")
    if not value:
        _bad(f"invalid {what}: empty")
    if value.isascii():
        # printable ASCII has no controls; the space is its only whitespace
        if len(value) > MAX_AGENT_ID_BYTES:
            _bad(f"invalid {what}: {len(value)} bytes (max {MAX_AGENT_ID_BYTES})")
        if value.isprintable() and " " not in value:
            return value
    size = _utf8_len(value, what)
    if size > MAX_AGENT_ID_BYTES:
        _bad(f"invalid {what}: {size} bytes (max {MAX_AGENT_ID_BYTES})")
    for ch in value:
        if ch.isspace():
            _bad(f"invalid {what}: contains whitespace {ch!r}")
        if unicodedata.category(ch) == "Cc":
            _bad(f"invalid {what}: contains control character {ch!r}")
    return value


def check_message_id(value: object) -> str:
    """A ULID message id, returned in canonical upper case."""
    if not isinstance(value, str):
        _bad(f"message id must be a string, not {type(value).__name__}")
    if not is_ulid(value):
        _bad(f"bad ulid: {value[:64]!r} is not a 26-character ULID")
    return normalize_ulid(value)


def check_payload(value: object) -> bytes:
    """A payload as ``bytes`` (``bytearray`` and ``memoryview`` are copied)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    _bad(f"payload must be bytes, not {type(value).__name__}")


def check_headers(value: object) -> dict[str, str]:
    """Headers: a mapping of at most 100 str -> str entries within the size limits."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        _bad(f"invalid headers: a mapping of str to str is required, not {type(value).__name__}")
    if len(value) > MAX_HEADERS:
        _bad(f"invalid headers: {len(value)} headers (max {MAX_HEADERS})")
    headers: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            _bad(f"invalid headers: {key!r} -> {item!r} is not str -> str")
        if not key:
            _bad("invalid headers: a header key is empty")
        if _utf8_len(key, "header key") > MAX_HEADER_KEY_BYTES:
            _bad(f"invalid headers: key {key[:40]!r}... longer than {MAX_HEADER_KEY_BYTES} bytes")
        if _utf8_len(item, "header value") > MAX_HEADER_VALUE_BYTES:
            _bad(f"invalid headers: value of {key!r} longer than {MAX_HEADER_VALUE_BYTES} bytes")
        headers[key] = item
    return headers


def check_int(value: object, what: str, *, low: int, high: int) -> int:
    """An ``int`` (never a ``bool``) within ``[low, high]``."""
    if not isinstance(value, int) or isinstance(value, bool):
        _bad(f"{what} must be an integer, not {type(value).__name__}")
    if not low <= value <= high:
        _bad(f"{what} must be between {low} and {high}, not {value}")
    return value


def check_ms(value: object, what: str) -> int:
    """A non-negative duration in milliseconds."""
    return check_int(value, what, low=0, high=MAX_MS)


def check_optional_ms(value: object, what: str) -> int | None:
    """``None`` or a non-negative duration in milliseconds."""
    return None if value is None else check_ms(value, what)


def check_count(value: object, what: str) -> int:
    """A non-negative count (a limit, a capacity)."""
    return check_int(value, what, low=0, high=MAX_MS)


def check_priority(value: object) -> int:
    """A 32-bit signed priority (higher is served first in ``priority`` mode)."""
    return check_int(value, "priority", low=-_I32, high=_I32 - 1)


def _check_text(value: object, what: str, limit: int, *, allow_blank: bool) -> str:
    if not isinstance(value, str):
        _bad(f"{what} must be a string, not {type(value).__name__}")
    if not allow_blank and not value.strip():
        _bad(f"{what} must not be empty")
    if _utf8_len(value, what) > limit:
        _bad(f"{what} is longer than {limit} bytes")
    return value


def check_checkpoint_token(value: object) -> str:
    """A non-empty checkpoint token (commit requires one; blank text counts as empty)."""
    if isinstance(value, str) and not value.strip():
        _bad("empty checkpoint token: commit requires a non-empty checkpoint_token")
    return _check_text(value, "checkpoint_token", MAX_TOKEN_BYTES, allow_blank=False)


def check_lease_token(value: object) -> str | None:
    """``None`` (fence by claimer id only) or the ``lease_token`` of a claim."""
    if value is None:
        return None
    return _check_text(value, "lease_token", MAX_TOKEN_BYTES, allow_blank=False)


def check_note(value: object, *, required: bool = False) -> str | None:
    """A free-text note (a release or rejection reason)."""
    if value is None and not required:
        return None
    return _check_text(value, "note", MAX_NOTE_BYTES, allow_blank=True)


def _check_choice(value: object, what: str, choices: tuple[str, ...]) -> Any:
    if not isinstance(value, str) or value not in choices:
        _bad(f"unknown {what}: {value!r} (choose from {', '.join(choices)})")
    return value


def check_ordering_mode(value: object) -> OrderingMode:
    """One of ``fifo``, ``unordered``, ``priority``."""
    mode: OrderingMode = _check_choice(value, "ordering_mode", ORDERING_MODES)
    return mode


def check_release_kind(value: object) -> ReleaseKind:
    """``transient`` or ``permanent``."""
    kind: ReleaseKind = _check_choice(value, "kind", RELEASE_KINDS)
    return kind


def check_reason(value: object) -> DeadLetterReason | None:
    """``None`` (every reason) or one of the four dead-letter reasons."""
    if value is None:
        return None
    reason: DeadLetterReason = _check_choice(value, "reason", DEAD_LETTER_REASONS)
    return reason


def check_mailbox_config(
    agent_id: object,
    *,
    capacity: object,
    ordering_mode: object,
    max_attempts: object,
    lease_duration_ms: object,
    max_payload_bytes: object,
    dlq_retention_ms: object,
) -> MailboxConfig:
    """The arguments of ``ensure_mailbox`` checked and folded into a :class:`MailboxConfig`."""
    return MailboxConfig(
        agent_id=check_agent_id(agent_id, "mailbox id"),
        capacity=check_count(capacity, "capacity"),
        ordering_mode=check_ordering_mode(ordering_mode),
        max_attempts=check_count(max_attempts, "max_attempts"),
        lease_duration_ms=check_ms(lease_duration_ms, "lease_duration_ms"),
        max_payload_bytes=check_count(max_payload_bytes, "max_payload_bytes"),
        dlq_retention_ms=check_optional_ms(dlq_retention_ms, "dlq_retention_ms"),
    )


def check_optional_count(value: object, what: str) -> int | None:
    """``None`` (no limit) or a non-negative count."""
    return None if value is None else check_count(value, what)
