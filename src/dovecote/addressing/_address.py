"""``MailAddress``: an RFC 3986 URI that names one post-office address.

Accepted spellings are ``scheme:user@host/path`` and ``scheme://user@host/path``. The
normal form, which is also what ``str()`` returns and what every queue is keyed on, is
``scheme://user@host/path`` with the scheme and host lower-cased and percent-encoding made
canonical (upper-case hex digits, unreserved characters decoded, characters that may not
appear literally encoded as UTF-8). Anything that would make two spellings silently share a
queue -- a query, a fragment, ``.``/``..`` segments -- is rejected instead of dropped.
"""

from __future__ import annotations

import re
import string

import attrs

from dovecote._errors import InvalidMailboxAddressError

__all__ = ["MAX_ADDRESS_LENGTH", "MailAddress", "canonical_path_piece"]

MAX_ADDRESS_LENGTH = 2048
"""Longest accepted address, in characters, for both the input and the normal form."""

_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
_SUB_DELIMS = frozenset("!$&'()*+,;=")
_HEX = frozenset(string.hexdigits)
_USER_LITERAL = _UNRESERVED | _SUB_DELIMS | {":"}
_PATH_LITERAL = _UNRESERVED | _SUB_DELIMS | {":", "@"}
_HOST_LITERAL = _UNRESERVED | _SUB_DELIMS
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")
_IP_LITERAL_RE = re.compile(r"\[(?:[0-9A-Fa-f:.]+|v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+)\]")


def _is_control(char: str) -> bool:
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F


def _fail(message: str) -> InvalidMailboxAddressError:
    return InvalidMailboxAddressError(message)


def _canonical(raw: str, literal: frozenset[str], part: str, *, encode_ascii: bool) -> str:
    """Canonical percent-encoding of one component.

    ``%xx`` escapes get upper-case hex, escapes of unreserved characters are decoded, and
    characters outside ``literal`` are UTF-8 percent-encoded -- except ASCII ones when
    ``encode_ascii`` is false, which are rejected.
    """
    out: list[str] = []
    index = 0
    length = len(raw)
    while index < length:
        char = raw[index]
        if char == "%":
            pair = raw[index + 1 : index + 3]
            if len(pair) < 2 or not all(c in _HEX for c in pair):
                raise _fail(f"{part} {raw!r} has a malformed percent-escape at offset {index}")
            decoded = chr(int(pair, 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + pair.upper())
            index += 3
            continue
        if char in literal:
            out.append(char)
        elif char.isascii() and not encode_ascii:
            raise _fail(f"{part} {raw!r} contains {char!r}, which is not allowed there")
        else:
            try:
                encoded = char.encode("utf-8")
            except UnicodeEncodeError:
                raise _fail(f"{part} {raw!r} contains an unencodable character") from None
            out.append("".join(f"%{byte:02X}" for byte in encoded))
        index += 1
    return "".join(out)


def _ascii_lower_outside_escapes(text: str) -> str:
    pieces = text.split("%")
    rest = [piece[:2] + _lower_ascii(piece[2:]) for piece in pieces[1:]]
    return "%".join([_lower_ascii(pieces[0]), *rest])


def _lower_ascii(text: str) -> str:
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in text)


def _canonical_host(raw: str) -> str:
    if raw.startswith("["):
        end = raw.find("]")
        if end < 0:
            raise _fail(f"host {raw!r} opens an IP literal '[' that is never closed")
        literal, port = raw[: end + 1], raw[end + 1 :]
        if not _IP_LITERAL_RE.fullmatch(literal):
            raise _fail(f"host {raw!r} is not a valid IP literal")
        host = _lower_ascii(literal)
    else:
        host_part, colon, port = raw.partition(":")
        port = colon + port
        if not host_part:
            raise _fail(f"host is empty in {raw!r}")
        host = _ascii_lower_outside_escapes(
            _canonical(host_part, _HOST_LITERAL, "host", encode_ascii=False)
        )
    if port:
        digits = port[1:]
        if not port.startswith(":") or (digits and not (digits.isascii() and digits.isdigit())):
            raise _fail(f"host {raw!r} has an invalid port {port!r}")
        if digits:
            host = f"{host}:{digits}"
    return host


def _canonical_path(raw: str) -> str:
    if not raw:
        return ""
    path = _canonical(raw, _PATH_LITERAL | {"/"}, "path", encode_ascii=True)
    for segment in path.split("/")[1:]:
        if segment in (".", ".."):
            raise _fail(f"path {raw!r} contains a {segment!r} segment (dot segments not allowed)")
    return path


def canonical_path_piece(piece: str) -> str:
    """The canonical spelling of text that is appended to a path (one segment's worth)."""
    return _canonical(piece, _PATH_LITERAL, "path", encode_ascii=True)


def _parse(text: object) -> tuple[str, str, str, str]:
    if not isinstance(text, str):
        raise _fail(f"an address must be a string, not {type(text).__name__}")
    if len(text) > MAX_ADDRESS_LENGTH:
        raise _fail(f"address is too long ({len(text)} characters, at most {MAX_ADDRESS_LENGTH})")
    for offset, char in enumerate(text):
        if _is_control(char):
            raise _fail(f"address contains control character U+{ord(char):04X} at offset {offset}")
    scheme, colon, rest = text.partition(":")
    if not colon:
        raise _fail(f"address {text!r} has no scheme (expected scheme://user@host/path)")
    if not scheme:
        raise _fail(f"scheme is empty in {text!r}")
    if not _SCHEME_RE.fullmatch(scheme):
        raise _fail(f"scheme {scheme!r} must be a letter followed by letters, digits, '+-.'")
    rest = rest.removeprefix("//")
    query, fragment = rest.find("?"), rest.find("#")
    if fragment >= 0 and (query < 0 or fragment < query):
        raise _fail(f"fragment {rest[fragment:]!r} is not allowed in an address; use the path")
    if query >= 0:
        raise _fail(f"query {rest[query:]!r} is not allowed in an address; use the path")
    slash = rest.find("/")
    authority, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    user, at, host = authority.partition("@")
    if not at:
        raise _fail(f"address {text!r} has no user part (expected scheme://user@host/path)")
    if not user:
        raise _fail(f"user is empty in {text!r}")
    if not host:
        raise _fail(f"host is empty in {text!r}")
    if "@" in host:
        raise _fail(f"host {host!r} contains '@'")
    return (
        scheme.lower(),
        _canonical(user, _USER_LITERAL, "user", encode_ascii=True),
        _canonical_host(host),
        _canonical_path(path),
    )


@attrs.frozen(slots=True, repr=False)
class MailAddress:
    """A parsed, normalised post-office address. Build one with :meth:`parse`."""

    scheme: str
    user: str
    host: str
    path: str = ""

    @classmethod
    def parse(cls, text: str) -> MailAddress:
        """Parse ``text``; raise :class:`InvalidMailboxAddressError` naming the bad part."""
        scheme, user, host, path = _parse(text)
        address = cls(scheme, user, host, path)
        if len(str(address)) > MAX_ADDRESS_LENGTH:
            raise _fail(f"address is too long once normalised (at most {MAX_ADDRESS_LENGTH})")
        return address

    @classmethod
    def coerce(cls, value: str | MailAddress) -> MailAddress:
        """Return ``value`` if it already is an address, else parse it."""
        if isinstance(value, MailAddress):
            return value
        return cls.parse(value)

    @property
    def physical(self) -> str:
        """``user@host``: the protocol-independent identity of this address."""
        return f"{self.user}@{self.host}"

    def with_path(self, path: str) -> MailAddress:
        """The same physical address with another path (validated like :meth:`parse`)."""
        return MailAddress.parse(f"{self.scheme}://{self.physical}{path}")

    def __str__(self) -> str:
        return f"{self.scheme}://{self.user}@{self.host}{self.path}"

    def __repr__(self) -> str:
        return f"MailAddress({str(self)!r})"
