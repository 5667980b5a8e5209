"""The generated protobuf and gRPC modules of ``proto/postbox.proto``.

They are generated in memory at first import from the ``.proto`` shipped in the package, by
grpcio-tools (``grpc.protos_and_services``): the ``.proto`` is the single source, so there
are no generated files to go stale against it or against the installed protobuf runtime.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import Any

__all__ = ["PROTO_FILE", "SERVICE_NAME", "load"]

#: where the .proto sits relative to a ``sys.path`` entry (how grpcio-tools finds it)
PROTO_FILE = "dovecote/gateway/proto/postbox.proto"
SERVICE_NAME = "postbox.v1.PostboxService"


@cache
def load() -> tuple[Any, Any]:
    """``(messages, services)``: the ``postbox_pb2`` and ``postbox_pb2_grpc`` modules."""
    import grpc

    protos: ModuleType
    services: ModuleType
    protos, services = grpc.protos_and_services(PROTO_FILE)
    return protos, services
