"""The MCP front end through the official SDK's stdio client: every tool and the resource.

Each test spawns ``dovecote serve --mcp stdio -vv`` the way an MCP client config does; the
verbose logs must all land on stderr, or the client could not parse the protocol stream.
"""

from __future__ import annotations

import base64
import json
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from gateway_kit import unique
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

RESOURCE_NOT_FOUND = -32002


@asynccontextmanager
async def session(tmp_path: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "dovecote",
            "serve",
            "--db",
            f"sqlite:///{tmp_path / 'mcp.db'}",
            "--http",
            "off",
            "--grpc",
            "off",
            "--mcp",
            "stdio",
            "--sweep-interval",
            "off",
            "-vv",
        ],
    )
    with tempfile.TemporaryFile("w+") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            yield s
        errlog.seek(0)
        assert "dovecote: mcp serving on stdio" in errlog.read()


async def call(s: ClientSession, tool: str, **arguments: Any) -> Any:
    result = await s.call_tool(tool, arguments)
    assert not result.is_error, result
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return json.loads(content.text)


async def error_code(s: ClientSession, tool: str, **arguments: Any) -> int:
    with pytest.raises(MCPError) as info:
        await s.call_tool(tool, arguments)
    return info.value.code


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_the_eleven_tools_are_listed_with_input_schemas(tmp_path: Path) -> None:
    async with session(tmp_path) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == {
            "send_message", "check_inbox", "claim_message", "commit_message",
            "release_message", "list_dead_letters", "replay_dead_letter", "fanout_message",
            "list_mailboxes", "mailbox_stats", "purge_dead_letters",
        }  # fmt: skip
        schema = tools["send_message"].input_schema
        assert set(schema["required"]) == {"to_agent", "payload_base64"}
        caps = s.server_capabilities
        assert caps is not None
        assert caps.tools is not None
        assert caps.resources is not None


async def test_send_check_claim_commit(tmp_path: Path) -> None:
    async with session(tmp_path) as s:
        box = unique()
        sent = await call(s, "send_message", to_agent=box, payload_base64=b64(b"job"))
        assert sent["sender_id"] == "mcp-client"
        assert sent["status"] == "pending"
        inbox = await call(s, "check_inbox", agent_id=box)
        assert [m["message_id"] for m in inbox["messages"]] == [sent["message_id"]]
        held = await call(s, "claim_message", agent_id=box, claimer_id="w1")
        assert held["message_id"] == sent["message_id"]
        assert held["message"]["status"] == "claimed"
        assert held["lease_expires_at_ms"] > 0
        assert await call(s, "claim_message", agent_id=box, claimer_id="w2") == {"empty": True}
        bad = await error_code(
            s, "commit_message", message_id=sent["message_id"], claimer_id="w1",
            checkpoint_token="",
        )  # fmt: skip
        assert bad == types.INVALID_PARAMS
        done = await call(
            s, "commit_message", message_id=sent["message_id"], claimer_id="w1",
            checkpoint_token="wp:1",
        )  # fmt: skip
        assert done == {"committed": True, "message_id": sent["message_id"]}
        again = await error_code(
            s, "commit_message", message_id=sent["message_id"], claimer_id="w1",
            checkpoint_token="wp:2",
        )  # fmt: skip
        assert again == types.INVALID_REQUEST


async def test_release_dead_letters_replay_purge_in_snake_case(tmp_path: Path) -> None:
    async with session(tmp_path) as s:
        box = unique()
        sent = await call(s, "send_message", to_agent=box, payload_base64=b64(b"x"))
        await call(s, "claim_message", agent_id=box, claimer_id="w1")
        released = await call(
            s, "release_message", message_id=sent["message_id"], claimer_id="w1",
            failure_kind="permanent", note="boom",
        )  # fmt: skip
        assert released == {
            "released": True, "message_id": sent["message_id"], "failure_kind": "permanent"
        }  # fmt: skip
        dead = await call(s, "list_dead_letters", mailbox_id=box)
        (record,) = dead["dead_letters"]
        assert record["poison_reason"] == "permanent_failure"
        filtered = await call(s, "list_dead_letters", mailbox_id=box, filter="expired")
        assert filtered == {"dead_letters": []}
        assert await error_code(s, "list_dead_letters", mailbox_id=box, filter="nope") == (
            types.INVALID_PARAMS
        )
        new = await call(s, "replay_dead_letter", message_id=sent["message_id"], replayed_by="ops")
        assert new["attempt_count"] == 0
        assert new["headers"]["replayed_by"] == "ops"
        purged = await call(
            s, "purge_dead_letters", mailbox_id=box, before_ms=int(time.time() * 1000) + 60_000
        )
        assert purged == {"deleted_count": 1}
        assert await call(s, "purge_dead_letters", mailbox_id=box, before_ms=-5) == {
            "deleted_count": 0
        }


async def test_fanout_list_mailboxes_stats_and_errors(tmp_path: Path) -> None:
    async with session(tmp_path) as s:
        prefix = unique("m")
        targets = [f"{prefix}-a", f"{prefix}-b", f"{prefix}-c"]
        out = await call(
            s, "fanout_message", targets=targets, from_agent="ops", payload_base64=b64(b"all")
        )
        assert [m["mailbox_id"] for m in out["messages"]] == targets
        bad = await error_code(
            s, "fanout_message", targets=["bad agent id"], from_agent="ops", payload_base64="eA=="
        )
        assert bad == types.INVALID_PARAMS
        page = await call(s, "list_mailboxes", limit=10)
        assert [m["agent_id"] for m in page["mailboxes"]] == targets
        stats = await call(s, "mailbox_stats", agent_id=targets[0])
        assert (stats["pending_count"], stats["claimed_count"]) == (1, 0)
        missing = await error_code(s, "mailbox_stats", agent_id=unique("ghost"))
        assert missing == RESOURCE_NOT_FOUND
        assert await error_code(s, "check_inbox") == types.INVALID_PARAMS  # no agent_id


async def test_the_pending_resource(tmp_path: Path) -> None:
    async with session(tmp_path) as s:
        (template,) = (await s.list_resource_templates()).resource_templates
        assert template.uri_template == "mailbox://{agent_id}/pending"
        assert template.name == "mailbox_pending"
        assert (await s.list_resources()).resources == []
        await call(s, "send_message", to_agent="alice", payload_base64=b64(b"hi"))
        result = await s.read_resource("mailbox://alice/pending")
        (contents,) = result.contents
        assert isinstance(contents, types.TextResourceContents)
        body = json.loads(contents.text)
        assert body["agent_id"] == "alice"
        assert len(body["messages"]) == 1
        with pytest.raises(MCPError, match="bad resource uri"):
            await s.read_resource("http://example.com/foo")
        with pytest.raises(MCPError, match="invalid"):
            await s.read_resource("mailbox:///pending")
