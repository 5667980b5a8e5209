"""The HTTP API over a started ``dovecote serve``, with httpx, on SQLite and PostgreSQL.

Upstream Postbox's wire tests (seed 004 §5 items 59-72) plus the error bodies, statuses and
edge checks of postbox-upstream.md §2.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from gateway_kit import Broker, unique


@pytest.fixture
def client(broker: Broker) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=broker.http, timeout=10.0) as c:
        yield c


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def send(client: httpx.Client, box: str, data: bytes = b"hi", **extra: Any) -> dict[str, Any]:
    r = client.post(
        f"/v1/mailboxes/{box}/send", json={"from": "ops", "payload_base64": b64(data), **extra}
    )
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def claim(client: httpx.Client, box: str, claimer: str = "w1") -> dict[str, Any] | None:
    r = client.post(f"/v1/mailboxes/{box}/claim", json={"claimer_id": claimer})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def assert_error(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert body["error"] == code
    assert isinstance(body["message"], str)
    assert body["message"]


def test_healthz_answers_ok_as_text(client: httpx.Client) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.text == "ok"


def test_ensure_answers_200_with_the_mailbox_and_is_create_only(client: httpx.Client) -> None:
    box = unique()
    r = client.post(f"/v1/mailboxes/{box}", json={"capacity": 100, "max_attempts": 3})
    assert r.status_code == 200
    assert r.json() == {
        "agent_id": box, "capacity": 100, "ordering_mode": "fifo", "max_attempts": 3,
        "lease_duration_ms": 60_000, "max_payload_bytes": 1_048_576, "dlq_retention_ms": None,
    }  # fmt: skip
    again = client.post(f"/v1/mailboxes/{box}", json={"capacity": 7})
    assert again.json()["capacity"] == 100
    assert client.get(f"/v1/mailboxes/{box}").json() == r.json()


def test_ensure_with_priority_ordering_is_echoed_by_get(client: httpx.Client) -> None:
    box = unique()
    r = client.post(f"/v1/mailboxes/{box}", json={"ordering_mode": "priority"})
    assert r.json()["ordering_mode"] == "priority"
    assert client.get(f"/v1/mailboxes/{box}").json()["ordering_mode"] == "priority"


def test_full_lifecycle_send_peek_claim_commit_is_committed(client: httpx.Client) -> None:
    box = unique()
    sent = send(client, box, b"job", headers={"trace": "abc"})
    assert list(sent) == [
        "message_id", "mailbox_id", "sender_id", "payload_base64", "headers", "priority",
        "created_at_ms", "visible_at_ms", "status", "attempt_count", "lease_expires_at_ms",
        "claimed_by", "committed_at_ms", "checkpoint_token", "expires_at_ms",
    ]  # fmt: skip
    assert sent["status"] == "pending"
    assert sent["headers"] == {"trace": "abc"}
    assert len(client.get(f"/v1/mailboxes/{box}/peek", params={"max": 10}).json()) == 1
    r = client.post(
        f"/v1/mailboxes/{box}/claim", json={"claimer_id": "worker-1", "lease_duration_ms": 30000}
    )
    held = r.json()
    assert held["message"]["message_id"] == sent["message_id"]
    assert held["message"]["status"] == "claimed"
    assert held["message"]["attempt_count"] == 1
    assert held["message"]["claimed_by"] == "worker-1"
    assert held["lease_expires_at_ms"] == held["message"]["lease_expires_at_ms"]
    assert client.get(f"/v1/mailboxes/{box}/peek").json() == []
    mid = sent["message_id"]
    committed = f"/v1/mailboxes/{box}/committed/{mid}"
    assert client.get(committed).json() == {"committed": False}
    r = client.post(
        f"/v1/messages/{mid}/commit",
        json={"claimer_id": "worker-1", "checkpoint_token": "waitpoint:abc:42"},
    )
    assert r.status_code == 204
    assert r.content == b""
    assert client.get(committed).json() == {"committed": True}
    assert client.get(f"/v1/mailboxes/{unique()}/committed/{mid}").json() == {"committed": False}
    again = client.post(
        f"/v1/messages/{mid}/commit", json={"claimer_id": "worker-1", "checkpoint_token": "t2"}
    )
    assert_error(again, 409, "already_committed")


def test_claim_on_an_empty_mailbox_answers_json_null(client: httpx.Client) -> None:
    box = unique()
    client.post(f"/v1/mailboxes/{box}", json={})
    r = client.post(f"/v1/mailboxes/{box}/claim", json={"claimer_id": "w"})
    assert r.status_code == 200
    assert r.content == b"null"


def test_commit_with_an_empty_token_is_400(client: httpx.Client) -> None:
    box = unique()
    send(client, box)
    held = claim(client, box)
    assert held is not None
    r = client.post(
        f"/v1/messages/{held['message']['message_id']}/commit",
        json={"claimer_id": "w1", "checkpoint_token": ""},
    )
    assert_error(r, 400, "bad_request")


def test_commit_by_another_claimer_is_422_invalid_state(client: httpx.Client) -> None:
    box = unique()
    send(client, box)
    held = claim(client, box, "owner")
    assert held is not None
    r = client.post(
        f"/v1/messages/{held['message']['message_id']}/commit",
        json={"claimer_id": "imposter", "checkpoint_token": "t"},
    )
    assert_error(r, 422, "invalid_state")


def test_lease_token_from_the_claim_fences_the_commit(client: httpx.Client) -> None:
    box = unique()
    send(client, box)
    held = claim(client, box)
    assert held is not None
    mid = held["message"]["message_id"]
    wrong = client.post(
        f"/v1/messages/{mid}/commit",
        json={
            "claimer_id": "w1",
            "checkpoint_token": "t",
            "lease_token": "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        },
    )
    assert wrong.status_code in (409, 422), wrong.text
    ok = client.post(
        f"/v1/messages/{mid}/commit",
        json={"claimer_id": "w1", "checkpoint_token": "t", "lease_token": held["lease_token"]},
    )
    assert ok.status_code == 204, ok.text


def test_unknown_mailbox_is_404_not_found(client: httpx.Client) -> None:
    box = unique("ghost")
    for r in (
        client.get(f"/v1/mailboxes/{box}"),
        client.get(f"/v1/mailboxes/{box}/stats"),
        client.get(f"/v1/mailboxes/{box}/peek"),
        client.post(f"/v1/mailboxes/{box}/claim", json={"claimer_id": "w"}),
    ):
        assert_error(r, 404, "not_found")
    assert client.get(f"/v1/mailboxes/{box}/dead-letters").json() == []


def test_unknown_message_is_404_and_a_malformed_id_is_400(client: httpx.Client) -> None:
    r = client.post(
        "/v1/messages/01ARZ3NDEKTSV4RRFFQ69G5FAV/commit",
        json={"claimer_id": "w", "checkpoint_token": "t"},
    )
    assert_error(r, 404, "not_found")
    r = client.post(
        "/v1/messages/not-a-ulid/release", json={"claimer_id": "w", "kind": "transient"}
    )
    assert_error(r, 400, "bad_request")


def test_permanent_release_dead_letters_and_replay_makes_a_new_message(
    client: httpx.Client,
) -> None:
    box = unique()
    sent = send(client, box, b"poison", priority=3)
    held = claim(client, box)
    assert held is not None
    mid = sent["message_id"]
    r = client.post(
        f"/v1/messages/{mid}/release",
        json={"claimer_id": "w1", "kind": "permanent", "note": "boom"},
    )
    assert r.status_code == 204
    (dead,) = client.get(f"/v1/mailboxes/{box}/dead-letters").json()
    assert dead["message_id"] == mid
    assert dead["poison_reason"] == "permanent_failure"
    assert dead["payload_base64"] == b64(b"poison")
    assert dead["priority"] == 3
    (failure,) = dead["failure_history"]
    assert failure["failure_kind"] == "permanent"
    assert failure["note"] == "boom"
    assert failure["claimed_by"] == "w1"
    assert (
        client.get(f"/v1/mailboxes/{box}/dead-letters", params={"reason": "expired"}).json() == []
    )
    r = client.post(f"/v1/dead-letters/{mid}/replay", json={"replayed_by": "ops"})
    assert r.status_code == 201
    new = r.json()
    assert new["message_id"] != mid
    assert new["attempt_count"] == 0
    assert new["headers"]["replayed_from"] == mid
    assert new["headers"]["replayed_by"] == "ops"
    assert len(client.get(f"/v1/mailboxes/{box}/dead-letters").json()) == 1


def test_transient_release_returns_the_message_to_pending(client: httpx.Client) -> None:
    box = unique()
    sent = send(client, box)
    claim(client, box)
    r = client.post(
        f"/v1/messages/{sent['message_id']}/release", json={"claimer_id": "w1", "kind": "transient"}
    )
    assert r.status_code == 204
    (back,) = client.get(f"/v1/mailboxes/{box}/peek").json()
    assert back["status"] == "pending"
    assert back["attempt_count"] == 1


def test_reject_validation_of_a_pending_message_dead_letters_it(client: httpx.Client) -> None:
    box = unique()
    sent = send(client, box)
    r = client.post(
        f"/v1/messages/{sent['message_id']}/reject-validation", json={"note": "bad schema"}
    )
    assert r.status_code == 204
    (dead,) = client.get(
        f"/v1/mailboxes/{box}/dead-letters", params={"reason": "validation_failed"}
    ).json()
    assert dead["message_id"] == sent["message_id"]


def test_ttl_sets_expires_at(client: httpx.Client) -> None:
    sent = send(client, unique(), ttl_ms=5000)
    assert sent["expires_at_ms"] == sent["created_at_ms"] + 5000


def test_fanout_sends_one_message_per_target(client: httpx.Client) -> None:
    targets = [unique("a"), unique("b"), unique("c")]
    r = client.post(
        "/v1/fanout", json={"from": "ops", "targets": targets, "payload_base64": "YnJvYWRjYXN0"}
    )
    assert r.status_code == 201
    messages = r.json()["messages"]
    assert [m["mailbox_id"] for m in messages] == targets
    assert len({m["message_id"] for m in messages}) == 3
    for t in targets:
        assert len(client.get(f"/v1/mailboxes/{t}/peek").json()) == 1


def test_fanout_to_a_full_mailbox_sends_nothing_and_is_503(client: httpx.Client) -> None:
    full, other = unique(), unique()
    client.post(f"/v1/mailboxes/{full}", json={"capacity": 1})
    send(client, full)
    r = client.post(
        "/v1/fanout", json={"from": "ops", "targets": [other, full], "payload_base64": "eA=="}
    )
    assert_error(r, 503, "mailbox_full")
    assert client.get(f"/v1/mailboxes/{other}/peek").status_code in (200, 404)
    peeked = client.get(f"/v1/mailboxes/{other}/peek")
    assert peeked.status_code == 404 or peeked.json() == []


def test_payload_over_the_mailbox_cap_is_400(client: httpx.Client) -> None:
    box = unique()
    client.post(f"/v1/mailboxes/{box}", json={"max_payload_bytes": 64})
    send(client, box, b"x" * 64)
    r = client.post(
        f"/v1/mailboxes/{box}/send", json={"from": "ops", "payload_base64": b64(b"x" * 65)}
    )
    assert_error(r, 400, "bad_request")


def test_list_mailboxes_pages_by_agent_id_with_an_exclusive_cursor(client: httpx.Client) -> None:
    prefix = unique("list")
    for name in ("charlie", "alpha", "bravo"):
        client.post(f"/v1/mailboxes/{prefix}-{name}", json={})
    page = client.get("/v1/mailboxes", params={"limit": 2, "after": f"{prefix}-"}).json()
    assert [m["agent_id"] for m in page] == [f"{prefix}-alpha", f"{prefix}-bravo"]
    page = client.get("/v1/mailboxes", params={"limit": 1, "after": f"{prefix}-bravo"}).json()
    assert [m["agent_id"] for m in page] == [f"{prefix}-charlie"]


def test_stats_count_pending_claimed_and_committed(client: httpx.Client) -> None:
    box = unique()
    send(client, box)
    send(client, box)
    stats = client.get(f"/v1/mailboxes/{box}/stats").json()
    assert stats["agent_id"] == box
    assert (stats["pending_count"], stats["claimed_count"], stats["committed_count"]) == (2, 0, 0)
    assert stats["dead_lettered_count"] == 0
    assert isinstance(stats["oldest_pending_at_ms"], int)


def test_purge_deletes_dead_letters_before_the_cutoff(client: httpx.Client) -> None:
    box = unique()
    sent = send(client, box)
    claim(client, box)
    client.post(
        f"/v1/messages/{sent['message_id']}/release", json={"claimer_id": "w1", "kind": "permanent"}
    )
    early = client.request("DELETE", f"/v1/mailboxes/{box}/dead-letters", json={"before_ms": 0})
    assert early.json() == {"deleted_count": 0}
    cutoff = int(time.time() * 1000) + 60_000
    r = client.request("DELETE", f"/v1/mailboxes/{box}/dead-letters", json={"before_ms": cutoff})
    assert r.status_code == 200
    assert r.json() == {"deleted_count": 1}


def test_metrics_expose_the_postbox_counters_and_the_runtime(client: httpx.Client) -> None:
    box = unique()
    send(client, box)
    claim(client, box)
    r = client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    assert f'postbox_messages_sent_total{{mailbox_id="{box}"}} 1.0' in r.text
    assert f'postbox_messages_claimed_total{{mailbox_id="{box}"}} 1.0' in r.text
    assert "process_cpu_seconds_total" in r.text
    assert "dovecote_gateway_calls_total" in r.text


def test_an_agent_id_with_a_slash_travels_percent_encoded(client: httpx.Client) -> None:
    box = f"svc/{unique()}.api"
    r = client.post(
        f"/v1/mailboxes/{quote(box, safe='')}/send", json={"from": "ops", "payload_base64": "eA=="}
    )
    assert r.status_code == 201
    assert r.json()["mailbox_id"] == box
    assert client.get(f"/v1/mailboxes/{quote(box, safe='')}").json()["agent_id"] == box


def test_invalid_agent_ids_are_400(client: httpx.Client) -> None:
    for bad in ("has%20space", "tab%09", "x" * 300):
        r = client.post(f"/v1/mailboxes/{bad}/send", json={"from": "ops", "payload_base64": "eA=="})
        assert_error(r, 400, "bad_request")
    r = client.post(
        f"/v1/mailboxes/{unique()}/send", json={"from": "bad sender", "payload_base64": "eA=="}
    )
    assert_error(r, 400, "bad_request")


_JSON_CT = {"content-type": "application/json"}
_OK_BODY = b'{"from": "ops", "payload_base64": "eA=="}'


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        (b'{"payload_base64": "eA=="}', _JSON_CT, 422, "unprocessable_entity"),
        (b'{"from": 5, "payload_base64": "eA=="}', _JSON_CT, 422, "unprocessable_entity"),
        (_OK_BODY[:-1] + b', "priority": 2147483648}', _JSON_CT, 422, "unprocessable_entity"),
        (_OK_BODY[:-1], _JSON_CT, 400, "bad_request"),
        (b"not json", _JSON_CT, 400, "bad_request"),
        (b'{"from": "ops", "payload_base64": "!!"}', _JSON_CT, 400, "bad_request"),
        (_OK_BODY, {"content-type": "text/plain"}, 415, "unsupported_media_type"),
        (_OK_BODY, {}, 415, "unsupported_media_type"),
    ],
)
def test_malformed_requests_get_the_json_error_body(
    client: httpx.Client, body: bytes, headers: dict[str, str], status: int, code: str
) -> None:
    r = client.post(f"/v1/mailboxes/{unique()}/send", content=body, headers=headers)
    assert_error(r, status, code)


def test_missing_required_fields_on_every_body_route_are_422(client: httpx.Client) -> None:
    mid = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    box = unique()
    for method, path in [
        ("POST", f"/v1/mailboxes/{box}/claim"), ("POST", f"/v1/messages/{mid}/commit"),
        ("POST", f"/v1/messages/{mid}/release"), ("POST", f"/v1/messages/{mid}/reject-validation"),
        ("POST", f"/v1/dead-letters/{mid}/replay"), ("DELETE", f"/v1/mailboxes/{box}/dead-letters"),
        ("POST", "/v1/fanout"),
    ]:  # fmt: skip
        assert_error(client.request(method, path, json={}), 422, "unprocessable_entity")


def test_bad_query_strings_unknown_kinds_and_reasons_are_400(client: httpx.Client) -> None:
    box = unique()
    client.post(f"/v1/mailboxes/{box}", json={})
    assert_error(client.get(f"/v1/mailboxes/{box}/peek", params={"max": "abc"}), 400, "bad_request")
    assert_error(client.get("/v1/mailboxes", params={"limit": "-1"}), 400, "bad_request")
    assert_error(
        client.get(f"/v1/mailboxes/{box}/dead-letters", params={"reason": "nope"}),
        400,
        "bad_request",
    )
    r = client.post(
        "/v1/messages/01ARZ3NDEKTSV4RRFFQ69G5FAV/release", json={"claimer_id": "w", "kind": "foo"}
    )
    assert_error(r, 400, "bad_request")
    assert_error(
        client.post(f"/v1/mailboxes/{unique()}", json={"ordering_mode": "lifo"}), 400, "bad_request"
    )


def test_unknown_routes_and_methods_get_json_404_and_405(client: httpx.Client) -> None:
    assert_error(client.get("/v1/nowhere"), 404, "not_found")
    assert_error(client.put(f"/v1/mailboxes/{unique()}", json={}), 405, "method_not_allowed")


def test_the_capacity_check_answers_503_mailbox_full(client: httpx.Client) -> None:
    box = unique()
    client.post(f"/v1/mailboxes/{box}", json={"capacity": 1})
    send(client, box)
    r = client.post(f"/v1/mailboxes/{box}/send", json={"from": "other", "payload_base64": "eA=="})
    assert_error(r, 503, "mailbox_full")


def test_openapi_lists_every_route(client: httpx.Client) -> None:
    doc = client.get("/openapi.json").json()
    routes = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert routes == {
        ("GET", "/healthz"), ("GET", "/metrics"), ("GET", "/openapi.json"),
        ("GET", "/v1/mailboxes"), ("POST", "/v1/mailboxes/{agent_id}"),
        ("GET", "/v1/mailboxes/{agent_id}"), ("GET", "/v1/mailboxes/{agent_id}/stats"),
        ("POST", "/v1/mailboxes/{agent_id}/send"), ("POST", "/v1/fanout"),
        ("GET", "/v1/mailboxes/{agent_id}/peek"), ("POST", "/v1/mailboxes/{agent_id}/claim"),
        ("GET", "/v1/mailboxes/{agent_id}/committed/{message_id}"),
        ("POST", "/v1/messages/{message_id}/commit"), ("POST", "/v1/messages/{message_id}/release"),
        ("POST", "/v1/messages/{message_id}/reject-validation"),
        ("GET", "/v1/mailboxes/{agent_id}/dead-letters"),
        ("DELETE", "/v1/mailboxes/{agent_id}/dead-letters"),
        ("POST", "/v1/dead-letters/{message_id}/replay"),
    }  # fmt: skip
