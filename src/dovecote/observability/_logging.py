"""structlog helpers: a named logger factory and an optional one-call setup.

dovecote logs through stdlib ``logging`` under the ``dovecote`` logger hierarchy
(see :func:`get_logger`): by default warnings and errors reach stderr, info stays
quiet, nothing goes to stdout. :func:`configure_logging` opts into structlog's
console or JSON rendering.
"""

from __future__ import annotations

import logging
import sys

import structlog
from structlog.typing import Processor

from dovecote._errors import OptionsError
from dovecote._logs import get_logger

__all__ = ["configure_logging", "get_logger"]


def configure_logging(level: str | int = "INFO", json: bool = False) -> None:
    """Render dovecote's (and the application's) structlog events with structlog
    (optional; never run on import).

    Without it, dovecote's events are stdlib ``logging`` records under ``dovecote``.
    With it, structlog is configured process-wide: events below *level* (a stdlib
    level name or number) are dropped cheaply by a filtering bound logger, and the rest
    go to stderr, one JSON object per line when *json* is true, otherwise structlog's
    human-readable console format.
    Raises :class:`~dovecote.OptionsError` for an unknown level.
    """
    numeric = _level_number(level)
    processors: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
    if json:
        processors += [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
    else:
        processors.append(structlog.dev.ConsoleRenderer())
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def _level_number(level: str | int) -> int:
    if isinstance(level, bool):
        raise OptionsError(f"log level must be a level name or number, not {level!r}")
    if isinstance(level, int):
        return level
    if isinstance(level, str):
        number = logging.getLevelNamesMapping().get(level.upper())
        if number is not None:
            return number
    raise OptionsError(f"unknown log level {level!r}")
