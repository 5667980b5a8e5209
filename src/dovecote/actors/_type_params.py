"""The type parameters of ``Actor[M, R]`` and ``ActorRef[M, R]``.

``M`` is the message type an actor accepts, ``R`` the type of its answers. Both default
to ``Any``, so a plain ``Actor`` or ``ActorRef`` is ``Actor[Any, Any]`` (PEP 696
defaults, through ``typing_extensions``).
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypeVar

__all__ = ["M", "R"]

M = TypeVar("M", default=Any)
R = TypeVar("R", default=Any)
