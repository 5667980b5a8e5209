"""Errors the gateway raises at its edge, before a request reaches the store.

They carry ``code`` and ``http_status`` like the store's errors, so one handler turns both
into the ``{"error": code, "message": text}`` body (and gRPC / MCP map them the same way).
"""

from __future__ import annotations

from typing import ClassVar

from dovecote._errors import DovecoteError

__all__ = [
    "ConfigError",
    "GatewayError",
    "MalformedBodyError",
    "RequestTooLargeError",
    "ShuttingDownError",
    "UnauthorizedError",
    "UnprocessableBodyError",
    "UnsupportedMediaTypeError",
]


class ConfigError(DovecoteError, ValueError):
    """A ``dovecote serve`` flag or environment variable is malformed."""


class GatewayError(DovecoteError):
    """Base of the request errors found at the gateway's edge."""

    code: ClassVar[str] = "bad_request"
    http_status: ClassVar[int] = 400


class MalformedBodyError(GatewayError):
    """The request body is not JSON, or a query string does not parse."""


class UnprocessableBodyError(GatewayError):
    """The body is JSON but does not fit the request (a missing field, a wrong type)."""

    code = "unprocessable_entity"
    http_status = 422


class UnsupportedMediaTypeError(GatewayError):
    """The request has a body route but no ``Content-Type: application/json``."""

    code = "unsupported_media_type"
    http_status = 415


class RequestTooLargeError(GatewayError):
    """The request body is larger than the gateway's cap (``--max-body-bytes``)."""

    code = "request_too_large"
    http_status = 413


class UnauthorizedError(GatewayError):
    """``--token`` is set and the request does not carry it."""

    code = "unauthorized"
    http_status = 401


class ShuttingDownError(GatewayError):
    """The gateway is draining: a long-lived call (``StreamClaim``) is ended; reconnect."""

    code = "unavailable"
    http_status = 503
