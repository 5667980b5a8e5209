"""The store lifecycle state machine (test_store_lifecycle_model) against PostgreSQL.

Same rules and invariants: every message in exactly one state, attempts count deliveries, no
loss, no double commit, stale claims refused. Fewer examples than on SQLite: each one
creates (and drops) a schema on the shared server.
"""

from __future__ import annotations

from hypothesis import settings

from .test_store_lifecycle_model import StoreLifecycle


class PostgresLifecycle(StoreLifecycle):
    backend_id = "postgresql"


PostgresLifecycle.TestCase.settings = settings(max_examples=40, stateful_step_count=40,
                                               deadline=None)
TestPostgresLifecycle = PostgresLifecycle.TestCase
