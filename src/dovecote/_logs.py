"""The loggers of every dovecote package: structlog events through stdlib ``logging``.

Shared by every package, like :mod:`dovecote._errors` (the leaves log too). Until
structlog is configured (by the application, by ``configure_logging`` or by
``structlog.testing.capture_logs``), an event goes to the stdlib logger of its name,
under ``dovecote``, as one line ``event key=value ...`` with its traceback. Python's
defaults then show warnings and errors on stderr and keep info quiet, and an
application's ``logging`` setup decides the rest; nothing goes to stdout. Once structlog
is configured, events follow that configuration instead (structlog's
``stdlib.LoggerFactory`` makes them stdlib records again).
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any, cast

import structlog
from structlog.typing import FilteringBoundLogger

__all__ = ["get_logger"]

_ANY_LEVEL = structlog.make_filtering_bound_logger(logging.NOTSET)


def get_logger(name: str = "dovecote", /, **bindings: Any) -> FilteringBoundLogger:
    """Return a logger named *name* (a stdlib logger name), with *bindings* in every event.

    The name is also bound as ``logger_name`` so it shows under any structlog
    configuration. The route (stdlib or structlog's configuration) is chosen at each
    call, so loggers made at import time follow a later configuration.
    """
    return cast(FilteringBoundLogger, _RoutedLogger(name, {"logger_name": name, **bindings}))


class _RoutedLogger:
    """A bound logger that picks its route when it logs (see the module docstring)."""

    __slots__ = ("_bindings", "_name", "_stdlib", "_structlog")

    def __init__(self, name: str, bindings: dict[str, Any]) -> None:
        self._name = name
        self._bindings = bindings
        self._structlog: Any = None
        self._stdlib: Any = None

    def _route(self) -> Any:
        if structlog.is_configured():
            if self._structlog is None:
                self._structlog = structlog.get_logger(self._name, **self._bindings)
            return self._structlog
        if self._stdlib is None:
            self._stdlib = structlog.wrap_logger(
                logging.getLogger(self._name),
                processors=[structlog.stdlib.filter_by_level, _to_stdlib_call],
                wrapper_class=_ANY_LEVEL,
                context_class=dict,
                cache_logger_on_first_use=True,
                **self._bindings,
            )
        return self._stdlib

    def __getattr__(self, method: str) -> Any:
        return getattr(self._route(), method)

    def bind(self, **bindings: Any) -> _RoutedLogger:
        return _RoutedLogger(self._name, {**self._bindings, **bindings})

    def new(self, **bindings: Any) -> _RoutedLogger:
        return _RoutedLogger(self._name, {"logger_name": self._name, **bindings})

    def unbind(self, *keys: str) -> _RoutedLogger:
        missing = [key for key in keys if key not in self._bindings]
        if missing:
            raise KeyError(missing[0])
        return self.try_unbind(*keys)

    def try_unbind(self, *keys: str) -> _RoutedLogger:
        kept = {k: v for k, v in self._bindings.items() if k not in keys}
        return _RoutedLogger(self._name, kept)

    def __repr__(self) -> str:
        return f"<dovecote logger {self._name!r} {self._bindings!r}>"


def _to_stdlib_call(
    _: Any, __: str, event_dict: MutableMapping[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The last processor: ``event key=value ...`` as the record's message, the traceback
    as its ``exc_info``, and the fields as ``record.dovecote`` for handlers that want them."""
    fields = dict(event_dict)
    exc_info = fields.pop("exc_info", None)
    fields.pop("logger_name", None)
    event = str(fields.pop("event", ""))
    parts = [event, *(f"{key}={_text(value)}" for key, value in fields.items())]
    return (" ".join(parts),), {"exc_info": exc_info, "extra": {"dovecote": fields}}


def _text(value: Any) -> str:
    if isinstance(value, str) and value and not any(c.isspace() or c in "='\"" for c in value):
        return value
    return repr(value)
