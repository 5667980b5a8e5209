"""A child process for the PostgreSQL crash tests (run by path, not collected).

    python pg_child.py writer URL SCHEMA   # concurrent sends and claim+commits; prints acks
    python pg_child.py holder URL SCHEMA   # claims one message, prints it, waits to be killed

The roles are store_child's (every line printed only after the store acknowledged the
operation), on a PostgresStore instead of a SQLite file.
"""

from __future__ import annotations

import asyncio
import sys

from store_child import holder, writer

from dovecote.durable import open_store


async def main() -> None:
    role, url, schema = sys.argv[1:4]
    async with open_store(url, sweep_interval=None, schema=schema) as store:
        await (writer(store) if role == "writer" else holder(store))


if __name__ == "__main__":
    asyncio.run(main())
