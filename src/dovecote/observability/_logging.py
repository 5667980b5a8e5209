"""structlog helpers: a named logger factory and an optional one-call setup."""

from __future__ import annotations

import logging
import sys
from typing import Any, cast

import structlog
from structlog.typing import FilteringBoundLogger, Processor

from dovecote._errors import OptionsError

__all__ = ["configure_logging", "get_logger"]


def get_logger(name: str = "dovecote", /, **bindings: Any) -> FilteringBoundLogger:
    """Return a structlog logger named *name*, with *bindings* in every event.

    The name goes to the logger factory (so stdlib integration names the stdlib
    logger after it) and is also bound as ``logger_name`` so it shows up under
    any configuration. The logger is a lazy proxy: it picks up the structlog
    configuration in force when it logs, so module-level loggers created before
    :func:`configure_logging` still obey it.
    """
    # ``logger`` (the usual key) cannot be an initial value: it collides with
    # wrap_logger's first parameter, and binding it eagerly would freeze the config.
    initial = {"logger_name": name, **bindings}
    return cast(FilteringBoundLogger, structlog.get_logger(name, **initial))


def configure_logging(level: str | int = "INFO", json: bool = False) -> None:
    """Configure structlog for a dovecote application (optional; never run on import).

    Events below *level* (a stdlib level name or number) are dropped cheaply by a
    filtering bound logger. Output goes to stderr: one JSON object per line when
    *json* is true, otherwise structlog's human-readable console format.
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
