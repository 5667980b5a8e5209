"""How actor refs cross the wire: as addresses, with a seam the actors layer plugs into.

The codec is a leaf: it cannot import ``dovecote.actors``. The hub registers its ref
class with :func:`register_ref_type`; a ref of a registered class encodes as its
``address`` string. Decoding gives :class:`ActorAddress` values, or, when a system is
passed, whatever that system's ``resolve(address)`` returns.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs

__all__ = [
    "ActorAddress",
    "AddressResolver",
    "HasAddress",
    "is_ref",
    "is_ref_type",
    "register_ref_type",
]


@attrs.frozen(slots=True)
class ActorAddress:
    """An actor's address as it arrives without a system: a value holding the URI string.

    ``str(value)`` is the address; pass it to ``system.resolve`` to get a ref.
    """

    address: str

    def __str__(self) -> str:
        return self.address


@runtime_checkable
class HasAddress(Protocol):
    """What a ref class must offer to travel as an address."""

    @property
    def address(self) -> str:
        """The actor's URI (``mem://sys@host/user/a``, ``nats://...``)."""
        ...


class AddressResolver(Protocol):
    """What ``decode(..., system=...)`` needs: an ``ActorSystem`` satisfies it.

    ``resolve`` must not make a round trip; a ``LookupError`` (the actor is gone) leaves
    the value an :class:`ActorAddress`.
    """

    def resolve(self, address_or_path: str, /) -> object:
        """Return a ref for ``address_or_path``."""
        ...


_ref_types: tuple[type, ...] = ()


def register_ref_type(cls: type) -> None:
    """Make instances of ``cls`` (and its subclasses) encode as their ``address``.

    The actors layer registers ``ActorRef``; an outer layer with its own ref class
    (remote refs) registers that. Idempotent.
    """
    global _ref_types
    if not isinstance(cls, type):
        raise TypeError(f"register_ref_type() takes a class, got {cls!r}")
    if cls not in _ref_types:
        _ref_types = (*_ref_types, cls)


def is_ref_type(cls: type) -> bool:
    """True when ``cls`` is a registered ref type or a subclass of one."""
    return isinstance(cls, type) and issubclass(cls, _ref_types)


def is_ref(obj: object) -> bool:
    """True when ``obj`` is an instance of a registered ref type."""
    return bool(_ref_types) and isinstance(obj, _ref_types)
