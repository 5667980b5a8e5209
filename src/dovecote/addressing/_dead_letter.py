"""Dead-letter chain settings: where a give-up lands and when it parks instead."""

from __future__ import annotations

import math

import attrs

from dovecote._errors import InvalidMailboxAddressError, OptionsError

from ._address import MailAddress, canonical_path_piece

__all__ = ["DeadLetterPolicy"]


def _check_suffix(_: object, __: attrs.Attribute[str], suffix: str) -> None:
    if not isinstance(suffix, str) or not suffix:
        raise OptionsError(f"dead-letter suffix must be a non-empty string, got {suffix!r}")
    if suffix in (".", ".."):
        raise OptionsError(f"dead-letter suffix {suffix!r} would create a dot segment")
    try:
        canonical = canonical_path_piece(suffix)
    except InvalidMailboxAddressError as error:
        raise OptionsError(f"dead-letter suffix {suffix!r} is not valid: {error}") from None
    if canonical != suffix or any(ord(c) < 0x21 or ord(c) == 0x7F for c in suffix):
        raise OptionsError(
            f"dead-letter suffix {suffix!r} is not in canonical form; "
            f"use {canonical!r} (percent-encoded, no '/')"
        )


def _check_nesting(_: object, __: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise OptionsError(f"max_nesting must be an int >= 1 or math.inf, got {value!r}")
    if value != math.inf and (not float(value).is_integer() or value < 1):
        raise OptionsError(f"max_nesting must be an int >= 1 or math.inf, got {value!r}")


@attrs.frozen(slots=True)
class DeadLetterPolicy:
    """``suffix`` is appended to a topic's path; chains stop after ``max_nesting`` hops.

    The depth of a topic is how many times the suffix ends its path (``/inbox`` is 0,
    ``/inbox_dlq`` is 1). A give-up from a topic whose depth already equals
    ``max_nesting`` is parked in that topic instead of opening a deeper one.
    """

    suffix: str = attrs.field(default="_dlq", validator=_check_suffix)
    max_nesting: float = attrs.field(default=1.0, validator=_check_nesting)

    def depth(self, address: MailAddress) -> int:
        """How deep in the dead-letter chain ``address`` is."""
        path, depth = address.path, 0
        while path.endswith(self.suffix):
            path = path[: -len(self.suffix)]
            depth += 1
        return depth

    def target(self, address: MailAddress) -> MailAddress:
        """Where a give-up from ``address`` lands: the next hop, or itself at the cap."""
        if self.depth(address) >= self.max_nesting:
            return address
        return address.with_path((address.path or "/") + self.suffix)
