"""A bank account that stays exact under heavy concurrency, without a single lock.

Many asyncio tasks deposit and withdraw at the same time. The account logic reads the
balance, awaits (an audit-log write, say), then writes the new balance: the classic
read-await-write race. As a plain shared object it loses updates, because another
task runs during the await. As an actor it cannot: the actor handles one message at
a time, and an ``async`` handler that awaits keeps the next message waiting until it
returns. Each caller gets its own answer through ``ask``.

Business errors (insufficient funds) are *answers*, not exceptions: an exception
would be a failure, and the supervisor would restart the actor with a fresh balance.

Run it with:  python examples/bank_account.py
"""

import asyncio
import random
from collections.abc import Awaitable, Callable

import attrs

import dovecote
from dovecote import Actor, ActorSystem

CLIENTS = 200
OPS_PER_CLIENT = 20
OPENING_BALANCE = 1_000


@attrs.frozen
class Deposit:
    amount: int


@attrs.frozen
class Withdraw:
    amount: int


@attrs.frozen
class Result:
    accepted: bool
    balance: int


async def audit(entry: str) -> None:
    await asyncio.sleep(0)  # an I/O call: other tasks run while we wait


class NaiveAccount:
    """The same logic as a plain object shared by all tasks: not safe."""

    def __init__(self, balance: int) -> None:
        self.balance = balance

    async def apply(self, op: Deposit | Withdraw) -> Result:
        balance = self.balance
        await audit(f"{op} on {balance}")  # another task may change self.balance here...
        if isinstance(op, Withdraw):
            if op.amount > balance:
                return Result(False, balance)
            balance -= op.amount
        else:
            balance += op.amount
        self.balance = balance  # ...and this write overwrites its update
        return Result(True, balance)


class Account(Actor):
    """The same logic inside an actor: exact."""

    def __init__(self, balance: int) -> None:
        super().__init__()
        self.balance = balance
        self.in_handler = 0  # proof of one-at-a-time: never above 1

    async def on_receive(self, message: Deposit | Withdraw | str) -> Result | int:
        if isinstance(message, str):  # "balance"
            return self.balance
        self.in_handler += 1
        assert self.in_handler == 1, "two messages interleaved!"
        balance = self.balance
        await audit(f"{message} on {balance}")  # the next message waits for us
        accepted = True
        if isinstance(message, Withdraw):
            accepted = message.amount <= balance
            balance -= message.amount if accepted else 0
        else:
            balance += message.amount
        self.balance = balance
        self.in_handler -= 1
        return Result(accepted, balance)


def workload(seed: int) -> list[Deposit | Withdraw]:
    rng = random.Random(seed)
    return [
        Deposit(rng.randint(1, 100)) if rng.random() < 0.6 else Withdraw(rng.randint(1, 150))
        for _ in range(OPS_PER_CLIENT)
    ]


Apply = Callable[[Deposit | Withdraw], Awaitable[Result]]


async def client(apply: Apply, ops: list[Deposit | Withdraw]) -> int:
    """Run the ops one by one; return the net change of the ops the account accepted."""
    net = 0
    for op in ops:
        result = await apply(op)
        if result.accepted:
            net += op.amount if isinstance(op, Deposit) else -op.amount
    return net


async def run_clients(apply: Apply) -> int:
    nets = await asyncio.gather(*(client(apply, workload(seed)) for seed in range(CLIENTS)))
    return OPENING_BALANCE + sum(nets)  # what the balance must be


async def main() -> None:
    total_ops = CLIENTS * OPS_PER_CLIENT
    print(f"{CLIENTS} concurrent clients, {total_ops} deposits/withdrawals in total")

    naive = NaiveAccount(OPENING_BALANCE)
    expected = await run_clients(naive.apply)
    print(f"shared object: balance {naive.balance}, expected {expected}  <- lost updates")

    async with ActorSystem("bank") as system:
        account = system.spawn(lambda: Account(OPENING_BALANCE), "account-42")
        expected = await run_clients(lambda op: account.ask(op, timeout=5.0))
        balance = await account.ask("balance")
        print(f"actor:         balance {balance}, expected {expected}  <- exact, no locks")
        assert balance == expected


if __name__ == "__main__":
    dovecote.run(main())
