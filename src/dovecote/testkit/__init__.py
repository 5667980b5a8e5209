"""Testing tools: probes, manual time and an event recorder (plus a pytest plugin).

>>> # probe = TestProbe(system); ref.tell("ping", sender=probe.ref)
>>> # assert await probe.expect_message("pong") == "pong"
"""

from dovecote.addressing import ManualClock
from dovecote.testkit._probe import TestProbe
from dovecote.testkit._recorder import EventRecorder

__all__ = ["EventRecorder", "ManualClock", "TestProbe"]
