"""The system event stream: DeadLetter and lifecycle events, to callbacks or actors."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dovecote.observability import get_logger

if TYPE_CHECKING:
    from dovecote.actors._ref import ActorRef

__all__ = ["EventStream", "Subscription"]

_log = get_logger("dovecote.event_stream")


class Subscription:
    """A live subscription; :meth:`unsubscribe` ends it (idempotent)."""

    __slots__ = ("_stream", "event_type", "subscriber")

    def __init__(
        self, stream: EventStream, subscriber: Callable[[Any], object] | ActorRef, event_type: type
    ) -> None:
        self._stream: EventStream | None = stream
        self.subscriber = subscriber
        self.event_type = event_type

    @property
    def active(self) -> bool:
        """True until unsubscribed."""
        return self._stream is not None

    def unsubscribe(self) -> None:
        """Stop receiving events."""
        if self._stream is not None:
            self._stream._remove(self)
            self._stream = None


class EventStream:
    """Publish/subscribe by event type (``isinstance``), inside one actor system.

    A subscriber is a callable (called synchronously; its errors are logged, never
    raised to the publisher) or an ActorRef (the event is told to it).
    """

    __slots__ = ("_subs",)

    def __init__(self) -> None:
        self._subs: list[Subscription] = []

    def subscribe(
        self, subscriber: Callable[[Any], object] | ActorRef, event_type: type = object
    ) -> Subscription:
        """Deliver every published event that is an instance of ``event_type``."""
        if not isinstance(event_type, type):
            raise TypeError("event_type must be a class")
        if not callable(subscriber) and not hasattr(subscriber, "tell"):
            raise TypeError("subscriber must be a callable or an ActorRef")
        sub = Subscription(self, subscriber, event_type)
        self._subs = [*self._subs, sub]
        return sub

    def unsubscribe(self, subscription: Subscription) -> None:
        """Same as ``subscription.unsubscribe()``."""
        subscription.unsubscribe()

    def _remove(self, sub: Subscription) -> None:
        self._subs = [s for s in self._subs if s is not sub]

    def has_subscribers(self, event_type: type) -> bool:
        """True if publishing an event of ``event_type`` would reach anybody."""
        return any(issubclass(event_type, s.event_type) for s in self._subs)

    def publish(self, event: object) -> None:
        """Hand ``event`` to every matching subscriber."""
        for sub in self._subs:  # copy-on-write list: safe against (un)subscribe in callbacks
            if isinstance(event, sub.event_type):
                target = sub.subscriber
                tell = getattr(target, "tell", None)
                try:
                    if tell is not None:
                        tell(event)
                    else:
                        target(event)  # type: ignore[operator]
                except Exception:
                    _log.exception("event subscriber failed", event_type=type(event).__name__)
