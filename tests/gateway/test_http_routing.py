"""Routing edges of the HTTP front end over a started ``dovecote serve``: HEAD, 405's
``Allow``, a trailing slash, empty and %-encoded segments, and what each counts."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from gateway_kit import Broker, unique


@pytest.fixture
def client(sqlite_broker: Broker) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sqlite_broker.http, timeout=10.0) as c:
        yield c


def test_head_on_a_get_route_answers_its_headers_without_a_body(client: httpx.Client) -> None:
    box = unique()
    client.post(f"/v1/mailboxes/{box}", json={})
    got = client.get(f"/v1/mailboxes/{box}")
    head = client.head(f"/v1/mailboxes/{box}")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == got.headers["content-length"]
    assert head.headers["content-type"] == "application/json"


def test_a_wrong_method_is_405_and_allow_lists_every_method_of_the_path(
    client: httpx.Client,
) -> None:
    r = client.put(f"/v1/mailboxes/{unique()}", json={})
    assert r.status_code == 405
    assert r.json()["error"] == "method_not_allowed"
    assert r.json()["message"].startswith("Method Not Allowed: PUT /v1/mailboxes/")
    assert set(r.headers["allow"].split(", ")) == {"POST", "GET", "HEAD"}
    r = client.request("PATCH", f"/v1/mailboxes/{unique()}/dead-letters", json={})
    assert set(r.headers["allow"].split(", ")) == {"GET", "HEAD", "DELETE"}


def test_a_trailing_slash_redirects_to_the_route_without_it(client: httpx.Client) -> None:
    r = client.get("/healthz/?x=1")
    assert r.status_code == 307
    assert r.headers["location"] == f"{str(client.base_url).rstrip('/')}/healthz?x=1"
    r = client.get("/v1/nowhere/")
    assert r.status_code == 404
    assert r.json() == {"error": "not_found", "message": "Not Found: GET /v1/nowhere/"}


def test_an_empty_segment_matches_no_route(client: httpx.Client) -> None:
    r = client.get("/v1/mailboxes//stats")
    assert r.status_code == 404
    assert r.json()["error"] == "not_found"


def test_path_parameters_are_percent_decoded_once(client: httpx.Client) -> None:
    box = f"pct%2525{unique()}"  # the id itself holds "%25"
    r = client.post(f"/v1/mailboxes/{box}", json={})
    assert r.status_code == 200
    assert r.json()["agent_id"] == box.replace("%2525", "%25")


def test_calls_are_counted_by_route_template_and_status(client: httpx.Client) -> None:
    box = unique()
    client.post(f"/v1/mailboxes/{box}/send", json={"from": "ops", "payload_base64": "eA=="})
    client.put(f"/v1/mailboxes/{box}", json={})
    client.get("/v1/nowhere")
    text = client.get("/metrics").text
    assert (
        'dovecote_gateway_calls_total{code="201",operation="POST '
        '/v1/mailboxes/{agent_id}/send",protocol="http"}'
    ) in text
    assert 'operation="PUT /v1/mailboxes/{agent_id}",protocol="http"}' in text
    assert 'dovecote_gateway_calls_total{code="404",operation="unmatched",protocol="http"}' in text
