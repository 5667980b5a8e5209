"""The ``/user`` guardian: the cell every top-level actor is a child of."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dovecote.actors._actor import Actor
from dovecote.actors._cell import ActorCell
from dovecote.actors._options import ActorOptions
from dovecote.mailboxes import Mailbox

if TYPE_CHECKING:
    from dovecote.actors._system import ActorSystem

__all__ = ["make_guardian"]


class _Guardian(Actor):
    """The ``/user`` guardian: parent of every top-level actor."""

    def on_receive(self, message: Any) -> None:
        return None


def make_guardian(system: ActorSystem, uid: int) -> ActorCell:
    """The guardian's cell, its instance already in place (it has no first turn)."""
    guardian = ActorCell(system, None, "user", "/user", _Guardian, ActorOptions(), Mailbox(), uid)
    guardian._class_name = "_Guardian"
    guardian._stats = None
    actor = _Guardian.__new__(_Guardian)
    actor._cell = guardian
    guardian._actor = actor
    guardian._behavior = actor.on_receive
    return guardian
