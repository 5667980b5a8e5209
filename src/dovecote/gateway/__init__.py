"""The gateway: seed 004's broker on the network (``dovecote serve``), wire-compatible with
Postbox over HTTP, gRPC and MCP stdio, as thin translations over a ``MailboxStore``.

The front ends' libraries (uvicorn, grpcio, mcp, click: the ``gateway`` extra)
are imported only when a front end is used; the core never imports this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dovecote.gateway._config import Address, GatewayConfig
from dovecote.gateway._errors import (
    ConfigError,
    GatewayError,
    MalformedBodyError,
    RequestTooLargeError,
    ShuttingDownError,
    UnauthorizedError,
    UnprocessableBodyError,
    UnsupportedMediaTypeError,
)

if TYPE_CHECKING:
    from dovecote.gateway._cli import main
    from dovecote.gateway._grpc import GrpcServer, create_grpc_server
    from dovecote.gateway._http import create_http_app
    from dovecote.gateway._mcp import create_mcp_server, serve_mcp_stdio
    from dovecote.gateway._metrics import GatewayMetrics
    from dovecote.gateway._serve import serve

__all__ = [
    "Address",
    "ConfigError",
    "GatewayConfig",
    "GatewayError",
    "GatewayMetrics",
    "GrpcServer",
    "MalformedBodyError",
    "RequestTooLargeError",
    "ShuttingDownError",
    "UnauthorizedError",
    "UnprocessableBodyError",
    "UnsupportedMediaTypeError",
    "create_grpc_server",
    "create_http_app",
    "create_mcp_server",
    "main",
    "serve",
    "serve_mcp_stdio",
]

_LAZY = {
    "main": "_cli",
    "GrpcServer": "_grpc",
    "create_grpc_server": "_grpc",
    "create_http_app": "_http",
    "create_mcp_server": "_mcp",
    "serve_mcp_stdio": "_mcp",
    "GatewayMetrics": "_metrics",
    "serve": "_serve",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dovecote.gateway' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"dovecote.gateway.{module}"), name)
    globals()[name] = value
    return value
