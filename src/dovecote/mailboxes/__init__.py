"""Actor mailboxes: pure queue data structures (no asyncio, no actors).

:class:`Mailbox` is the unbounded default; :class:`BoundedMailbox` and
:class:`PriorityMailbox` add a capacity with an overflow policy and priority order.
Every mailbox keeps system messages in a separate queue that is always served first.
"""

from ._bounded import BoundedMailbox
from ._drops import DropReportingMailbox, MailboxDropReason, OverflowPolicy
from ._envelope import BareEnvelope, Envelope, ExemptEnvelope, SystemEnvelope
from ._mailbox import Mailbox
from ._priority import PriorityMailbox

__all__ = [
    "BareEnvelope",
    "BoundedMailbox",
    "DropReportingMailbox",
    "Envelope",
    "ExemptEnvelope",
    "Mailbox",
    "MailboxDropReason",
    "OverflowPolicy",
    "PriorityMailbox",
    "SystemEnvelope",
]
