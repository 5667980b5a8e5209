"""The HTTP front end: seed 004's REST API as one small ASGI app (served by uvicorn).

The app is raw ASGI on purpose: under load, Starlette's router (a regex per route, tried in
order), its middleware stack and its ``Request`` / ``Response`` objects cost more server
CPU per request than the store call they wrap. Here a request is routed by its path's
shape (one dict lookup), checked (bearer token, content type, size cap), its body decoded
straight into the endpoint's msgspec Struct, and the handler's ``Reply`` written as two
ASGI messages. Every failure, the store's typed errors, the edge's ``GatewayError``s,
msgspec's decode and validation errors and unknown routes or methods alike, becomes
``{"error": code, "message": text}`` in ``_error_reply``, the one place errors are
translated. The endpoint table itself is in ``_http_endpoints``.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import msgspec

from dovecote.durable import MailboxStore, StoreError
from dovecote.gateway._errors import (
    GatewayError,
    RequestTooLargeError,
    UnauthorizedError,
    UnsupportedMediaTypeError,
)
from dovecote.gateway._http_endpoints import (
    JSON_TYPE,
    Endpoint,
    HttpCall,
    HttpHandlers,
    Reply,
    endpoints,
    json_reply,
)
from dovecote.gateway._metrics import GatewayMetrics
from dovecote.gateway._wire import ErrorJson
from dovecote.observability import get_logger

__all__ = ["HttpApp", "create_http_app"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

_log = get_logger("dovecote.gateway.http")
_UNPROTECTED = frozenset({"/healthz"})
_PARAM = "{}"  # a path parameter's place in a route's shape


def create_http_app(
    store: MailboxStore,
    *,
    token: str | None = None,
    max_body_bytes: int = 2 * 1024 * 1024,
    metrics: GatewayMetrics | None = None,
) -> HttpApp:
    """The HTTP API over ``store`` as an ASGI app (serve it with uvicorn or any ASGI server)."""
    from dovecote.gateway._openapi import openapi_document

    gateway_metrics = metrics or GatewayMetrics(store.metrics)
    handlers = HttpHandlers(store, gateway_metrics)
    table = endpoints(handlers)
    handlers.openapi = msgspec.json.encode(openapi_document(table))
    return HttpApp(table, token=token, max_body_bytes=max_body_bytes, metrics=gateway_metrics)


class _Route:
    """One path template and the endpoints behind it, by method (GET also answers HEAD)."""

    __slots__ = ("allow", "methods", "params", "template")

    def __init__(self, template: str) -> None:
        self.template = template
        segments = template.split("/")
        self.params = tuple((s[1:-1], i) for i, s in enumerate(segments) if s.startswith("{"))
        self.methods: dict[str, Endpoint] = {}
        self.allow = b""

    def add(self, endpoint: Endpoint) -> None:
        self.methods[endpoint.method] = endpoint
        if endpoint.method == "GET":
            self.methods["HEAD"] = endpoint
        self.allow = ", ".join(self.methods).encode()


class _Router:
    """Routes a raw path by its shape: split on ``/``, a parameter is any non-empty segment.

    Routing on the raw, still %-encoded path keeps an agent id holding ``/`` (sent as
    ``%2F``) one segment; handlers percent-decode the parameters they read.
    """

    def __init__(self, table: list[Endpoint]) -> None:
        routes: dict[str, _Route] = {}
        # by segment count: (parameter positions, {shape: route}) in table order
        self._shapes: dict[int, list[tuple[tuple[int, ...], dict[tuple[str, ...], _Route]]]] = {}
        for e in table:
            route = routes.get(e.path)
            if route is None:
                route = routes[e.path] = _Route(e.path)
                segments = e.path.split("/")
                positions = tuple(i for _, i in route.params)
                shape = tuple(_PARAM if i in positions else s for i, s in enumerate(segments))
                by_length = self._shapes.setdefault(len(segments), [])
                for known, shapes in by_length:
                    if known == positions:
                        shapes.setdefault(shape, route)  # the first of a shape wins
                        break
                else:
                    by_length.append((positions, {shape: route}))
            route.add(e)

    def match(self, path: str) -> tuple[_Route, dict[str, str]] | None:
        """The route of ``path`` and its (still %-encoded) parameters, or ``None``."""
        segments = path.split("/")
        for positions, shapes in self._shapes.get(len(segments), ()):
            shape = segments.copy()
            for i in positions:
                if not segments[i]:
                    break
                shape[i] = _PARAM
            else:
                route = shapes.get(tuple(shape))
                if route is not None:
                    return route, {name: segments[i] for name, i in route.params}
        return None


class _RouteError(Exception):
    """No route (404) or no such method on the route (405, with its ``Allow`` header)."""

    def __init__(self, status: int, allow: bytes = b"") -> None:
        super().__init__(HTTPStatus(status).phrase)
        self.status = status
        self.allow = allow


class _Disconnected(Exception):
    """The client went away before its body arrived: nobody to answer."""


class HttpApp:
    """The ASGI app: bearer token, routing, body decoding, the handler, the reply, a count."""

    def __init__(
        self,
        table: list[Endpoint],
        *,
        token: str | None,
        max_body_bytes: int,
        metrics: GatewayMetrics,
    ) -> None:
        self._router = _Router(table)
        self._expected = None if token is None else f"Bearer {token}".encode()
        self._cap = max_body_bytes
        self._metrics = metrics
        self._counters: dict[tuple[str, int], Any] = {}
        self._decoders = {e.body: msgspec.json.Decoder(e.body) for e in table if e.body}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1000})
            return
        raw = scope.get("raw_path")
        path = raw.decode("latin-1") if raw else scope["path"]
        method = scope["method"]
        operation = "unmatched"
        headers: Headers = []
        try:
            if self._expected is not None and path not in _UNPROTECTED:
                given = _header(scope, b"authorization")
                if not hmac.compare_digest(given or b"", self._expected):
                    operation = "unauthorized"
                    raise UnauthorizedError("missing or wrong bearer token")
            found = self._router.match(path)
            if found is None:
                status, payload, media = self._not_found(scope, path, headers)
            else:
                route, params = found
                operation = f"{method} {route.template}"
                endpoint = route.methods.get(method)
                if endpoint is None:
                    raise _RouteError(405, route.allow)
                body = None
                if endpoint.body is not None:
                    body = self._decoders[endpoint.body].decode(await self._body(scope, receive))
                call = HttpCall(params, scope["query_string"], body)
                status, payload, media = await endpoint.handler(call)
        except _Disconnected:
            self._count(operation, 500)
            return
        except Exception as exc:  # the one translation of failures, below
            (status, payload, media), headers = _error_reply(exc, method, path)
        if media is not None:
            headers.append((b"content-length", b"%d" % len(payload)))
            headers.append((b"content-type", media))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})
        self._count(operation, status)

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        """The request body, checked for content type and size first."""
        media = _header(scope, b"content-type") or b""
        if media != JSON_TYPE:
            text = media.decode("latin-1").split(";", 1)[0].strip().lower()
            if text != "application/json":
                raise UnsupportedMediaTypeError(
                    f"expected request with `Content-Type: application/json`, "
                    f"got {text or 'none'!r}"
                )
        cap = self._cap
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            raise RequestTooLargeError(f"request body is larger than {cap} bytes")
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > cap:
                raise RequestTooLargeError(f"request body is larger than {cap} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _not_found(self, scope: Scope, path: str, headers: Headers) -> Reply:
        """404, or a 307 to the path without its trailing slash when that one exists."""
        stripped = path.rstrip("/")
        if path == "/" or stripped == path or self._router.match(stripped) is None:
            raise _RouteError(404)
        headers.append((b"content-length", b"0"))
        headers.append((b"location", _location(scope, stripped).encode("latin-1")))
        return 307, b"", None

    def _count(self, operation: str, status: int) -> None:
        counter = self._counters.get((operation, status))
        if counter is None:
            counter = self._counters[operation, status] = self._metrics.calls.labels(
                "http", operation, str(status)
            )
        counter.inc()


def _header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of a (lower-case) request header, or ``None``."""
    for key, value in scope["headers"]:
        if key == name:
            return value  # type: ignore[no-any-return]
    return None


def _location(scope: Scope, path: str) -> str:
    """The absolute URL of ``path`` on this server (as the client addressed it)."""
    scheme = scope.get("scheme", "http")
    host = _header(scope, b"host")
    if host is not None:
        authority = host.decode("latin-1")
    else:
        name, port = scope["server"]
        default = port == {"http": 80, "https": 443}.get(scheme)
        authority = name if default else f"{name}:{port}"
    url = f"{scheme}://{authority}{scope.get('root_path', '')}{path}"
    if scope.get("query_string"):
        url += "?" + scope["query_string"].decode()
    return quote(url, safe=":/%#?=@[]!$&'()*+,;")


def _error_reply(exc: Exception, method: str, path: str) -> tuple[Reply, Headers]:
    """The one translation of every failure into ``{"error": code, "message": text}``."""
    headers: Headers = []
    if isinstance(exc, StoreError | GatewayError):
        if isinstance(exc, UnauthorizedError):
            headers.append((b"www-authenticate", b"Bearer"))
        return json_reply(ErrorJson(exc.code, str(exc)), exc.http_status), headers
    if isinstance(exc, msgspec.ValidationError):
        error = ErrorJson("unprocessable_entity", f"invalid request body: {exc}")
        return json_reply(error, 422), headers
    if isinstance(exc, msgspec.DecodeError):
        error = ErrorJson("bad_request", f"bad request: body is not JSON: {exc}")
        return json_reply(error, 400), headers
    if isinstance(exc, _RouteError):
        if exc.allow:
            headers.append((b"allow", exc.allow))
        code = "not_found" if exc.status == 404 else "method_not_allowed"
        return json_reply(ErrorJson(code, f"{exc}: {method} {path}"), exc.status), headers
    _log.error("http request failed", method=method, path=path, exc_info=exc)
    error = ErrorJson("internal_error", f"internal error: {type(exc).__name__}")
    return json_reply(error, 500), headers
