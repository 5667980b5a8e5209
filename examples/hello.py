"""A tour of dovecote: spawn, tell, ask, a child, a bounded mailbox, a supervisor restart."""

import dovecote
from dovecote import Actor, ActorOptions, ActorSystem
from dovecote.observability import configure_logging


class Shouter(Actor[str, str]):
    def on_receive(self, message: str) -> str:  # a plain `def` handler runs inline: no task
        return message.upper()  # the return value answers ask()


class Greeter(Actor):
    greeted = 0  # state is touched by one message at a time: no locks needed

    def pre_start(self) -> None:  # also runs after a restart (the default post_restart does)
        self.shouter = self.context.spawn(Shouter, "shouter")  # child: /user/greeter/shouter
        print(f"  [greeter] started, child at {self.shouter.path}")

    async def on_receive(self, message: str) -> str:  # may await; the next message waits
        if message == "crash":
            raise RuntimeError("boom")
        if message.startswith("shout "):
            return await self.shouter.ask(message[6:])
        self.greeted += 1
        return f"hello {message} (greeting #{self.greeted})"


class Sink(Actor):
    def pre_start(self) -> None:
        self.kept: list[int] = []

    def on_receive(self, message: int | str) -> list[int] | None:
        if isinstance(message, int):
            self.kept.append(message)
            return None
        return self.kept  # "kept?"


async def main() -> None:
    configure_logging("CRITICAL")  # only our prints; use "INFO" to see the runtime's logs
    async with ActorSystem("hello") as system:
        greeter = system.spawn(Greeter, "greeter")  # returns an ActorRef at once
        bounded = ActorOptions.create().with_mailbox_capacity(3).with_mailbox_overflow("drop-head")
        sink = system.spawn(Sink, "sink", bounded)
        for reading in range(10):  # all ten arrive before the sink's first turn, so
            sink.tell(reading)  # drop-head keeps the newest three and counts the rest
        greeter.tell("ada")  # tell: fire and forget; handled before the ask below (FIFO)
        print(f"ask {greeter.address} ->", await greeter.ask("world", timeout=1.0))
        print("ask via the child ->", await greeter.ask("shout hi from the child"))
        labels = {"actor_class": "Sink", "path": sink.path, "policy": "drop-head"}
        dropped = system.metrics.get_sample_value("actor_mailbox_dropped_total", labels)
        print(f"bounded mailbox kept {await sink.ask('kept?')}, dropped {dropped:.0f}")
        try:  # the asker gets the exception; the parent (here /user) restarts the actor
            await greeter.ask("crash")
        except RuntimeError as error:
            print(f"crash -> {error!r}, supervisor restarts the greeter")
        print("after restart ->", await greeter.ask("again"))  # a fresh instance


if __name__ == "__main__":
    dovecote.run(main())  # like asyncio.run, on uvloop when it is installed
