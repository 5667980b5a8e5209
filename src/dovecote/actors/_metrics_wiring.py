"""How an actor system feeds its metrics registry: drop counts and scrape-time queue sizes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dovecote.mailboxes import Mailbox, MailboxDropReason

if TYPE_CHECKING:
    from dovecote.actors._cell import ActorCell
    from dovecote.actors._system import ActorSystem

__all__ = ["DropCounter", "MailboxSizes"]


class DropCounter:
    """Observer attached to a drop-reporting mailbox: counts drops per class, path, policy."""

    __slots__ = ("_cell",)

    def __init__(self, cell: ActorCell) -> None:
        self._cell = cell

    def __call__(self, reason: MailboxDropReason) -> None:
        cell = self._cell
        cell._system.metrics.record_drop(cell._class_name, cell.path, str(reason))


class MailboxSizes:
    """The registry's mailbox-size source: ``(actor_class, path or None, size)`` rows.

    Called at scrape time, possibly from the metrics server's thread: it copies the tree
    first and retries if the tree changed under it. An actor whose queue is past the
    growth-warning mark gets its own ``path`` series from then on.
    """

    __slots__ = ("_system",)

    def __init__(self, system: ActorSystem) -> None:
        self._system = system

    def __call__(self) -> list[tuple[str, str | None, int]]:
        system = self._system
        for _ in range(3):
            try:
                rows: list[tuple[str, str | None, int]] = []
                for cell in list(system._walk()):
                    size = len(cell._mailbox)
                    path: str | None = None
                    if size >= Mailbox.warn_threshold:
                        path = cell.path
                        system.metrics.track_path(cell._class_name, path)
                    rows.append((cell._class_name, path, size))
                return rows
            except RuntimeError:
                continue
        return []
