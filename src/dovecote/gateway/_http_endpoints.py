"""Seed 004's REST API as a table of endpoints, each a thin translation over one store call.

Read ``endpoints`` for the whole API at a glance. A handler gets an ``HttpCall`` (the path
parameters, the query string and the body already decoded into the endpoint's msgspec
Struct by the app in ``_http``), calls the store and answers a ``Reply``. Handlers never
catch: every failure is translated in one place, ``_http_errors``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl, unquote

import attrs
import msgspec

from dovecote.durable import MailboxStore
from dovecote.durable._model import DEAD_LETTER_REASONS, ORDERING_MODES, RELEASE_KINDS
from dovecote.gateway._errors import MalformedBodyError
from dovecote.gateway._metrics import CONTENT_TYPE, GatewayMetrics
from dovecote.gateway._wire import (
    ClaimBody,
    ClaimJson,
    CommitBody,
    CommittedJson,
    DeadLetterJson,
    DeletedJson,
    EnsureBody,
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

__all__ = [
    "NO_CONTENT",
    "Endpoint",
    "HttpCall",
    "HttpHandlers",
    "QueryParam",
    "Reply",
    "endpoints",
    "json_reply",
]

#: what a handler answers: status, body, and the content type (``None`` with no body)
Reply = tuple[int, bytes, bytes | None]

JSON_TYPE = b"application/json"
NO_CONTENT: Reply = (204, b"", None)
_ENCODER = msgspec.json.Encoder()
_U32_MAX = 2**32 - 1


def json_reply(value: Any, status: int = 200) -> Reply:
    """``value`` encoded as a JSON response."""
    return status, _ENCODER.encode(value), JSON_TYPE


class HttpCall:
    """One request as a handler sees it: path parameters (still %-encoded), query, body."""

    __slots__ = ("body", "params", "query_string")

    def __init__(self, params: dict[str, str], query_string: bytes, body: Any) -> None:
        self.params = params
        self.query_string = query_string
        self.body = body

    def path(self, name: str = "agent_id") -> str:
        """A path parameter, percent-decoded (so ``svc%2Fa`` is the one id ``svc/a``)."""
        return unquote(self.params[name])

    def query(self, name: str) -> str | None:
        """A query-string parameter (the last one given), or ``None``."""
        if not self.query_string:
            return None
        return dict(parse_qsl(self.query_string.decode("latin-1"), keep_blank_values=True)).get(
            name
        )

    def query_int(self, name: str, default: int) -> int:
        """A u32 query-string parameter; anything else is a 400 ``bad_request``."""
        text = self.query(name)
        if text is None:
            return default
        if not text.isdigit() or int(text) > _U32_MAX:
            raise MalformedBodyError(f"bad request: invalid query string: {name}={text!r}")
        return int(text)


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
    handler: Callable[[HttpCall], Awaitable[Reply]]
    summary: str
    status: int = 200
    response: Any = None
    body: type[msgspec.Struct] | None = None
    query: tuple[QueryParam, ...] = ()
    errors: tuple[int, ...] = ()
    text_type: str = "text/plain; charset=utf-8"


def _int_schema(default: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": 0, "maximum": _U32_MAX, "default": default}


_LIMIT = QueryParam("limit", _int_schema(100), "page size (default 100)")
_MAX = QueryParam("max", _int_schema(100), "at most this many messages (default 100)")
_AFTER = QueryParam("after", {"type": "string"}, "exclusive agent_id cursor")
_REASON = QueryParam(
    "reason", {"type": "string", "enum": list(DEAD_LETTER_REASONS)}, "only this poison_reason"
)


class HttpHandlers:
    """The handlers; each is one store call between a decoded request and an encoded reply."""

    def __init__(self, store: MailboxStore, metrics: GatewayMetrics) -> None:
        self.store = store
        self.metrics = metrics
        self.openapi = b"{}"  # set once the endpoints exist (they describe themselves)

    async def healthz(self, call: HttpCall) -> Reply:
        return 200, b"ok", b"text/plain; charset=utf-8"

    async def metrics_text(self, call: HttpCall) -> Reply:
        return 200, self.metrics.render(), CONTENT_TYPE.encode()

    async def openapi_json(self, call: HttpCall) -> Reply:
        return 200, self.openapi, JSON_TYPE

    async def ensure(self, call: HttpCall) -> Reply:
        body: EnsureBody = call.body
        options = {k: v for k, v in msgspec.structs.asdict(body).items() if v is not None}
        if body.ordering_mode is not None:
            options["ordering_mode"] = choice(body.ordering_mode, ORDERING_MODES, "ordering_mode")
        return json_reply(mailbox_json(await self.store.ensure_mailbox(call.path(), **options)))

    async def get_mailbox(self, call: HttpCall) -> Reply:
        return json_reply(mailbox_json(await self.store.get_mailbox(call.path())))

    async def list_mailboxes(self, call: HttpCall) -> Reply:
        page = await self.store.list_mailboxes(
            limit=call.query_int("limit", 100), after=call.query("after")
        )
        return json_reply([mailbox_json(m) for m in page])

    async def stats(self, call: HttpCall) -> Reply:
        return json_reply(stats_json(await self.store.stats(call.path())))

    async def send(self, call: HttpCall) -> Reply:
        b: SendBody = call.body
        payload = decode_payload(b.payload_base64)
        sent = await self.store.send(
            call.path(), payload, sender=b.from_, headers=b.headers,
            priority=b.priority, delay_ms=b.delay_ms, ttl_ms=b.ttl_ms,
        )  # fmt: skip
        return json_reply(message_json(sent), 201)

    async def fanout(self, call: HttpCall) -> Reply:
        b: FanoutBody = call.body
        payload = decode_payload(b.payload_base64)
        sent = await self.store.fanout(
            b.targets, payload, sender=b.from_, headers=b.headers,
            priority=b.priority, delay_ms=b.delay_ms, ttl_ms=b.ttl_ms,
        )  # fmt: skip
        return json_reply(FanoutJson([message_json(m) for m in sent]), 201)

    async def peek(self, call: HttpCall) -> Reply:
        found = await self.store.peek(call.path(), max=call.query_int("max", 100))
        return json_reply([message_json(m) for m in found])

    async def claim(self, call: HttpCall) -> Reply:
        b: ClaimBody = call.body
        claim = await self.store.claim(
            call.path(), claimer=b.claimer_id, lease_duration_ms=b.lease_duration_ms
        )
        return json_reply(None if claim is None else claim_json(claim))

    async def is_committed(self, call: HttpCall) -> Reply:
        done = await self.store.is_committed(call.path(), call.path("message_id"))
        return json_reply(CommittedJson(done))

    async def commit(self, call: HttpCall) -> Reply:
        b: CommitBody = call.body
        await self.store.commit(
            call.path("message_id"), claimer=b.claimer_id,
            checkpoint_token=b.checkpoint_token, lease_token=b.lease_token,
        )  # fmt: skip
        return NO_CONTENT

    async def release(self, call: HttpCall) -> Reply:
        b: ReleaseBody = call.body
        await self.store.release(
            call.path("message_id"), claimer=b.claimer_id,
            kind=choice(b.kind, RELEASE_KINDS, "kind"), note=b.note, lease_token=b.lease_token,
        )  # fmt: skip
        return NO_CONTENT

    async def reject(self, call: HttpCall) -> Reply:
        b: RejectBody = call.body
        await self.store.reject_validation(call.path("message_id"), note=b.note)
        return NO_CONTENT

    async def dead_letters(self, call: HttpCall) -> Reply:
        reason = call.query("reason")
        records = await self.store.dead_letters(
            call.path(),
            reason=None if reason is None else choice(reason, DEAD_LETTER_REASONS, "reason"),
            limit=call.query_int("limit", 100),
        )
        return json_reply([dead_letter_json(d) for d in records])

    async def purge(self, call: HttpCall) -> Reply:
        b: PurgeBody = call.body
        count = await self.store.purge_dead_letters(call.path(), before_ms=b.before_ms)
        return json_reply(DeletedJson(count))

    async def replay(self, call: HttpCall) -> Reply:
        b: ReplayBody = call.body
        new = await self.store.replay(
            call.path("message_id"), replayed_by=b.replayed_by, target_mailbox=b.target_mailbox
        )
        return json_reply(message_json(new), 201)


def endpoints(api: HttpHandlers) -> list[Endpoint]:
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
