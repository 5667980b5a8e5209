"""The HTTP front end: seed 004's REST API on Starlette, a thin translation over the store.

Read ``_endpoints`` for the whole API at a glance. Handlers decode the body into a msgspec
Struct, call one store method and encode the result; every failure (the store's typed
errors, the edge's ``GatewayError``s, msgspec's decode and validation errors, unknown
routes) becomes ``{"error": code, "message": text}`` in ``_error_response``, the one place
errors are translated.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast
from urllib.parse import unquote

import attrs
import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dovecote.durable import MailboxStore, StoreError
from dovecote.durable._model import (
    DEAD_LETTER_REASONS,
    ORDERING_MODES,
    RELEASE_KINDS,
)
from dovecote.gateway._errors import (
    GatewayError,
    MalformedBodyError,
    RequestTooLargeError,
    UnauthorizedError,
    UnsupportedMediaTypeError,
)
from dovecote.gateway._metrics import CONTENT_TYPE, GatewayMetrics
from dovecote.gateway._wire import (
    ClaimBody,
    ClaimJson,
    CommitBody,
    CommittedJson,
    DeadLetterJson,
    DeletedJson,
    EnsureBody,
    ErrorJson,
    FanoutBody,
    FanoutJson,
    MailboxJson,
    MessageJson,
    PurgeBody,
    RejectBody,
    ReleaseBody,
    ReplayBody,
    SendBody,
    StatsJson,
    choice,
    claim_json,
    dead_letter_json,
    decode_payload,
    mailbox_json,
    message_json,
    stats_json,
)

__all__ = ["Endpoint", "QueryParam", "create_http_app"]

S = TypeVar("S", bound=msgspec.Struct)
_ENCODER = msgspec.json.Encoder()
_JSON = "application/json"
_UNPROTECTED = frozenset({"/healthz"})


@attrs.frozen(slots=True)
class QueryParam:
    """One query-string parameter of an endpoint (for the OpenAPI document)."""

    name: str
    schema: dict[str, Any]
    description: str


@attrs.frozen(slots=True)
class Endpoint:
    """One route: what it does, what it takes and answers, and the handler.

    ``response`` is a type msgspec can describe (``None`` for an empty 204, ``str`` for a
    text body); ``errors`` are the statuses it may answer besides the ones every route has.
    """

    method: str
    path: str
    handler: Callable[[Request], Awaitable[Response]]
    summary: str
    status: int = 200
    response: Any = None
    body: type[msgspec.Struct] | None = None
    query: tuple[QueryParam, ...] = ()
    errors: tuple[int, ...] = ()
    text_type: str = "text/plain; charset=utf-8"


def _int_schema(default: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": 0, "maximum": 2**32 - 1, "default": default}


_LIMIT = QueryParam("limit", _int_schema(100), "page size (default 100)")
_MAX = QueryParam("max", _int_schema(100), "at most this many messages (default 100)")
_AFTER = QueryParam("after", {"type": "string"}, "exclusive agent_id cursor")
_REASON = QueryParam(
    "reason", {"type": "string", "enum": list(DEAD_LETTER_REASONS)}, "only this poison_reason"
)


class _Api:
    """The handlers; each is one store call between a decoded request and an encoded reply."""

    def __init__(self, store: MailboxStore, metrics: GatewayMetrics, max_body_bytes: int) -> None:
        self.store = store
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.openapi = b"{}"  # set once the endpoints exist (they describe themselves)
        self._decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}

    async def healthz(self, request: Request) -> Response:
        return PlainTextResponse("ok")

    async def metrics_text(self, request: Request) -> Response:
        return Response(self.metrics.render(), media_type=CONTENT_TYPE)

    async def openapi_json(self, request: Request) -> Response:
        return Response(self.openapi, media_type=_JSON)

    async def ensure(self, request: Request) -> Response:
        body = await self._body(request, EnsureBody)
        options = {k: v for k, v in msgspec.structs.asdict(body).items() if v is not None}
        if body.ordering_mode is not None:
            options["ordering_mode"] = choice(body.ordering_mode, ORDERING_MODES, "ordering_mode")
        return _json(mailbox_json(await self.store.ensure_mailbox(_path(request), **options)))

    async def get_mailbox(self, request: Request) -> Response:
        return _json(mailbox_json(await self.store.get_mailbox(_path(request))))

    async def list_mailboxes(self, request: Request) -> Response:
        page = await self.store.list_mailboxes(
            limit=_query_int(request, "limit", 100), after=request.query_params.get("after")
        )
        return _json([mailbox_json(m) for m in page])

    async def stats(self, request: Request) -> Response:
        return _json(stats_json(await self.store.stats(_path(request))))

    async def send(self, request: Request) -> Response:
        b = await self._body(request, SendBody)
        payload = decode_payload(b.payload_base64)
        sent = await self.store.send(
            _path(request), payload, sender=b.from_, headers=b.headers,
            priority=b.priority, delay_ms=b.delay_ms, ttl_ms=b.ttl_ms,
        )  # fmt: skip
        return _json(message_json(sent), 201)

    async def fanout(self, request: Request) -> Response:
        b = await self._body(request, FanoutBody)
        payload = decode_payload(b.payload_base64)
        sent = await self.store.fanout(
            b.targets, payload, sender=b.from_, headers=b.headers,
            priority=b.priority, delay_ms=b.delay_ms, ttl_ms=b.ttl_ms,
        )  # fmt: skip
        return _json(FanoutJson([message_json(m) for m in sent]), 201)

    async def peek(self, request: Request) -> Response:
        found = await self.store.peek(_path(request), max=_query_int(request, "max", 100))
        return _json([message_json(m) for m in found])

    async def claim(self, request: Request) -> Response:
        b = await self._body(request, ClaimBody)
        claim = await self.store.claim(
            _path(request), claimer=b.claimer_id, lease_duration_ms=b.lease_duration_ms
        )
        return _json(None if claim is None else claim_json(claim))

    async def is_committed(self, request: Request) -> Response:
        done = await self.store.is_committed(_path(request), _path(request, "message_id"))
        return _json(CommittedJson(done))

    async def commit(self, request: Request) -> Response:
        b = await self._body(request, CommitBody)
        await self.store.commit(
            _path(request, "message_id"), claimer=b.claimer_id,
            checkpoint_token=b.checkpoint_token, lease_token=b.lease_token,
        )  # fmt: skip
        return Response(status_code=204)

    async def release(self, request: Request) -> Response:
        b = await self._body(request, ReleaseBody)
        await self.store.release(
            _path(request, "message_id"), claimer=b.claimer_id,
            kind=choice(b.kind, RELEASE_KINDS, "kind"), note=b.note, lease_token=b.lease_token,
        )  # fmt: skip
        return Response(status_code=204)

    async def reject(self, request: Request) -> Response:
        b = await self._body(request, RejectBody)
        await self.store.reject_validation(_path(request, "message_id"), note=b.note)
        return Response(status_code=204)

    async def dead_letters(self, request: Request) -> Response:
        reason = request.query_params.get("reason")
        records = await self.store.dead_letters(
            _path(request),
            reason=None if reason is None else choice(reason, DEAD_LETTER_REASONS, "reason"),
            limit=_query_int(request, "limit", 100),
        )
        return _json([dead_letter_json(d) for d in records])

    async def purge(self, request: Request) -> Response:
        b = await self._body(request, PurgeBody)
        count = await self.store.purge_dead_letters(_path(request), before_ms=b.before_ms)
        return _json(DeletedJson(count))

    async def replay(self, request: Request) -> Response:
        b = await self._body(request, ReplayBody)
        new = await self.store.replay(
            _path(request, "message_id"), replayed_by=b.replayed_by,
            target_mailbox=b.target_mailbox,
        )  # fmt: skip
        return _json(message_json(new), 201)

    async def _body(self, request: Request, kind: type[S]) -> S:
        """The JSON body as ``kind``: checked for content type and size, then decoded."""
        media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != _JSON:
            raise UnsupportedMediaTypeError(
                f"expected request with `Content-Type: {_JSON}`, got {media or 'none'!r}"
            )
        cap = self.max_body_bytes
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            raise RequestTooLargeError(f"request body is larger than {cap} bytes")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise RequestTooLargeError(f"request body is larger than {cap} bytes")
            chunks.append(chunk)
        decoder = self._decoders.get(kind)
        if decoder is None:
            decoder = self._decoders[kind] = msgspec.json.Decoder(kind)
        return cast(S, decoder.decode(b"".join(chunks)))


def _endpoints(api: _Api) -> list[Endpoint]:
    """Every route of seed 004 (upstream Postbox's paths and statuses), plus the OpenAPI doc."""
    e = Endpoint
    box, msg = "/v1/mailboxes/{agent_id}", "/v1/messages/{message_id}"
    return [
        e("GET", "/healthz", api.healthz, "Liveness probe: `ok`", response=str),
        e("GET", "/metrics", api.metrics_text, "Prometheus text-format metrics",
          response=str, text_type=CONTENT_TYPE),
        e("GET", "/openapi.json", api.openapi_json, "This OpenAPI document",
          response=dict[str, Any]),
        e("GET", "/v1/mailboxes", api.list_mailboxes, "List mailboxes by agent_id",
          response=list[MailboxJson], query=(_LIMIT, _AFTER)),
        e("POST", box, api.ensure, "Ensure a mailbox (create-only)",
          response=MailboxJson, body=EnsureBody),
        e("GET", box, api.get_mailbox, "Get one mailbox", response=MailboxJson, errors=(404,)),
        e("GET", f"{box}/stats", api.stats, "Per-mailbox counters",
          response=StatsJson, errors=(404,)),
        e("POST", f"{box}/send", api.send, "Send a message", status=201,
          response=MessageJson, body=SendBody, errors=(503,)),
        e("POST", "/v1/fanout", api.fanout, "Send one message to many mailboxes atomically",
          status=201, response=FanoutJson, body=FanoutBody, errors=(503,)),
        e("GET", f"{box}/peek", api.peek, "Peek visible messages without claiming",
          response=list[MessageJson], query=(_MAX,), errors=(404,)),
        e("POST", f"{box}/claim", api.claim, "Claim the next visible message (or null)",
          response=ClaimJson | None, body=ClaimBody, errors=(404,)),
        e("GET", f"{box}/committed/{{message_id}}", api.is_committed,
          "Whether a message was committed", response=CommittedJson),
        e("POST", f"{msg}/commit", api.commit, "Commit a claimed message", status=204,
          body=CommitBody, errors=(404, 409)),
        e("POST", f"{msg}/release", api.release, "Release a claimed message", status=204,
          body=ReleaseBody, errors=(404, 409)),
        e("POST", f"{msg}/reject-validation", api.reject,
          "Dead-letter a pending message as validation_failed", status=204,
          body=RejectBody, errors=(404,)),
        e("GET", f"{box}/dead-letters", api.dead_letters, "List dead letters, oldest first",
          response=list[DeadLetterJson], query=(_REASON, _LIMIT)),
        e("DELETE", f"{box}/dead-letters", api.purge, "Purge dead letters before before_ms",
          response=DeletedJson, body=PurgeBody),
        e("POST", "/v1/dead-letters/{message_id}/replay", api.replay,
          "Send a dead letter again as a new message", status=201,
          response=MessageJson, body=ReplayBody, errors=(404, 503)),
    ]  # fmt: skip


def create_http_app(
    store: MailboxStore,
    *,
    token: str | None = None,
    max_body_bytes: int = 2 * 1024 * 1024,
    metrics: GatewayMetrics | None = None,
) -> ASGIApp:
    """The HTTP API over ``store`` as an ASGI app (serve it with uvicorn or any ASGI server)."""
    from dovecote.gateway._openapi import openapi_document

    gateway_metrics = metrics or GatewayMetrics(store.metrics)
    api = _Api(store, gateway_metrics, max_body_bytes)
    endpoints = _endpoints(api)
    api.openapi = msgspec.json.encode(openapi_document(endpoints))
    app = Starlette(
        routes=[Route(e.path, e.handler, methods=[e.method]) for e in endpoints],
        exception_handlers={
            StoreError: _error_response,
            GatewayError: _error_response,
            msgspec.DecodeError: _error_response,
            HTTPException: _error_response,
            Exception: _error_response,
        },
    )
    return _Edge(app, token, gateway_metrics)


class _Edge:
    """ASGI wrapper: bearer-token check, raw (still %-encoded) path for routing, counting."""

    def __init__(self, app: ASGIApp, token: str | None, metrics: GatewayMetrics) -> None:
        self.app = app
        self.expected = None if token is None else f"Bearer {token}".encode()
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # Route on the raw path so an agent id holding "/" (sent as %2F) stays one segment;
        # handlers percent-decode the parameters they read.
        raw = scope.get("raw_path")
        if raw:
            scope["path"] = raw.decode("latin-1")
        status = 500

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        if self.expected is not None and scope["path"] not in _UNPROTECTED:
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                response = _error_body(UnauthorizedError("missing or wrong bearer token"))
                response.headers["www-authenticate"] = "Bearer"
                await response(scope, receive, counting_send)
                self.metrics.count("http", "unauthorized", str(status))
                return
        try:
            await self.app(scope, receive, counting_send)
        finally:
            route = scope.get("route")
            name = getattr(route, "path", "unmatched")
            self.metrics.count("http", f"{scope['method']} {name}", str(status))


def _json(value: Any, status: int = 200) -> Response:
    return Response(_ENCODER.encode(value), status_code=status, media_type=_JSON)


def _path(request: Request, name: str = "agent_id") -> str:
    return unquote(request.path_params[name])


def _query_int(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    if not text.isdigit() or int(text) > 2**32 - 1:
        raise MalformedBodyError(f"bad request: invalid query string: {name}={text!r}")
    return int(text)


def _error_body(exc: StoreError | GatewayError, status: int | None = None) -> Response:
    return _json(ErrorJson(exc.code, str(exc)), status or exc.http_status)


_STATUS_CODES = {404: "not_found", 405: "method_not_allowed"}


async def _error_response(request: Request, exc: Exception) -> Response:
    """The one translation of every failure into ``{"error": code, "message": text}``."""
    if isinstance(exc, StoreError | GatewayError):
        return _error_body(exc)
    if isinstance(exc, msgspec.ValidationError):
        return _json(ErrorJson("unprocessable_entity", f"invalid request body: {exc}"), 422)
    if isinstance(exc, msgspec.DecodeError):
        return _json(ErrorJson("bad_request", f"bad request: body is not JSON: {exc}"), 400)
    if isinstance(exc, HTTPException):
        code = _STATUS_CODES.get(exc.status_code, "http_error")
        headers = dict(exc.headers or {})
        return Response(
            _ENCODER.encode(ErrorJson(code, f"{exc.detail}: {request.method} {request.url.path}")),
            status_code=exc.status_code,
            media_type=_JSON,
            headers=headers,
        )
    return _json(ErrorJson("internal_error", f"internal error: {type(exc).__name__}"), 500)
