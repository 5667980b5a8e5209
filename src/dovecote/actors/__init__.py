"""Actors: Actor, ActorRef, ActorContext, ActorSystem, ActorOptions, messages, events.

This package composes the leaves: a cell owns a mailbox (``mailboxes``), runs its
turns on the loop (``dispatch``), applies its parent's decisions (``supervision``),
counts into the system's registry (``observability``) and is reachable by address
(``addressing``).
"""

from dovecote._clock import Clock, ManualClock, SystemClock
from dovecote.actors._actor import Actor
from dovecote.actors._context import ActorContext
from dovecote.actors._event_stream import EventStream, Subscription
from dovecote.actors._messages import (
    ActorRestarted,
    ActorStarted,
    ActorStopped,
    DeadLetter,
    DeadLetterReason,
    PoisonPill,
    Terminated,
    UnhandledMessage,
)
from dovecote.actors._names import NAME_PATTERN
from dovecote.actors._options import ActorOptions, DispatcherName
from dovecote.actors._ref import ActorRef
from dovecote.actors._system import ActorSystem
from dovecote.actors._timers import Cancellable
from dovecote.codec import register_ref_type as _register_ref_type

_register_ref_type(ActorRef)  # refs inside messages travel as addresses (dovecote.codec)

__all__ = [
    "NAME_PATTERN",
    "Actor",
    "ActorContext",
    "ActorOptions",
    "ActorRef",
    "ActorRestarted",
    "ActorStarted",
    "ActorStopped",
    "ActorSystem",
    "Cancellable",
    "Clock",
    "DeadLetter",
    "DeadLetterReason",
    "DispatcherName",
    "EventStream",
    "ManualClock",
    "PoisonPill",
    "Subscription",
    "SystemClock",
    "Terminated",
    "UnhandledMessage",
]
