"""``dovecote serve``'s configuration: one frozen value, parsed from flags or ``DOVECOTE_*``.

The parsers raise ``ConfigError`` with a message that names the bad value; the command line
turns it into a usage error (exit 2).
"""

from __future__ import annotations

import re

import attrs

from dovecote.gateway._errors import ConfigError

__all__ = [
    "DEFAULT_GRPC",
    "DEFAULT_HTTP",
    "Address",
    "GatewayConfig",
    "parse_address",
    "parse_duration",
    "parse_size",
]


@attrs.frozen(slots=True)
class Address:
    """A TCP listen address; port 0 asks the OS for a free port."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


DEFAULT_HTTP = Address("127.0.0.1", 8080)
DEFAULT_GRPC = Address("127.0.0.1", 50051)


@attrs.frozen(slots=True)
class GatewayConfig:
    """What ``dovecote serve`` runs: the store URL and which front ends listen where.

    ``http`` / ``grpc`` are ``None`` when off. ``sweep_interval`` is in seconds (``None`` =
    no background sweeper). ``token``, when set, is required as a bearer token on HTTP
    (all but ``/healthz``) and as ``authorization`` metadata on gRPC.
    """

    db: str = "sqlite::memory:"
    http: Address | None = DEFAULT_HTTP
    grpc: Address | None = DEFAULT_GRPC
    mcp: bool = False
    sweep_interval: float | None = 5.0
    token: str | None = None
    max_body_bytes: int = 2 * 1024 * 1024
    drain_seconds: float = 10.0
    verbosity: int = 0

    def __attrs_post_init__(self) -> None:
        if self.http is None and self.grpc is None and not self.mcp:
            raise ConfigError(
                "every front end is off: enable at least one of --http, --grpc or --mcp stdio"
            )
        if self.token is not None and not self.token:
            raise ConfigError("--token must not be empty")
        if self.max_body_bytes < 1:
            raise ConfigError(f"--max-body-bytes must be positive, got {self.max_body_bytes}")


_ADDRESS = re.compile(r"^(?:\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]]*)):(?P<port>\d{1,5})$")


def parse_address(text: str, *, flag: str) -> Address | None:
    """``HOST:PORT``, ``[IPv6]:PORT`` or ``off`` (``None``)."""
    value = text.strip()
    if value.lower() == "off":
        return None
    m = _ADDRESS.match(value)
    if m is None:
        raise ConfigError(f"{flag}: expected HOST:PORT or off, got {text!r}")
    port = int(m["port"])
    if port > 65535:
        raise ConfigError(f"{flag}: port {port} is out of range (0-65535)")
    host = m["v6"] or m["host"] or "127.0.0.1"
    return Address(host, port)


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|min|s|m|h)")


def parse_duration(text: str, *, flag: str) -> float | None:
    """``5s``, ``100ms``, ``1m30s``, ``2h`` (humantime style) or ``off`` (``None``), in seconds."""
    value = text.strip().lower()
    if value == "off":
        return None
    pos, total = 0, 0.0
    for m in _DURATION.finditer(value):
        if m.start() != pos:
            break
        total += float(m[1]) * _UNITS[m[2]]
        pos = m.end()
    if pos != len(value) or not value:
        raise ConfigError(f"{flag}: expected a duration such as 5s, 100ms or off, got {text!r}")
    if total <= 0:
        raise ConfigError(f"{flag}: the interval must be positive (or off), got {text!r}")
    return total


_SIZE = re.compile(r"^(\d+)\s*(b|kib|kb|mib|mb|gib|gb)?$")
_SIZE_UNITS = {
    None: 1,
    "b": 1,
    "kb": 1000,
    "kib": 1024,
    "mb": 10**6,
    "mib": 2**20,
    "gb": 10**9,
    "gib": 2**30,
}


def parse_size(text: str, *, flag: str) -> int:
    """A byte count: ``2097152``, ``512KiB``, ``2MiB``, ``1MB``."""
    m = _SIZE.match(text.strip().lower())
    if m is None or int(m[1]) == 0:
        raise ConfigError(f"{flag}: expected a positive size such as 2MiB, got {text!r}")
    return int(m[1]) * _SIZE_UNITS[m[2]]
