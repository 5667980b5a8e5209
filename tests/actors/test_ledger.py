"""Nothing is lost: sent = processed + dropped (by reason) + dead-lettered + still queued."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any

from actor_kit import Boom, Hold, Inbox, metric_samples, until_terminated, watch

from dovecote import (
    Actor,
    ActorOptions,
    ActorSystem,
    DeadLetter,
    MailboxFullError,
    PriorityMailbox,
)


@dataclass(frozen=True)
class Work:
    role: str
    n: int
    kind: str = "work"
    priority: int = 5


class LedgerActor(Actor):
    """Counts every Work delivered to on_receive; "boom" fails, "stop-self" stops at once."""

    def __init__(self, ledger: Ledger, role: str) -> None:
        super().__init__()
        self.ledger = ledger
        self.role = role

    async def on_receive(self, message: Any) -> Any:
        if isinstance(message, Hold):
            await message.run()
            return None
        self.ledger.delivered.add(message)
        if message.kind == "boom":
            raise Boom(f"ledger boom {message.n}")
        if message.kind == "stop-self":
            self.context.stop(self.self_ref)
        return None


# one class per role, so that actor_mailbox_size{actor_class} tells the roles apart
class LedgerUnbounded(LedgerActor):
    pass


class LedgerDropHead(LedgerActor):
    pass


class LedgerDropNew(LedgerActor):
    pass


class LedgerReject(LedgerActor):
    pass


class LedgerPriority(LedgerActor):
    pass


class LedgerPriorityBounded(LedgerActor):
    pass


def priority_of(message: Any) -> int:
    return getattr(message, "priority", 0)


def class_names(cls: type) -> set[str]:
    return {cls.__name__, cls.__qualname__, f"{cls.__module__}.{cls.__qualname__}"}


ROLES: dict[str, tuple[type[LedgerActor], ActorOptions | None, set[str]]] = {
    "unbounded": (LedgerUnbounded, None, set()),
    "drop-head": (LedgerDropHead, ActorOptions.create().with_mailbox_capacity(4), {"drop-head"}),
    "drop-new": (
        LedgerDropNew,
        ActorOptions.create().with_mailbox_capacity(4).with_mailbox_overflow("drop-new"),
        {"drop-new"},
    ),
    "reject": (
        LedgerReject,
        ActorOptions.create().with_mailbox_capacity(4).with_mailbox_overflow("reject"),
        set(),
    ),
    "priority": (
        LedgerPriority,
        ActorOptions.create().with_mailbox(lambda: PriorityMailbox(priority_for=priority_of)),
        set(),
    ),
    "priority-bounded": (
        LedgerPriorityBounded,
        ActorOptions.create().with_mailbox(
            lambda: PriorityMailbox(priority_for=priority_of, capacity=4, overflow="drop-head")
        ),
        {"drop-head"},
    ),
}


class Ledger:
    def __init__(self, system: ActorSystem) -> None:
        self.system = system
        self.sent: Counter[str] = Counter()
        self.rejected: Counter[str] = Counter()
        self.delivered = Inbox()
        self.dead = Inbox()
        system.event_stream.subscribe(self.dead.add, DeadLetter)
        self.refs: dict[str, Any] = {}
        self.counter = 0

    def spawn(self, role: str) -> Any:
        cls, options, _ = ROLES[role]
        ref = self.system.spawn(lambda: cls(self, role), role, options)
        self.refs[role] = ref
        return ref

    def send(self, role: str, kind: str = "work") -> None:
        self.counter += 1
        work = Work(role, self.counter, kind, priority=self.counter % 3)
        try:
            self.refs[role].tell(work)
        except MailboxFullError:
            self.rejected[role] += 1
        else:
            self.sent[role] += 1

    async def hold(self, role: str) -> Hold:
        hold = Hold()
        self.refs[role].tell(hold)
        await hold.wait_started()
        return hold

    # -- the columns of the ledger ---------------------------------------------------------
    def processed(self, role: str) -> int:
        return sum(1 for w in self.delivered.items if w.role == role)

    def dropped_by_reason(self, role: str) -> dict[str, float]:
        # a stopped incarnation's drops move to its class's series with an empty path
        out: Counter[str] = Counter()
        names = class_names(ROLES[role][0])
        for labels, value in metric_samples(self.system.metrics, "actor_mailbox_dropped_total"):
            path = labels.get("path")
            mine = path == f"/user/{role}" or (path == "" and labels.get("actor_class") in names)
            if mine and value:
                out[labels.get("policy", "?")] += int(value)
        return dict(out)

    def dropped(self, role: str) -> int:
        return int(sum(self.dropped_by_reason(role).values()))

    def dead_lettered(self, role: str) -> int:
        return sum(
            1
            for d in self.dead.items
            if isinstance(d.message, Work)
            and d.message.role == role
            and d.recipient is not None
            and d.recipient.path == f"/user/{role}"
        )

    def queued(self, role: str) -> int:
        names = class_names(ROLES[role][0])
        return int(
            sum(
                value
                for labels, value in metric_samples(self.system.metrics, "actor_mailbox_size")
                if labels.get("actor_class") in names and "path" not in labels
            )
        )

    def row(self, role: str) -> dict[str, int]:
        return {
            "sent": self.sent[role],
            "processed": self.processed(role),
            "dropped": self.dropped(role),
            "dead": self.dead_lettered(role),
            "queued": self.queued(role),
        }

    def balanced(self, role: str, *, queued: bool = True) -> bool:
        row = self.row(role)
        still = row["queued"] if queued else 0
        return row["sent"] == row["processed"] + row["dropped"] + row["dead"] + still

    def check(self, role: str) -> None:
        row = self.row(role)
        assert row["sent"] == row["processed"] + row["dropped"] + row["dead"] + row["queued"], (
            role,
            row,
        )
        assert set(self.dropped_by_reason(role)) <= ROLES[role][2], (
            role,
            self.dropped_by_reason(role),
        )

    async def settle(self, role: str) -> None:
        """Wait until everything sent to ``role`` is accounted for with nothing queued."""
        try:
            await self.delivered.wait_for(lambda _: self.balanced(role, queued=False))
        except TimeoutError:
            raise AssertionError(f"{role} never settled: {self.row(role)}") from None
        self.check(role)


async def test_every_message_is_processed_dropped_dead_lettered_or_still_queued():
    async with ActorSystem("ledger") as system:
        ledger = Ledger(system)
        roles = list(ROLES)
        for role in roles:
            ledger.spawn(role)

        # 1. overflow while busy, and a restart with messages queued behind the failure
        holds = {role: await ledger.hold(role) for role in roles}
        for role in roles:
            for kind in ["work", "work", "boom", "work", "work", "work", "work"]:
                ledger.send(role, kind)
        for role in roles:
            ledger.check(role)  # mid-flight: the queued column holds the difference
            holds[role].release.set()
        for role in roles:
            await ledger.settle(role)
        assert ledger.rejected["reject"] == 3
        assert ledger.dropped("drop-head") == 3
        assert ledger.dropped("drop-new") == 3
        assert ledger.dropped("unbounded") == ledger.dropped("priority") == 0

        # 2. an immediate stop with messages queued behind it, then tells to the dead actor
        holds = {role: await ledger.hold(role) for role in roles}
        watchers = {role: await watch(system, ledger.refs[role]) for role in roles}
        for role in roles:
            for kind in ["work", "stop-self", "work", "work"]:
                ledger.send(role, kind)
            holds[role].release.set()
        for role in roles:
            await until_terminated(watchers[role], ledger.refs[role])
            ledger.send(role)
            ledger.send(role)
        for role in roles:
            await ledger.settle(role)

        # 3. a new incarnation under the same name, stopped gracefully with a PoisonPill
        for role in roles:
            ledger.spawn(role)
        holds = {role: await ledger.hold(role) for role in roles}
        watchers = {role: await watch(system, ledger.refs[role]) for role in roles}
        for role in roles:
            ledger.send(role)
            ledger.send(role, "boom")
            ledger.refs[role].stop()
            for _ in range(4):  # enough to overflow the bounded ones behind the pill
                ledger.send(role)
            holds[role].release.set()
        for role in roles:
            await until_terminated(watchers[role], ledger.refs[role])
            await ledger.settle(role)

        # 4. messages still queued: first counted as such, then dead-lettered by shutdown
        for role in roles:
            ledger.spawn(role)
        holds = {role: await ledger.hold(role) for role in roles}
        for role in roles:
            for _ in range(3):
                ledger.send(role)
        for role in roles:
            assert ledger.queued(role) == 3, role
            ledger.check(role)
        shutdown = asyncio.ensure_future(system.shutdown(drain=False))
        await asyncio.sleep(0)
        for hold in holds.values():
            hold.release.set()
        await asyncio.wait_for(shutdown, 5.0)
        for role in roles:
            row = ledger.row(role)
            assert row["queued"] == 0, (role, row)
            ledger.check(role)

        # the system's own count agrees with what was published
        assert system.dead_letters_count == len(ledger.dead.items)
        assert all(isinstance(d.message, Work) for d in ledger.dead.items)
        total_sent = sum(ledger.sent.values())
        assert total_sent == sum(
            ledger.processed(r) + ledger.dropped(r) + ledger.dead_lettered(r) for r in roles
        )
