"""Supervision policy: what a parent does when a child fails.

Pure decisions, no I/O and no clock: the runtime passes the current time in as ``now``.
"""

from ._backoff import Backoff
from ._budget import RestartStats
from ._directive import Decider, Decision, Directive, default_decider
from ._strategy import AllForOneStrategy, OneForOneStrategy, SupervisorStrategy

__all__ = [
    "AllForOneStrategy",
    "Backoff",
    "Decider",
    "Decision",
    "Directive",
    "OneForOneStrategy",
    "RestartStats",
    "SupervisorStrategy",
    "default_decider",
]
