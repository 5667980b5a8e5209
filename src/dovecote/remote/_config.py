"""NatsRemote: how a system joins NATS (servers, credentials, TLS, failure detection)."""

from __future__ import annotations

import math
import ssl
from typing import TYPE_CHECKING, Any

import attrs

from dovecote._errors import OptionsError

if TYPE_CHECKING:
    from dovecote.actors import ActorSystem
    from dovecote.remote._node import NatsTransport

__all__ = ["NatsRemote"]


def _servers(value: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    servers = (value,) if isinstance(value, str) else tuple(value)
    if not servers or not all(isinstance(s, str) and s for s in servers):
        raise OptionsError(f"servers must be a NATS URL or a list of them, not {value!r}")
    return servers


def _positive(_: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise OptionsError(f"{attribute.name} must be a positive number of seconds, not {value!r}")


@attrs.frozen(slots=True, kw_only=True)
class NatsRemote:
    """Connection and cluster settings for ``ActorSystem(..., remote=NatsRemote(...))``.

    ``remote="nats://host:4222"`` is ``NatsRemote(servers="nats://host:4222")``.
    ``token``, ``user`` / ``password``, ``user_credentials`` (a ``.creds`` file),
    ``nkeys_seed`` and ``tls`` (an ``ssl.SSLContext``) are passed to ``nats.connect``,
    as is anything in ``connect_options``. A node publishes a heartbeat every
    ``heartbeat_interval`` seconds and is declared down by the others after
    ``down_after`` seconds without one (its watchers then get ``Terminated``).
    ``pending_size`` bounds nats-py's outbound buffer (a burst of tells made without
    yielding to the event loop waits there). Membership lives in the JetStream
    key-value bucket ``bucket`` (default ``dovecote_members``, shared by all systems).
    """

    servers: tuple[str, ...] = attrs.field(default=("nats://127.0.0.1:4222",), converter=_servers)
    token: str | None = None
    user: str | None = None
    password: str | None = None
    user_credentials: str | None = None
    nkeys_seed: str | None = None
    tls: ssl.SSLContext | None = None
    tls_hostname: str | None = None
    heartbeat_interval: float = attrs.field(default=1.0, validator=_positive)
    down_after: float = attrs.field(default=5.0, validator=_positive)
    bucket: str | None = None
    connect_timeout: float = attrs.field(default=2.0, validator=_positive)
    reconnect_time_wait: float = attrs.field(default=0.5, validator=_positive)
    max_reconnect_attempts: int = -1
    pending_size: int = 64 * 1024 * 1024
    connect_options: dict[str, Any] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if self.down_after <= self.heartbeat_interval:
            raise OptionsError("down_after must be longer than heartbeat_interval")

    @classmethod
    def from_url(cls, url: str) -> NatsRemote:
        """The settings for ``remote="nats://..."`` (a comma separates several servers)."""
        return cls(servers=tuple(u.strip() for u in url.split(",") if u.strip()))

    def connect_kwargs(self) -> dict[str, Any]:
        """The keyword arguments for ``nats.connect``."""
        kwargs: dict[str, Any] = {
            "servers": list(self.servers),
            "connect_timeout": self.connect_timeout,
            "reconnect_time_wait": self.reconnect_time_wait,
            "max_reconnect_attempts": self.max_reconnect_attempts,
            "pending_size": self.pending_size,
        }
        for key in ("token", "user", "password", "user_credentials", "nkeys_seed", "tls"):
            value = getattr(self, key)
            if value is not None:
                kwargs[key] = value
        if self.tls_hostname is not None:
            kwargs["tls_hostname"] = self.tls_hostname
        kwargs.update(self.connect_options)
        return kwargs

    def open_transport(self, system: ActorSystem) -> NatsTransport:
        """The transport of ``system`` (connected by ``system.start()``)."""
        from dovecote.remote._node import NatsTransport

        return NatsTransport(system, self)
