"""NATS subjects of a node, and the safe mapping of names onto subject tokens.

Every node listens on one wildcard, ``dovecote.<system>.<host>.>``:

* ``<node>.user.<name>...``  a message for the actor at ``/user/<name>/...`` (tell, ask, stop);
* ``<node>._r.<token>``      the answer to one of this node's asks (its reply inbox);
* ``<node>._c``              control: watch / unwatch requests, Terminated notices.

NATS splits subjects on ``.`` and treats ``*`` and ``>`` as wildcards, and whitespace
ends a subject; actor and system names may hold dots. Each name is therefore encoded
into one token: every character outside ``[A-Za-z0-9_-]`` (``%`` included) becomes
``%XX`` (its UTF-8 bytes in hex), so no name can split, widen or inject a subject, and
decoding gives the name back exactly.
"""

from __future__ import annotations

import re

__all__ = [
    "ROOT",
    "decode_token",
    "encode_token",
    "node_prefix",
    "path_of_subject",
    "subject_of_path",
]

ROOT = "dovecote"
_SAFE = re.compile(r"[A-Za-z0-9_-]+")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _escape(match: re.Match[str]) -> str:
    return "".join(f"%{b:02X}" for b in match.group().encode())


def encode_token(name: str) -> str:
    """One NATS subject token for ``name`` (reversible, never holds ``. * >`` or spaces)."""
    if not name:
        raise ValueError("an empty name has no subject token")
    if _SAFE.fullmatch(name):
        return name
    return _UNSAFE.sub(_escape, name)


def decode_token(token: str) -> str:
    """The name :func:`encode_token` made ``token`` from."""
    if "%" not in token:
        return token
    raw = bytearray()
    i = 0
    while i < len(token):
        if token[i] == "%":
            raw.append(int(token[i + 1 : i + 3], 16))
            i += 3
        else:
            raw.extend(token[i].encode())
            i += 1
    return raw.decode()


def node_prefix(system: str, host: str) -> str:
    """The subject prefix of the node ``<system>@<host>``."""
    return f"{ROOT}.{encode_token(system)}.{encode_token(host)}"


def subject_of_path(prefix: str, path: str) -> str:
    """The subject of the actor at ``path`` (``/user/...``) on the node at ``prefix``."""
    return prefix + "".join("." + encode_token(part) for part in path.split("/") if part)


def path_of_subject(prefix_len: int, subject: str) -> str:
    """The actor path a subject names (``prefix_len``: length of the node prefix + 1)."""
    return "/" + "/".join(decode_token(t) for t in subject[prefix_len:].split("."))
