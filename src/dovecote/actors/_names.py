"""Actor names and paths."""

from __future__ import annotations

import itertools
import re

from dovecote._errors import InvalidActorNameError

__all__ = ["NAME_PATTERN", "auto_name", "validate_name"]

#: A legal actor name (also a legal URI path segment, so addresses need no escaping).
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.~-]{0,254}")
_match = NAME_PATTERN.fullmatch
_counter = itertools.count()


def validate_name(name: object) -> str:
    """Return ``name`` if it is a legal actor name, else raise InvalidActorNameError."""
    if not isinstance(name, str):
        raise InvalidActorNameError(f"actor name must be a str, not {type(name).__name__}")
    if _match(name) is None:
        raise InvalidActorNameError(
            f"invalid actor name {name!r}: use 1-255 characters from [A-Za-z0-9_.~-], "
            "starting with a letter or digit"
        )
    return name


def auto_name() -> str:
    """A fresh unique name for an unnamed actor: ``$`` plus a hexadecimal counter."""
    return f"${next(_counter):x}"
