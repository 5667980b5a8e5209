"""A separate process that handles inbox messages, for the cross-process tests.

    python inbox_worker.py race  KIND DSN TABLE FX ID [ID ...]
        handle every ID (in the given order, several at a time on PostgreSQL); each handler
        inserts (id, pid) into FX in the same transaction. Prints one JSON line: the ids
        this process ran fresh.
    python inbox_worker.py hold  KIND DSN TABLE FX ID
        handle ID with a handler that prints "entered" and then waits for a line on stdin:
        "commit" lets it return, anything else makes it raise (a rollback).
    python inbox_worker.py once  KIND DSN TABLE FX ID
        print "trying", handle ID, print {"fresh": ...}.

KIND is "sqlite" (DSN a file path) or "postgresql" (DSN a URL).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from dovecote.durable import Inbox

SOURCE = "cross-process"


async def _open(kind: str, dsn: str) -> Any:
    if kind == "sqlite":
        import aiosqlite

        return await aiosqlite.connect(dsn, timeout=60)
    import asyncpg

    return await asyncpg.create_pool(dsn, min_size=1, max_size=4)


def _effect(kind: str, fx: str) -> Any:
    sql = f"INSERT INTO {fx} (id, amount) VALUES " + ("(?, ?)" if kind == "sqlite" else "($1, $2)")

    async def write(tx: Any, mid: str) -> None:
        if kind == "sqlite":
            await tx.execute(sql, (mid, os.getpid()))
        else:
            await tx.execute(sql, mid, os.getpid())

    return write


async def main(mode: str, kind: str, dsn: str, table: str, fx: str, ids: list[str]) -> None:
    db = await _open(kind, dsn)
    inbox = Inbox(db, table=table, audit=False)
    write = _effect(kind, fx)
    try:
        if mode == "race":
            fresh: list[str] = []
            lanes = 1 if kind == "sqlite" else 4

            async def lane(mine: list[str]) -> None:
                for mid in mine:
                    outcome = await inbox.handle(mid, SOURCE, lambda tx, m=mid: write(tx, m))
                    if outcome.fresh:
                        fresh.append(mid)

            await asyncio.gather(*(lane(ids[i::lanes]) for i in range(lanes)))
            print(json.dumps(fresh), flush=True)
        elif mode == "hold":

            async def held(tx: Any) -> None:
                await write(tx, ids[0])
                print("entered", flush=True)
                line = await asyncio.to_thread(sys.stdin.readline)
                if line.strip() != "commit":
                    raise RuntimeError("told to fail")

            try:
                await inbox.handle(ids[0], SOURCE, held)
            except RuntimeError:
                print("rolled back", flush=True)
            else:
                print("committed", flush=True)
        else:
            print("trying", flush=True)
            outcome = await inbox.handle(ids[0], SOURCE, lambda tx: write(tx, ids[0]))
            print(json.dumps({"fresh": outcome.fresh}), flush=True)
    finally:
        await db.close()


if __name__ == "__main__":
    mode, kind, dsn, table, fx, *rest = sys.argv[1:]
    asyncio.run(main(mode, kind, dsn, table, fx, rest))
