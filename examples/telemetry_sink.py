"""A telemetry sink that never falls behind: a bounded mailbox with the drop-head policy.

Sensors report in bursts faster than the sink can store them. Old readings are worth
less than new ones, so the sink's mailbox holds at most 100 and, when full, discards
the *oldest* queued reading (drop-head). Memory stays bounded, the sink always works on
the freshest data, and every discarded reading is counted: nothing is lost silently.

Run it with:  python examples/telemetry_sink.py
"""

import asyncio

import attrs

import dovecote
from dovecote import Actor, ActorOptions, ActorSystem

CAPACITY = 100
BURSTS = 5
BURST_SIZE = 500


@attrs.frozen
class Reading:
    sensor: str
    seq: int
    value: float


class TelemetrySink(Actor):
    def __init__(self) -> None:
        super().__init__()
        self.stored = 0
        self.latest: dict[str, Reading] = {}
        self.first_seq_stored: int | None = None  # oldest reading stored this burst

    def on_receive(self, message: object) -> object:
        if isinstance(message, Reading):
            self.stored += 1
            self.latest[message.sensor] = message
            if self.first_seq_stored is None:
                self.first_seq_stored = message.seq
            return None
        if message == "end-of-burst":  # a query, answered with ask()
            first, self.first_seq_stored = self.first_seq_stored, None
            return first
        if message == "stats":
            return self.stored, {name: r.seq for name, r in sorted(self.latest.items())}
        return None


async def main() -> None:
    async with ActorSystem("telemetry") as system:
        options = (
            ActorOptions.create().with_mailbox_capacity(CAPACITY).with_mailbox_overflow("drop-head")
        )
        sink = system.spawn(TelemetrySink, "sink", options)

        sent = 0
        for burst in range(BURSTS):
            # A burst: tell() never blocks, so all 500 readings are queued before the sink
            # gets a turn. The mailbox keeps the newest 100 and drops the 400 before them.
            for _ in range(BURST_SIZE):
                sensor = f"sensor-{sent % 3}"
                sink.tell(Reading(sensor, sent, 20.0 + sent % 7))
                sent += 1
            await asyncio.sleep(0.01)  # the sensors pause; the sink catches up
            oldest = await sink.ask("end-of-burst")
            print(
                f"burst {burst + 1}: sent readings #{sent - BURST_SIZE}..#{sent - 1}, "
                f"sink stored #{oldest}..#{sent - 1} (the newest {sent - oldest})"
            )

        stored, latest = await sink.ask("stats")
        labels = {"actor_class": "TelemetrySink", "path": sink.path, "policy": "drop-head"}
        dropped = system.metrics.get_sample_value("actor_mailbox_dropped_total", labels)
        print(f"latest reading per sensor: {latest}")
        print(f"sent {sent} = stored {stored} + dropped {dropped:.0f}")
        assert sent == stored + dropped  # the ledger balances: nothing vanished unaccounted


if __name__ == "__main__":
    dovecote.run(main())
