"""What the durable store rows share: the payload and how many operations each figure runs.

One operation per transaction at ``synchronous=FULL`` costs an fsync (milliseconds on some
disks), so those figures run a tenth of the size the others run.
"""

from __future__ import annotations

PAYLOAD = b"x" * 100
#: concurrent senders / consumers of the group-commit figures
SENDERS = 256
CONSUMERS = 8


def send_size(n: int, synchronous: str) -> int:
    """Sends measured one per transaction (or one awaited at a time) at this level."""
    return max(10, n // 10) if synchronous.upper() == "FULL" else n


def claim_size(n: int, synchronous: str) -> int:
    """Claim + commit pairs measured at this level."""
    return max(10, n // 10) if synchronous.upper() == "FULL" else max(10, n // 2)
