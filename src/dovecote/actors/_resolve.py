"""Finding a live actor of a system by its path or its address."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dovecote._errors import ActorNotFoundError

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell
    from dovecote.actors._ref import ActorRef
    from dovecote.actors._system import ActorSystem

__all__ = ["resolve"]


def resolve(system: ActorSystem, address_or_path: str) -> ActorRef:
    """The body of :meth:`ActorSystem.resolve`."""
    if not isinstance(address_or_path, str):
        raise TypeError("resolve() takes a path or an address string")
    path = address_or_path
    if "://" in path or (":" in path and not path.startswith("/")):
        path = _path_of_address(system, path)
        if path == "":  # another node's address
            assert system._remote is not None
            return system._remote.resolve(address_or_path)
    if not path.startswith("/user"):
        raise ActorNotFoundError(f"no actor at {address_or_path!r}")
    cell: ActorCell | None = system._guardian
    for part in path[len("/user") :].split("/"):
        if not part:
            continue
        children = cell._children if cell is not None else None
        cell = children.get(part) if children else None
        if cell is None:
            raise ActorNotFoundError(f"no actor at {address_or_path!r}")
    assert cell is not None
    if cell._terminated:
        raise ActorNotFoundError(f"no actor at {address_or_path!r}")
    return cell._ref


def _path_of_address(system: ActorSystem, text: str) -> str:
    from dovecote.addressing import MailAddress

    address = MailAddress.parse(text)
    remote = system._remote
    if address.user != system._name or address.host != system._host:
        if remote is not None and address.scheme == remote.scheme:
            return ""  # another node of the cluster: the transport resolves it
    elif address.scheme == "mem" or (remote is not None and address.scheme == remote.scheme):
        path: str = address.path
        return path
    raise ActorNotFoundError(f"{text!r} is not an address of system {system._address_prefix}")
