"""The gRPC front end: ``postbox.v1.PostboxService`` (all sixteen rpcs) on ``grpc.aio``.

Each rpc translates its request into one store call (zeros mean "unset", as upstream) and
the result into the upstream message. ``_rpc`` / ``_streaming_rpc`` wrap every method: they
check the bearer token and turn a typed error into a gRPC status (``_STATUS``), in one place.
``StreamClaim`` is pushed from ``store.claim_stream`` (woken by sends; no poll loop), so its
``poll_interval_ms`` is accepted and ignored.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing, suppress
from typing import Any, TypeVar, cast

import grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from dovecote.durable import (
    Claim,
    DeadLetterRecord,
    MailboxConfig,
    MailboxStore,
    StoredMessage,
    StoreError,
)
from dovecote.durable._model import (
    DEAD_LETTER_REASONS,
    MESSAGE_STATUSES,
    ORDERING_MODES,
    RELEASE_KINDS,
)
from dovecote.gateway._errors import GatewayError, ShuttingDownError, UnauthorizedError
from dovecote.gateway._metrics import GatewayMetrics
from dovecote.gateway._proto import SERVICE_NAME, load
from dovecote.gateway._wire import choice

__all__ = ["GrpcServer", "create_grpc_server"]

_STATUS = {
    "not_found": grpc.StatusCode.NOT_FOUND,
    "bad_request": grpc.StatusCode.INVALID_ARGUMENT,
    "mailbox_full": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "already_committed": grpc.StatusCode.ALREADY_EXISTS,
    "invalid_state": grpc.StatusCode.FAILED_PRECONDITION,
    "storage_error": grpc.StatusCode.INTERNAL,
    "unauthorized": grpc.StatusCode.UNAUTHENTICATED,
    "unavailable": grpc.StatusCode.UNAVAILABLE,
}
_STATUS_NUMBER = {status: i for i, status in enumerate(MESSAGE_STATUSES)}
_DEFAULT_LIMIT = 100

R = TypeVar("R")
Unary = Callable[["_Servicer", Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]
Streaming = Callable[["_Servicer", Any, grpc.aio.ServicerContext[Any, Any]], AsyncGenerator[Any]]


def _fail(exc: StoreError | GatewayError) -> tuple[grpc.StatusCode, str]:
    return _STATUS.get(exc.code, grpc.StatusCode.INVALID_ARGUMENT), str(exc)


def _rpc(method: Unary) -> Unary:
    """Auth, then the method; a typed error becomes its gRPC status."""
    name = method.__name__

    async def call(
        self: _Servicer, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Any:
        try:
            if self.expected is not None:
                self.authorize(context)
            reply = await method(self, request, context)
        except (StoreError, GatewayError) as exc:
            code, text = _fail(exc)
            self.count(name, code.name)
            await context.abort(code, text)
        self.count(name, "OK")
        return reply

    call.__name__ = name
    return call


async def _until(closing: asyncio.Event, items: AsyncGenerator[Any]) -> AsyncGenerator[Any]:
    """``items`` until ``closing`` is set; then ``ShuttingDownError`` (UNAVAILABLE).

    A stream waiting for sends would otherwise hold a graceful stop for its whole grace.
    """
    closed = asyncio.ensure_future(closing.wait())
    try:
        while True:
            step = asyncio.ensure_future(anext(items))
            await asyncio.wait((step, closed), return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                step.cancel()
                with suppress(asyncio.CancelledError, StopAsyncIteration):
                    await step
                raise ShuttingDownError("the server is shutting down; reconnect")
            try:
                item = step.result()
            except StopAsyncIteration:
                return
            yield item
    finally:
        closed.cancel()


def _streaming_rpc(method: Streaming) -> Streaming:
    """As ``_rpc`` for a server-streaming method: an error ends the stream with its status."""
    name = method.__name__

    async def call(
        self: _Servicer, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncGenerator[Any]:
        try:
            self.authorize(context)
            await context.send_initial_metadata(())  # the client sees the stream is open
            async with aclosing(method(self, request, context)) as items:
                async for item in _until(self.closing, items):
                    yield item
        except (StoreError, GatewayError) as exc:
            code, text = _fail(exc)
            self.count(name, code.name)
            await context.abort(code, text)
        self.count(name, "OK")

    call.__name__ = name
    return call


def _headers(r: Any) -> dict[str, str] | None:
    """A request's ``headers`` map; None when it has none (the store's fast path)."""
    entries = r.headers.entries if r.HasField("headers") else None
    return dict(entries) if entries else None


class _Servicer:
    """The rpcs; ``pb`` is the generated messages module."""

    def __init__(self, store: MailboxStore, metrics: GatewayMetrics, token: str | None) -> None:
        self.store = store
        self.metrics = metrics
        self.expected = None if token is None else f"Bearer {token}"  # None: no auth
        self.pb, _ = load()
        self.closing = asyncio.Event()
        # resolved once per (rpc, code): prometheus' labels() lookup costs more than inc()
        self._counters: dict[tuple[str, str], Any] = {}

    def count(self, name: str, code: str) -> None:
        """Count one answered call of rpc ``name`` with status ``code``."""
        counter = self._counters.get((name, code))
        if counter is None:
            counter = self.metrics.calls.labels("grpc", name, code)
            self._counters[name, code] = counter
        counter.inc()

    def authorize(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """The call's ``authorization`` metadata must be ``Bearer <token>`` (if a token is set)."""
        if self.expected is None:
            return
        given = dict(context.invocation_metadata() or ()).get("authorization", "")
        if not isinstance(given, str) or not hmac.compare_digest(given, self.expected):
            raise UnauthorizedError("missing or wrong authorization metadata")

    # --- conversions ------------------------------------------------------------------

    def mailbox(self, m: MailboxConfig) -> Any:
        return self.pb.Mailbox(
            agent_id=m.agent_id, capacity=m.capacity, ordering_mode=m.ordering_mode,
            max_attempts=m.max_attempts, lease_duration_ms=m.lease_duration_ms,
            max_payload_bytes=m.max_payload_bytes, dlq_retention_ms=m.dlq_retention_ms or 0,
        )  # fmt: skip

    def message(self, m: StoredMessage) -> Any:
        headers = m.headers
        return self.pb.Message(
            message_id=m.message_id, mailbox_id=m.mailbox_id, sender_id=m.sender_id,
            payload=m.payload,
            headers=self.pb.Headers(entries=headers) if headers else self.pb.Headers(),
            priority=m.priority, created_at_ms=m.created_at_ms, visible_at_ms=m.visible_at_ms,
            status=_STATUS_NUMBER[m.status], attempt_count=m.attempt_count,
            lease_expires_at_ms=m.lease_expires_at_ms or 0, claimed_by=m.claimed_by or "",
            committed_at_ms=m.committed_at_ms or 0, checkpoint_token=m.checkpoint_token or "",
            expires_at_ms=m.expires_at_ms or 0,
        )  # fmt: skip

    def claim(self, c: Claim | None) -> Any:
        if c is None:
            return self.pb.ClaimResponse()
        held = self.pb.ClaimResponseMessage(
            message=self.message(c.message), lease_expires_at_ms=c.lease_expires_at_ms
        )
        return self.pb.ClaimResponse(claim=held)

    def dead_letter(self, d: DeadLetterRecord) -> Any:
        return self.pb.DeadLetter(
            message_id=d.message_id, mailbox_id=d.mailbox_id, sender_id=d.sender_id,
            payload=d.payload, headers=self.pb.Headers(entries=dict(d.headers)),
            priority=d.priority, created_at_ms=d.created_at_ms, attempt_count=d.attempt_count,
            poison_reason=d.poison_reason, dead_lettered_at_ms=d.dead_lettered_at_ms,
        )  # fmt: skip

    # --- rpcs -------------------------------------------------------------------------

    @_rpc
    async def EnsureMailbox(self, r: Any, context: Any) -> Any:
        options: dict[str, Any] = {
            k: getattr(r, k)
            for k in ("capacity", "max_attempts", "lease_duration_ms", "max_payload_bytes",
                      "dlq_retention_ms")
            if getattr(r, k)
        }  # fmt: skip
        if r.ordering_mode:
            options["ordering_mode"] = choice(r.ordering_mode, ORDERING_MODES, "ordering_mode")
        config = await self.store.ensure_mailbox(r.agent_id, **options)
        return self.pb.EnsureMailboxResponse(mailbox=self.mailbox(config))

    @_rpc
    async def GetMailbox(self, r: Any, context: Any) -> Any:
        return self.pb.GetMailboxResponse(
            mailbox=self.mailbox(await self.store.get_mailbox(r.agent_id))
        )

    @_rpc
    async def SendMessage(self, r: Any, context: Any) -> Any:
        sent = await self.store.send(
            r.to_agent, r.payload, sender=r.from_agent, headers=_headers(r),
            priority=r.priority, delay_ms=r.delay_ms, ttl_ms=r.ttl_ms or None,
        )  # fmt: skip
        return self.pb.SendMessageResponse(message=self.message(sent))

    @_rpc
    async def Peek(self, r: Any, context: Any) -> Any:
        found = await self.store.peek(r.agent_id, max=r.max or _DEFAULT_LIMIT)
        return self.pb.PeekResponse(messages=[self.message(m) for m in found])

    @_rpc
    async def Claim(self, r: Any, context: Any) -> Any:
        claim = await self.store.claim(
            r.agent_id, claimer=r.claimer_id, lease_duration_ms=r.lease_duration_ms or None
        )
        return self.claim(claim)

    @_rpc
    async def Commit(self, r: Any, context: Any) -> Any:
        await self.store.commit(
            r.message_id, claimer=r.claimer_id, checkpoint_token=r.checkpoint_token
        )
        return self.pb.CommitResponse()

    @_rpc
    async def Release(self, r: Any, context: Any) -> Any:
        kind = choice(r.kind, RELEASE_KINDS, "kind")
        await self.store.release(r.message_id, claimer=r.claimer_id, kind=kind, note=r.note or None)
        return self.pb.ReleaseResponse()

    @_rpc
    async def RejectValidation(self, r: Any, context: Any) -> Any:
        await self.store.reject_validation(r.message_id, note=r.note)
        return self.pb.RejectValidationResponse()

    @_rpc
    async def IsCommitted(self, r: Any, context: Any) -> Any:
        done = await self.store.is_committed(r.agent_id, r.message_id)
        return self.pb.IsCommittedResponse(committed=done)

    @_rpc
    async def ListDeadLetters(self, r: Any, context: Any) -> Any:
        reason = choice(r.reason, DEAD_LETTER_REASONS, "reason") if r.reason else None
        records = await self.store.dead_letters(
            r.agent_id, reason=reason, limit=r.limit or _DEFAULT_LIMIT
        )
        return self.pb.ListDeadLettersResponse(dead_letters=[self.dead_letter(d) for d in records])

    @_rpc
    async def ReplayDeadLetter(self, r: Any, context: Any) -> Any:
        new = await self.store.replay(
            r.message_id, replayed_by=r.replayed_by, target_mailbox=r.target_mailbox or None
        )
        return self.pb.ReplayDeadLetterResponse(message=self.message(new))

    @_rpc
    async def Fanout(self, r: Any, context: Any) -> Any:
        sent = await self.store.fanout(
            list(r.targets), r.payload, sender=r.from_agent, headers=_headers(r),
            priority=r.priority, delay_ms=r.delay_ms, ttl_ms=r.ttl_ms or None,
        )  # fmt: skip
        return self.pb.FanoutSendResponse(messages=[self.message(m) for m in sent])

    @_rpc
    async def ListMailboxes(self, r: Any, context: Any) -> Any:
        page = await self.store.list_mailboxes(
            limit=r.limit or _DEFAULT_LIMIT, after=r.after or None
        )
        return self.pb.ListMailboxesResponse(mailboxes=[self.mailbox(m) for m in page])

    @_rpc
    async def GetMailboxStats(self, r: Any, context: Any) -> Any:
        s = await self.store.stats(r.agent_id)
        stats = self.pb.MailboxStats(
            agent_id=s.agent_id, pending_count=s.pending_count, claimed_count=s.claimed_count,
            committed_count=s.committed_count, dead_lettered_count=s.dead_lettered_count,
            oldest_pending_at_ms=s.oldest_pending_at_ms or 0,
        )  # fmt: skip
        return self.pb.GetMailboxStatsResponse(stats=stats)

    @_rpc
    async def PurgeDeadLetters(self, r: Any, context: Any) -> Any:
        count = await self.store.purge_dead_letters(r.agent_id, before_ms=r.before_ms)
        return self.pb.PurgeDeadLettersResponse(deleted_count=count)

    @_streaming_rpc
    async def StreamClaim(self, r: Any, context: Any) -> AsyncGenerator[Any]:
        stream = self.store.claim_stream(
            r.agent_id, claimer=r.claimer_id, lease_duration_ms=r.lease_duration_ms or None,
            max_messages=r.max_messages or None,
        )  # fmt: skip
        async with aclosing(cast(AsyncGenerator[Claim], stream)) as claims:
            async for claim in claims:
                yield self.claim(claim)


class GrpcServer:
    """A started-on-demand ``grpc.aio`` server holding ``PostboxService`` and reflection."""

    def __init__(self, server: grpc.aio.Server, servicer: _Servicer) -> None:
        self.server = server
        self._servicer = servicer

    def add_port(self, address: str) -> int:
        """Listen on ``HOST:PORT`` (insecure); returns the bound port (useful with port 0)."""
        port: int = self.server.add_insecure_port(address)
        return port

    async def start(self) -> None:
        """Start serving."""
        await self.server.start()

    async def stop(self, grace: float) -> None:
        """Refuse new calls, end open StreamClaims, let unary calls finish within ``grace``."""
        self._servicer.closing.set()
        await self.server.stop(grace)


class _GenericOnly:
    """Lets the generated ``add_*_to_server`` install its handlers as a generic handler only.

    grpc.aio's accept loop keeps one pending request per *registered* method and runs
    ``asyncio.wait`` over all of them for every call it accepts: with sixteen rpcs and
    reflection that scan cost more server CPU than our handler. Served generically, the
    loop waits on one request; the method is found by one dict lookup per generic handler.
    """

    def __init__(self, server: grpc.aio.Server) -> None:
        self._server = server

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self._server.add_generic_rpc_handlers(handlers)

    def add_registered_method_handlers(self, service: str, handlers: Any) -> None:
        """Ignored: the same handlers were added generically just before."""


def create_grpc_server(
    store: MailboxStore,
    *,
    token: str | None = None,
    max_message_bytes: int = 4 * 1024 * 1024,
    metrics: GatewayMetrics | None = None,
) -> GrpcServer:
    """``PostboxService`` over ``store`` with server reflection, ready for a port and start."""
    _, services = load()
    options = [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
    ]
    server = grpc.aio.server(options=options)
    servicer = _Servicer(store, metrics or GatewayMetrics(store.metrics), token)
    generic = _GenericOnly(server)
    services.add_PostboxServiceServicer_to_server(servicer, generic)
    # what reflection.enable_server_reflection does for a grpc.aio server, served generically
    names = (SERVICE_NAME, reflection.SERVICE_NAME)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
        reflection.aio.ReflectionServicer(names), generic
    )
    return GrpcServer(server, servicer)
