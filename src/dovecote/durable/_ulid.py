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
_CHARS = frozenset(ULID_ALPHABET)
# two base32 digits per 10 bits: the 80-bit random part is 8 lookups
_PAIRS = [a + b for a in ULID_ALPHABET for b in ULID_ALPHABET]
_MAX_TIME = (1 << 48) - 1
_RANDOM_BITS = 80
_lock = threading.Lock()
_last = 0  # the last id as a 128-bit integer
_prefix_stamp = -1  # the last timestamp encoded, and its 10 digits
_prefix = ""


def _encode(value: int) -> str:
    global _prefix_stamp, _prefix
    stamp = value >> _RANDOM_BITS
    if stamp != _prefix_stamp:
        digits = []
        rest = stamp
        for _ in range(10):
            digits.append(ULID_ALPHABET[rest & 31])
            rest >>= 5
        _prefix, _prefix_stamp = "".join(reversed(digits)), stamp
    p = _PAIRS
    return (
        f"{_prefix}{p[(value >> 70) & 1023]}{p[(value >> 60) & 1023]}{p[(value >> 50) & 1023]}"
        f"{p[(value >> 40) & 1023]}{p[(value >> 30) & 1023]}{p[(value >> 20) & 1023]}"
        f"{p[(value >> 10) & 1023]}{p[value & 1023]}"
    )


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
    return upper[0] in "01234567" and _CHARS.issuperset(upper)


def normalize_ulid(text: str) -> str:
    """The canonical (upper-case) spelling of a ULID already checked by :func:`is_ulid`."""
    return text.upper()


def ulid_time_ms(text: str) -> int:
    """The millisecond timestamp inside a ULID."""
    value = 0
    for c in text.upper()[:10]:
        value = value * 32 + _DECODE[c]
    return value
