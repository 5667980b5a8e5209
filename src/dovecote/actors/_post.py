"""Wiring between an ActorSystem and its post office."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dovecote.actors._system import ActorSystem
    from dovecote.addressing import PostOffice

__all__ = ["make_post_office"]


def make_post_office(system: ActorSystem) -> PostOffice:
    """A post office with a MemoryProvider registered for ``mem``."""
    from dovecote.addressing import MemoryProvider, PostOffice

    office = PostOffice()
    office.register_provider(MemoryProvider.create_isolated())
    return office
