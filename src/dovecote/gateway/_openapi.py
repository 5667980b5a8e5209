"""``GET /openapi.json``: an OpenAPI 3.1 document built from the endpoint table.

Schemas come from the same msgspec Structs the handlers decode and encode, so the document
cannot drift from what the server does. Every route lists the statuses it can answer; every
error body is ``ErrorJson``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import msgspec

from dovecote.gateway._wire import ErrorJson

if TYPE_CHECKING:
    from dovecote.gateway._http_endpoints import Endpoint

__all__ = ["openapi_document"]

_REF = "#/components/schemas/{name}"
_ULID = "^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$"
_PARAMS = {
    "agent_id": {
        "description": "a mailbox (agent) id: 1-256 bytes, no whitespace or control characters",
        "schema": {"type": "string", "minLength": 1},
    },
    "message_id": {
        "description": "a message id (ULID)",
        "schema": {"type": "string", "pattern": _ULID},
    },
}
_REASONS = {
    400: "Bad request: a bad id, payload, header, token, base64, query string or JSON",
    401: "Missing or wrong bearer token (when the gateway runs with --token)",
    404: "Mailbox or message not found",
    409: "Already committed",
    413: "Request body larger than the gateway's cap",
    415: "Content-Type is not application/json",
    422: "A JSON body missing a required field or of the wrong type; a message not claimable, "
    "not claimed or not yours",
    500: "Storage backend error",
    503: "Mailbox at capacity",
}


def openapi_document(endpoints: list[Endpoint]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``endpoints``."""
    shapes: list[Any] = [ErrorJson]
    for e in endpoints:
        if e.body is not None:
            shapes.append(e.body)
        if e.response not in (None, str):
            shapes.append(e.response)
    schemas, components = msgspec.json.schema_components(shapes, ref_template=_REF)
    schema_of = dict(zip(map(_key, shapes), schemas, strict=True))
    error = {"application/json": {"schema": schema_of[_key(ErrorJson)]}}

    paths: dict[str, dict[str, Any]] = {}
    for e in endpoints:
        op: dict[str, Any] = {
            "operationId": e.handler.__name__,
            "summary": e.summary,
            "responses": {},
        }
        params = [
            {"name": n, "in": "path", "required": True, **_PARAMS[n]}
            for n in re.findall(r"{(\w+)}", e.path)
        ]
        params += [
            {"name": q.name, "in": "query", "required": False, "schema": q.schema,
             "description": q.description}
            for q in e.query
        ]  # fmt: skip
        if params:
            op["parameters"] = params
        if e.body is not None:
            op["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": schema_of[_key(e.body)]}},
            }
        ok: dict[str, Any] = {"description": "OK" if e.status != 204 else "No content"}
        if e.response is str:
            ok["content"] = {e.text_type.split(";")[0]: {"schema": {"type": "string"}}}
        elif e.response is not None:
            ok["content"] = {"application/json": {"schema": schema_of[_key(e.response)]}}
        op["responses"][str(e.status)] = ok
        statuses = {400, 500, *e.errors}
        if e.path != "/healthz":
            statuses.add(401)
        if e.body is not None:
            statuses |= {413, 415, 422}
        for status in sorted(statuses):
            op["responses"][str(status)] = {"description": _REASONS[status], "content": error}
        paths.setdefault(e.path, {})[e.method.lower()] = op

    return {
        "openapi": "3.1.0",
        "info": {
            "title": "dovecote broker (Postbox-compatible)",
            "version": "1",
            "description": "Seed 004's lease-based mailbox broker over HTTP. Payloads are "
            "base64 in JSON; times are Unix epoch milliseconds.",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


def _key(shape: Any) -> str:
    return repr(shape)
