"""Remote actors over NATS: one address space across processes and machines.

``ActorSystem("shop", host="node-a", remote="nats://127.0.0.1:4222")`` joins the NATS
server; ``system.resolve("nats://shop@node-b/user/orders")`` gives a :class:`RemoteRef`.
See docs/remote.md.
"""

from dovecote.actors._remote_seam import register_remote_scheme
from dovecote.remote._config import NatsRemote
from dovecote.remote._errors import (
    MessageTooLargeError,
    NodeAlreadyJoinedError,
    RemoteError,
    RemoteUnavailableError,
)
from dovecote.remote._membership import Cluster, Member, MemberDown, MemberStatus, MemberUp
from dovecote.remote._node import NatsTransport, RemoteDeadLetterReason
from dovecote.remote._ref import RemoteRef
from dovecote.remote._subjects import decode_token, encode_token

__all__ = [
    "Cluster",
    "Member",
    "MemberDown",
    "MemberStatus",
    "MemberUp",
    "MessageTooLargeError",
    "NatsRemote",
    "NatsTransport",
    "NodeAlreadyJoinedError",
    "RemoteDeadLetterReason",
    "RemoteError",
    "RemoteRef",
    "RemoteUnavailableError",
    "decode_token",
    "encode_token",
]

register_remote_scheme("nats", NatsRemote.from_url)
