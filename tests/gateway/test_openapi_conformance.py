"""Schemathesis against the live ``/openapi.json``: no 5xx, and every response (status,
content type, body) is the one the document promises.

Bounded: a few generated examples per operation and mode (``DOVECOTE_SCHEMATHESIS_EXAMPLES``,
default 6), positive (valid) and negative (schema-violating) requests.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import schemathesis
from gateway_kit import Broker
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

EXAMPLES = int(os.environ.get("DOVECOTE_SCHEMATHESIS_EXAMPLES", "6"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_operation_answers_as_the_document_says(
    sqlite_broker: Broker, mode: GenerationMode
) -> None:
    schema = schemathesis.openapi.from_url(f"{sqlite_broker.http}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 17  # every route (schemathesis leaves out /openapi.json)
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def check(case: Any) -> None:
            case.call_and_validate(base_url=sqlite_broker.http, checks=CHECKS)

        try:
            check()
        except Unsatisfiable:  # nothing to negate (e.g. GET /healthz takes no input)
            assert mode is GenerationMode.NEGATIVE
