"""ULID message ids: 26 Crockford base32 characters, strictly increasing per process.

A ULID is 48 bits of epoch milliseconds followed by 80 random bits. Within one
millisecond (or when the clock reads earlier than the last id, as a hand-driven test
clock may) the generator adds one to the previous id instead of drawing fresh bits, so
ids sort in the order they were made. Ties in a store's ordering are broken by id.
"""

from __future__ import annotations

import os
import threading

__all__ = ["ULID_ALPHABET", "is_ulid", "new_ulid", "normalize_ulid", "ulid_time_ms"]

ULID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_DECODE = {c: i for i, c in enumerate(ULID_ALPHABET)}
_MAX_TIME = (1 << 48) - 1
_RANDOM_BITS = 80
_lock = threading.Lock()
_last = 0  # the last id as a 128-bit integer


def _encode(value: int) -> str:
    chars = []
    for _ in range(26):
        chars.append(ULID_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_ulid(time_ms: int) -> str:
    """A new ULID stamped ``time_ms`` (or just after the last one this process made)."""
    global _last
    stamp = min(max(time_ms, 0), _MAX_TIME) << _RANDOM_BITS
    with _lock:
        if stamp > _last:
            value = stamp | int.from_bytes(os.urandom(10), "big")
            # keep headroom so the next ids of this millisecond cannot overflow the stamp
            value &= ~(1 << (_RANDOM_BITS - 1))
        else:
            value = _last + 1
        _last = value
    return _encode(value)


def is_ulid(text: object) -> bool:
    """Whether ``text`` is a canonical ULID (either letter case)."""
    if not isinstance(text, str) or len(text) != 26 or not text.isascii():
        return False
    upper = text.upper()
    return upper[0] in "01234567" and all(c in _DECODE for c in upper)


def normalize_ulid(text: str) -> str:
    """The canonical (upper-case) spelling of a ULID already checked by :func:`is_ulid`."""
    return text.upper()


def ulid_time_ms(text: str) -> int:
    """The millisecond timestamp inside a ULID."""
    value = 0
    for c in text.upper()[:10]:
        value = value * 32 + _DECODE[c]
    return value
