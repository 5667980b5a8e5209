"""The MCP front end: seed 004's eleven tools and the ``mailbox://{agent_id}/pending``
resource over the official ``mcp`` SDK (low-level ``Server``, stdio transport).

Tool arguments are msgspec Structs (their JSON Schemas are the tools' input schemas, and a
call is validated against them before the store runs); results are one JSON text content
with the HTTP API's shapes and snake_case spellings. Typed errors become JSON-RPC errors
with upstream Postbox's codes (``_ERROR_CODES``), in one place. Nothing is written to stdout
but the protocol: logs go to stderr.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote

import mcp_types as types
import msgspec
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from dovecote.durable import InvalidRequestError, MailboxStore, StoreError
from dovecote.durable._model import DEAD_LETTER_REASONS, RELEASE_KINDS
from dovecote.gateway._errors import GatewayError
from dovecote.gateway._metrics import GatewayMetrics
from dovecote.gateway._wire import (
    I32,
    I64,
    U32,
    U64,
    choice,
    claim_json,
    dead_letter_json,
    decode_payload,
    mailbox_json,
    message_json,
    stats_json,
)

__all__ = ["create_mcp_server", "serve_mcp_stdio"]

RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for an unknown resource (rmcp's too)
_ERROR_CODES = {
    "not_found": RESOURCE_NOT_FOUND,
    "bad_request": types.INVALID_PARAMS,
    "mailbox_full": types.INVALID_PARAMS,
    "already_committed": types.INVALID_REQUEST,
    "invalid_state": types.INVALID_REQUEST,
    "storage_error": types.INTERNAL_ERROR,
}
_TEMPLATE = "mailbox://{agent_id}/pending"
_ENCODER = msgspec.json.Encoder()
_MAX_LINE = 64 * 1024 * 1024  # one JSON-RPC message per line; payloads are base64 in it

if TYPE_CHECKING:
    import anyio


class SendMessage(msgspec.Struct, forbid_unknown_fields=True):
    """Enqueue a message; supports priority, delay_ms, ttl_ms."""

    to_agent: str
    payload_base64: str
    from_agent: str = "mcp-client"
    headers: dict[str, str] | None = None
    priority: I32 = 0
    delay_ms: U64 = 0
    ttl_ms: U64 | None = None


class CheckInbox(msgspec.Struct, forbid_unknown_fields=True):
    """Peek at visible messages without claiming."""

    agent_id: str
    max: U32 = 100


class ClaimMessage(msgspec.Struct, forbid_unknown_fields=True):
    """Claim the next visible message under a lease (default: the mailbox's lease)."""

    agent_id: str
    claimer_id: str
    lease_duration_ms: U64 | None = None


class CommitMessage(msgspec.Struct, forbid_unknown_fields=True):
    """Commit a claimed message (requires a non-empty checkpoint token)."""

    message_id: str
    claimer_id: str
    checkpoint_token: str
    lease_token: str | None = None


class ReleaseMessage(msgspec.Struct, forbid_unknown_fields=True):
    """Release a claimed message: transient (back to pending) or permanent (dead letter)."""

    message_id: str
    claimer_id: str
    failure_kind: str
    note: str | None = None
    lease_token: str | None = None


class ListDeadLetters(msgspec.Struct, forbid_unknown_fields=True):
    """List a mailbox's dead letters, oldest first, optionally of one reason."""

    mailbox_id: str
    filter: str | None = None
    limit: U32 = 100


class ReplayDeadLetter(msgspec.Struct, forbid_unknown_fields=True):
    """Re-inject a dead-lettered message as a new message with attempt_count 0."""

    message_id: str
    replayed_by: str
    target_mailbox: str | None = None


class FanoutMessage(msgspec.Struct, forbid_unknown_fields=True):
    """Atomically send one message to multiple mailboxes."""

    targets: list[str]
    from_agent: str
    payload_base64: str
    headers: dict[str, str] | None = None
    priority: I32 = 0
    delay_ms: U64 = 0
    ttl_ms: U64 | None = None


class ListMailboxes(msgspec.Struct, forbid_unknown_fields=True):
    """Cursor-paginated list of all mailboxes."""

    limit: U32 = 100
    after: str | None = None


class MailboxStats(msgspec.Struct, forbid_unknown_fields=True):
    """Per-mailbox counters and oldest-pending timestamp."""

    agent_id: str


class PurgeDeadLetters(msgspec.Struct, forbid_unknown_fields=True):
    """Operator-triggered purge of dead letters older than before_ms (negative → 0)."""

    mailbox_id: str
    before_ms: I64


class _Tools:
    """One method per tool, each a single store call; returns the JSON-able result."""

    def __init__(self, store: MailboxStore) -> None:
        self.store = store

    async def send_message(self, a: SendMessage) -> Any:
        sent = await self.store.send(
            a.to_agent, decode_payload(a.payload_base64), sender=a.from_agent,
            headers=a.headers, priority=a.priority, delay_ms=a.delay_ms, ttl_ms=a.ttl_ms,
        )  # fmt: skip
        return message_json(sent)

    async def check_inbox(self, a: CheckInbox) -> Any:
        return {"messages": [message_json(m) for m in await self.store.peek(a.agent_id, max=a.max)]}

    async def claim_message(self, a: ClaimMessage) -> Any:
        claim = await self.store.claim(
            a.agent_id, claimer=a.claimer_id, lease_duration_ms=a.lease_duration_ms
        )
        if claim is None:
            return {"empty": True}
        held = claim_json(claim)
        return {
            "message_id": claim.message.message_id,
            "lease_expires_at_ms": held.lease_expires_at_ms,
            "lease_token": held.lease_token,
            "message": held.message,
        }

    async def commit_message(self, a: CommitMessage) -> Any:
        await self.store.commit(
            a.message_id, claimer=a.claimer_id, checkpoint_token=a.checkpoint_token,
            lease_token=a.lease_token,
        )  # fmt: skip
        return {"committed": True, "message_id": a.message_id}

    async def release_message(self, a: ReleaseMessage) -> Any:
        kind = choice(a.failure_kind, RELEASE_KINDS, "failure_kind")
        await self.store.release(
            a.message_id, claimer=a.claimer_id, kind=kind, note=a.note, lease_token=a.lease_token
        )
        return {"released": True, "message_id": a.message_id, "failure_kind": kind}

    async def list_dead_letters(self, a: ListDeadLetters) -> Any:
        reason = None if a.filter is None else choice(a.filter, DEAD_LETTER_REASONS, "filter")
        records = await self.store.dead_letters(a.mailbox_id, reason=reason, limit=a.limit)
        return {"dead_letters": [dead_letter_json(d) for d in records]}

    async def replay_dead_letter(self, a: ReplayDeadLetter) -> Any:
        new = await self.store.replay(
            a.message_id, replayed_by=a.replayed_by, target_mailbox=a.target_mailbox
        )
        return message_json(new)

    async def fanout_message(self, a: FanoutMessage) -> Any:
        sent = await self.store.fanout(
            a.targets, decode_payload(a.payload_base64), sender=a.from_agent,
            headers=a.headers, priority=a.priority, delay_ms=a.delay_ms, ttl_ms=a.ttl_ms,
        )  # fmt: skip
        return {"messages": [message_json(m) for m in sent]}

    async def list_mailboxes(self, a: ListMailboxes) -> Any:
        page = await self.store.list_mailboxes(limit=a.limit, after=a.after)
        return {"mailboxes": [mailbox_json(m) for m in page]}

    async def mailbox_stats(self, a: MailboxStats) -> Any:
        return stats_json(await self.store.stats(a.agent_id))

    async def purge_dead_letters(self, a: PurgeDeadLetters) -> Any:
        count = await self.store.purge_dead_letters(a.mailbox_id, before_ms=max(0, a.before_ms))
        return {"deleted_count": count}

    async def pending(self, uri: str) -> Any:
        """The ``mailbox://{agent_id}/pending`` resource."""
        prefix, suffix = "mailbox://", "/pending"
        if not (uri.startswith(prefix) and uri.endswith(suffix)):
            raise InvalidRequestError(f"bad resource uri: {uri} (expected {_TEMPLATE})")
        agent_id = unquote(uri[len(prefix) : -len(suffix)])
        found = await self.store.peek(agent_id, max=1000)
        return {"agent_id": agent_id, "messages": [message_json(m) for m in found]}


#: tool name → its arguments Struct (the docstring is the tool's description)
TOOLS: dict[str, type[msgspec.Struct]] = {
    "send_message": SendMessage,
    "check_inbox": CheckInbox,
    "claim_message": ClaimMessage,
    "commit_message": CommitMessage,
    "release_message": ReleaseMessage,
    "list_dead_letters": ListDeadLetters,
    "replay_dead_letter": ReplayDeadLetter,
    "fanout_message": FanoutMessage,
    "list_mailboxes": ListMailboxes,
    "mailbox_stats": MailboxStats,
    "purge_dead_letters": PurgeDeadLetters,
}


def _input_schema(args: type[msgspec.Struct]) -> dict[str, Any]:
    _, components = msgspec.json.schema_components([args], ref_template="#/$defs/{name}")
    schema = dict(components.pop(args.__name__))
    schema.pop("title", None)
    if components:
        schema["$defs"] = components
    return schema


async def _translated(call: Awaitable[Any]) -> Any:
    """Await a tool or resource call; typed errors become JSON-RPC errors (upstream's codes)."""
    try:
        return await call
    except (StoreError, GatewayError) as exc:
        raise MCPError(_ERROR_CODES.get(exc.code, types.INVALID_PARAMS), str(exc)) from None


def create_mcp_server(store: MailboxStore, *, metrics: GatewayMetrics | None = None) -> Server[Any]:
    """The MCP server over ``store``; run it with ``serve_mcp_stdio`` or any MCP transport."""
    tools = _Tools(store)
    counted = metrics or GatewayMetrics(store.metrics)
    listed = [
        types.Tool(
            name=name, description=(args.__doc__ or "").strip(), input_schema=_input_schema(args)
        )
        for name, args in TOOLS.items()
    ]
    template = types.ResourceTemplate(
        name="mailbox_pending",
        uri_template=_TEMPLATE,
        description="Visible (pending) messages for an agent. Returns a JSON document.",
        mime_type="application/json",
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        kind = TOOLS.get(params.name)
        if kind is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool: {params.name}")
        try:
            args = msgspec.convert(params.arguments or {}, type=kind)
        except msgspec.ValidationError as exc:
            counted.count("mcp", params.name, "invalid_params")
            raise MCPError(types.INVALID_PARAMS, f"invalid arguments: {exc}") from None
        method: Callable[[Any], Awaitable[Any]] = getattr(tools, params.name)
        try:
            result = await _translated(method(args))
        except MCPError as exc:
            counted.count("mcp", params.name, str(exc.code))
            raise
        counted.count("mcp", params.name, "ok")
        text = _ENCODER.encode(result).decode()
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[])

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        body = _ENCODER.encode(await _translated(tools.pending(uri))).decode()
        contents = types.TextResourceContents(uri=uri, mime_type="application/json", text=body)
        return types.ReadResourceResult(contents=[contents])

    return Server(
        "dovecote",
        version="0.1.0",
        instructions="A Postbox-compatible mailbox broker: use the 11 tools to send, claim, "
        "commit and release messages and to inspect dead letters; read "
        "mailbox://{agent_id}/pending for an inbox.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


class _PipeLines:
    """stdin as async text lines, read by the event loop (so a shutdown can cancel it).

    The SDK's default reads stdin in a worker thread, which a cancelled server waits on
    until the client writes or closes the pipe; SIGTERM must not depend on the client.
    """

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


async def _stdin_lines() -> tuple[_PipeLines, asyncio.BaseTransport] | None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_MAX_LINE)
    pipe = os.fdopen(os.dup(0), "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
    except (ValueError, OSError):  # not a pipe (a file, a tty): the SDK's reader will do
        pipe.close()
        return None
    return _PipeLines(reader), transport


async def serve_mcp_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin/stdout until the client closes stdin.

    While it serves, stray writes to fd 1 are diverted to stderr by the SDK, so nothing but
    the protocol reaches stdout.
    """
    lines = await _stdin_lines()
    try:
        stdin = cast("anyio.AsyncFile[str] | None", None if lines is None else lines[0])
        async with stdio_server(stdin=stdin) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        if lines is not None:
            lines[1].close()
