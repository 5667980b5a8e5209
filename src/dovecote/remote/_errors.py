"""The errors of remote actors (all :class:`~dovecote.DovecoteError` subclasses)."""

from __future__ import annotations

from dovecote._errors import DovecoteError

__all__ = [
    "MessageTooLargeError",
    "NodeAlreadyJoinedError",
    "RemoteError",
    "RemoteUnavailableError",
]


class RemoteError(DovecoteError):
    """A remote actor's handler raised while answering an ask.

    The exception object never crosses the wire: ``type_name`` (``module.QualName``),
    ``message`` (its ``str()``) and ``remote_traceback`` (formatted text) describe it.
    """

    def __init__(self, type_name: str, message: str, remote_traceback: str = "") -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name
        self.message = message
        self.remote_traceback = remote_traceback


class RemoteUnavailableError(DovecoteError, ConnectionError):
    """The node is not connected to NATS (not started, reconnecting, or closed)."""


class MessageTooLargeError(DovecoteError, ValueError):
    """An encoded message is larger than the NATS server's ``max_payload``; nothing was sent."""


class NodeAlreadyJoinedError(DovecoteError):
    """Another live node of the same system already uses this host name."""
