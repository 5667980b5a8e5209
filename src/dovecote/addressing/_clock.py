"""The post office's time: the one dovecote clock, plus its ISO 8601 formatting.

Every lease deadline, backoff wait, watchdog and activity timestamp goes through a
:class:`Clock`, so a test can drive time by hand with :class:`ManualClock` instead of
sleeping. The classes are ``dovecote._clock``'s (``dovecote.Clock`` is the same class).
"""

from __future__ import annotations

import datetime

from dovecote._clock import Clock, ManualClock, SystemClock

__all__ = ["Clock", "ManualClock", "SystemClock", "iso_timestamp"]


def iso_timestamp(wall: float) -> str:
    """Format epoch seconds as an ISO 8601 UTC timestamp (millisecond precision)."""
    moment = datetime.datetime.fromtimestamp(wall, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
