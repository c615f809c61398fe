"""The HTTP+JSON (REST) binding: operations as verbs and paths under the interface URL, the
payloads as JSON bodies and queries, errors as ``google.rpc.Status`` (v1.0) or as statuses
with a message (v0.3). Loaded only by clients whose agents speak it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple
from urllib.parse import quote, unquote, urlencode, urlsplit, urlunsplit

from a2a_anyio._bindings.base import (
    EventDecoder,
    Fallback,
    R,
    Status,
    WireCodec,
    WireRequest,
    header,
    loads,
    loads_event,
    not_json,
    preview,
    raise_in,
)
from a2a_anyio._bindings.jsonrpc import is_envelope, is_rpc_code
from a2a_anyio._dialects import Op, OpArgs, task_of
from a2a_anyio._dialects._values import retry_after as parse_retry_after
from a2a_anyio._dialects.errors import REASONS, Codes, by_name, rpc_error, typed_error
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    A2AHTTPError,
    A2AProtocolError,
    A2ARPCError,
    A2AServerError,
    ContentTypeNotSupportedError,
    ErrorContext,
    ExtendedCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_anyio._model import JSONDict, StreamEvent

# -- routes ----------------------------------------------------------------------------------


class Route(NamedTuple):
    """How the binding carries one operation: ``verb`` and ``path``, where ``{arg:member}``
    stands for the operation's argument ``arg`` (``task_id``, ``config_id``), which the
    dialect's params call ``member``. What the path does not carry goes into the ``body``
    ("all": the params as the dialect wrote them, path members too; "rest": the others) or
    the ``query`` (True: the others). ``also``: the verb to try once after a 405."""

    verb: str
    path: str
    body: Literal["all", "rest"] | None = None
    query: bool = False
    also: str | None = None


_FIELD = re.compile(r"\{(\w+):(\w+)\}")


class Layout(NamedTuple):
    """The HTTP+JSON binding of one version: its ``routes`` (below ``base``), the media
    type of its bodies, and whether its errors are told by status (v0.3: a status with a
    ``{"message"}``) rather than by a ``google.rpc.Status`` body (v1.0)."""

    base: str
    routes: Mapping[Op, Route]
    content_type: str = "application/json"
    errors_by_status: bool = True


def _layout(base: str, task: str, config: str, card: str, **more: Any) -> Layout:
    configs = f"{base}/tasks/{{task_id:{task}}}/pushNotificationConfigs"
    routes = {
        Op.SEND: Route("POST", f"{base}/message:send", body="all"),
        Op.STREAM: Route("POST", f"{base}/message:stream", body="all"),
        Op.GET: Route("GET", f"{base}/tasks/{{task_id:id}}", query=True),
        Op.CANCEL: Route("POST", f"{base}/tasks/{{task_id:id}}:cancel", body="rest"),
        # POST per the spec, GET per the proto.
        Op.SUBSCRIBE: Route("POST", f"{base}/tasks/{{task_id:id}}:subscribe", also="GET"),
        Op.PUSH_CREATE: Route("POST", configs, body="all"),
        Op.PUSH_GET: Route("GET", f"{configs}/{{config_id:{config}}}"),
        Op.PUSH_LIST: Route("GET", configs),
        Op.PUSH_DELETE: Route("DELETE", f"{configs}/{{config_id:{config}}}"),
        Op.EXTENDED_CARD: Route("GET", base + card),
        # v0.3: in the proto (GET /v1/tasks) from the spec's "0.4.0" draft; rarely served.
        Op.LIST: Route("GET", f"{base}/tasks", query=True),
    }
    return Layout(base, routes, **more)


_V03 = _layout("/v1", "id", "pushNotificationConfigId", "/card")
#: The layout of each dialect version (the 0.2.6 spec documents the v0.3 layout).
LAYOUTS: Mapping[str, Layout] = {
    "1.0": _layout(
        "",
        "taskId",
        "id",
        "/extendedAgentCard",
        content_type="application/a2a+json",
        errors_by_status=False,
    ),
    "0.3": _V03,
    "0.2": _V03,
}


def _in_url(value: Any) -> str:
    """``value`` as text a URL can carry: an id holding a lone surrogate (a server's JSON
    can send one; no UTF-8 encodes it) raises A2AProtocolError instead."""
    text = str(value)
    if not text.isascii():
        try:
            text.encode()
        except UnicodeEncodeError:
            shown = repr(text[:100])
            raise A2AProtocolError(
                f"{shown} cannot be sent in a URL: it holds a lone surrogate (not valid Unicode)"
            ) from None
    return text


def _q(value: Any) -> str:
    return quote(_in_url(value), safe="")


def _query(params: JSONDict) -> dict[str, str]:
    return {
        name: ("true" if value else "false") if isinstance(value, bool) else _in_url(value)
        for name, value in params.items()
        if value is not None
    }


def _pattern(path: str) -> re.Pattern[str]:
    pieces = _FIELD.split(path)  # text, arg, member, text, ...
    return re.compile(
        "".join(
            re.escape(x) if i % 3 == 0 else f"(?P<{x}>[^/:]+)" if i % 3 == 2 else ""
            for i, x in enumerate(pieces)
        )
    )


class RestMatch(NamedTuple):
    """A request read back: its operation, route, the params members its path carries, and
    whether its verb is one the route is served with."""

    op: Op
    route: Route
    args: dict[str, str]
    allowed: bool

    def params(self, query: Mapping[str, str], body: Any) -> JSONDict:
        """The params as the dialect wrote them: the body's members, the query's, the path's."""
        out: JSONDict = dict(body) if isinstance(body, dict) else {}
        if self.route.query:
            out.update(query)
        out.update(self.args)
        return out


# -- errors ----------------------------------------------------------------------------------


def rest_error(
    status: int,
    content: bytes,
    retry_after: float | None = None,
    *,
    layout: Layout,
    codes: Codes,
    task_id: str | None = None,
    context: ErrorContext | None = None,
) -> A2AClientError:
    """The typed error for a failed REST call: ``ErrorInfo.reason`` first (v1.0), then an
    error class name (some v0.3 peers), a JSON-RPC code, then the HTTP status: where errors
    are told by status (v0.3), a status with a message names an A2A error (v1.0 dispatches
    on the reason only, so a proxy's JSON 502 stays an HTTP error, as it is over JSON-RPC).
    ``task_id`` is the task the call was about; ``context`` says which call it was."""
    where = context or {}
    text = preview(content)
    try:
        value = json.loads(content) if content else None
    except (ValueError, RecursionError):
        value = None
    err = value.get("error") if isinstance(value, dict) else None
    body = err if isinstance(err, dict) else value if isinstance(value, dict) else {}
    message = body.get("message") if isinstance(body.get("message"), str) else None
    details = body.get("details")
    reason = None
    if isinstance(details, list):
        for item in details:
            if isinstance(item, dict) and isinstance(item.get("reason"), str):
                reason = item["reason"]
                break
    cls: type[A2ARPCError] | None = REASONS.get(reason or "")
    kind = body.get("type")
    if cls is None and isinstance(kind, str):
        cls = by_name(kind)
    if cls is not None:
        text = message or text or reason or "error"
        fields = {"data": details, "reason": reason}
        return typed_error(cls, text, task_id=task_id, context=where, **fields)
    code = body.get("code")
    if is_rpc_code(code):
        # A JSON-RPC error object: its code read as the dialect reads it.
        data = body.get("data")
        return rpc_error(code, message, data, codes=codes, task_id=task_id, context=where)
    if status in (401, 403):
        return A2AAuthError(status_code=status, body=text, **where)
    if layout.errors_by_status and message is not None and status in _BY_STATUS:
        # v0.3 REST servers answer {"message": ...} with a status that names the error;
        # a bare 404 without a JSON message stays an HTTP error (often: a wrong path).
        return typed_error(_BY_STATUS[status], message, task_id=task_id, context=where)
    return A2AHTTPError(status_code=status, body=text, retry_after=retry_after, **where)


# code -> the HTTP status and google.rpc code of a v1.0.1 error (a2a-protocol §5.4), and the
# HTTP status the a2a-sdk 0.3 answers it with (§5.5).
_STATUSES: dict[int, tuple[int, str, int]] = {
    ParseError.code: (400, "INVALID_ARGUMENT", 400),
    InvalidRequestError.code: (400, "INVALID_ARGUMENT", 400),
    MethodNotFoundError.code: (404, "NOT_FOUND", 404),
    InvalidParamsError.code: (400, "INVALID_ARGUMENT", 422),
    A2AServerError.code: (500, "INTERNAL", 500),
    TaskNotFoundError.code: (404, "NOT_FOUND", 404),
    TaskNotCancelableError.code: (400, "FAILED_PRECONDITION", 409),
    PushNotificationNotSupportedError.code: (400, "FAILED_PRECONDITION", 501),
    UnsupportedOperationError.code: (400, "FAILED_PRECONDITION", 501),
    ContentTypeNotSupportedError.code: (400, "INVALID_ARGUMENT", 415),
    InvalidAgentResponseError.code: (500, "INTERNAL", 502),
    ExtendedCardNotConfiguredError.code: (400, "FAILED_PRECONDITION", 404),
    ExtensionSupportRequiredError.code: (400, "FAILED_PRECONDITION", 500),
    VersionNotSupportedError.code: (400, "FAILED_PRECONDITION", 500),
}
# Read back, for errors that carry no reason: the error each of these statuses stands for.
_BY_STATUS: dict[int, type[A2ARPCError]] = {
    _STATUSES[cls.code][2]: cls
    for cls in (
        TaskNotFoundError,
        TaskNotCancelableError,
        ContentTypeNotSupportedError,
        InvalidParamsError,
        UnsupportedOperationError,
        InvalidAgentResponseError,
    )
}


def rest_error_body(layout: Layout, code: int, message: str, details: Any) -> tuple[int, JSONDict]:
    """HTTP status and body of an error with JSON-RPC ``code`` (the server's side of
    ``rest_error``): a ``google.rpc.Status``, or the a2a-sdk 0.3's ``{"message"}``."""
    status, name, v03_status = _STATUSES.get(code, (500, "INTERNAL", 500))
    if layout.errors_by_status:
        return v03_status, {"message": message}
    body = {"code": status, "status": name, "message": message, "details": details}
    return status, {"error": body}


# -- the binding -----------------------------------------------------------------------------


class RestEvents(EventDecoder):
    """Events of a REST stream: bare StreamResponses; an ``{"error": ...}`` event is raised."""

    def __init__(self, codec: RestCodec, request: WireRequest[Any]) -> None:
        super().__init__(codec.dialect, request)
        self._codec = codec
        self._decode = codec.dialect.payloads[Op.STREAM].decode

    def decode(self, data: str) -> StreamEvent:
        context = self.context
        value = loads_event(data, context)
        if isinstance(value, dict) and isinstance(value.get("error"), dict):
            raise self._codec.error(500, json.dumps(value).encode(), None, self.request)
        try:
            event: StreamEvent = self._decode(value)
        except A2AClientError as exc:
            raise_in(context, exc)
        return event


def _dumps(value: Any) -> bytes | None:
    return None if value is None else json.dumps(value).encode()


class RestCodec(WireCodec):
    """A dialect over HTTP+JSON under one interface URL; ``tenant`` becomes the first path
    segment. Subscribe is sent as POST with a GET alternative for a 405; CALL is not part
    of the binding."""

    binding = "rest"
    binding_name = "HTTP+JSON"
    missing_statuses = frozenset({404, 405, 501})

    def _bind(self) -> None:
        self.layout = LAYOUTS[self.version]
        self.content_type = self.layout.content_type
        self._base = urlsplit(self.url)
        self._prefix = f"/{_q(self.tenant)}" if self.tenant else ""
        self._patterns = [
            (op, route, _pattern(self._prefix + route.path))
            for op, route in self.layout.routes.items()
        ]

    def supports(self, op: Op) -> bool:
        return op in self.layout.routes and self.dialect.has(op)

    def variants(self) -> list[WireCodec]:
        """This wire at the interface URL without the version segment it ends in, when the
        paths add that segment again (a card naming ``.../v1`` for v0.3: some servers mean
        ``.../v1/v1/message:send``, most ``.../v1/message:send``)."""
        base = self.layout.base
        path = self._base.path.rstrip("/")
        if not base or not path.endswith(base):
            return []
        return [self.again(urlunsplit(self._base._replace(path=path.removesuffix(base))))]

    def _url(self, path: str, query: Mapping[str, str]) -> str:
        """``path`` (already percent-encoded) below the interface URL, with ``query`` added
        to any query the URL has."""
        base = self._base
        extra = urlencode(query)
        q = f"{base.query}&{extra}" if base.query and extra else base.query or extra
        return urlunsplit((base.scheme, base.netloc, base.path.rstrip("/") + path, q, ""))

    def _encode(self, op: Op, args: OpArgs) -> WireRequest[Any]:
        route = self.layout.routes[op]
        members = {member: getattr(args, arg) for arg, member in _FIELD.findall(route.path)}
        path = self._prefix + _FIELD.sub(lambda m: _q(getattr(args, m[1]) or ""), route.path)
        query: Mapping[str, str] = {}

        def parts(params: Any) -> Any:
            nonlocal query
            rest = {k: x for k, x in (params or {}).items() if k not in members}
            if route.query:
                query = _query(rest)
            return params if route.body == "all" else rest if route.body == "rest" else None

        payload = self.dialect.payloads[op]
        body = parts(payload.write(args))
        url = self._url(path, query)
        headers = self.headers(op)

        def build(method: str, body: Any, **more: Any) -> WireRequest[Any]:
            return WireRequest(
                op,
                method,
                url,
                headers,
                _dumps(body),
                op.idempotent,
                None,
                f"{method} {path}",
                task_of(args),
                interface=self.url,
                **more,
            )

        if payload.alternative is not None:
            other = build(route.verb, parts(payload.alternative(args)))
            return build(route.verb, body, alternative=other, when=Fallback.REJECTED)
        if route.also is not None:
            other = build(route.also, None)
            return build(route.verb, body, alternative=other, when=Fallback.METHOD_NOT_ALLOWED)
        return build(route.verb, body)

    def error(
        self, status: int, content: bytes, retry_after: float | None, request: WireRequest[Any]
    ) -> A2AClientError:
        """The typed error of a failed answer to ``request`` (see ``rest_error``)."""
        return rest_error(
            status,
            content,
            retry_after,
            layout=self.layout,
            codes=self.dialect.errors,
            task_id=request.task_id,
            context=request.context,
        )

    def decode(
        self, request: WireRequest[R], status: Status, headers: Mapping[str, str], body: bytes
    ) -> R:
        """An error status is typed by ``ErrorInfo.reason``, then an error class name, then
        the v0.3 status table, else A2AHTTPError. See ``WireCodec.decode``."""
        try:
            value = self._json(request, status, headers, body)
        except A2AClientError as exc:
            self._refused(request, exc)
        return self._result(request, value)

    def _json(
        self, request: WireRequest[Any], status: int, headers: Mapping[str, str], body: bytes
    ) -> Any:
        """The JSON body of a successful answer, or the typed error of a failed one."""
        if not 200 <= status < 300:
            wait = parse_retry_after(header(headers, "retry-after"))
            raise self.error(status, body, wait, request)
        if not body.strip():
            return None
        try:
            value = loads(body)
        except (ValueError, RecursionError) as exc:
            raise not_json(body, request.context) from exc
        if (
            isinstance(value, dict)
            and isinstance(err := value.get("error"), dict)
            and is_envelope(value)
        ):
            # A JSON-RPC error sent with a success status: the error it is, not a result.
            raise rpc_error(
                err.get("code"),
                err.get("message"),
                err.get("data"),
                codes=self.dialect.errors,
                task_id=request.task_id,
                context=request.context,
            )
        return value

    def event_decoder(self, request: WireRequest[Any]) -> EventDecoder:
        return RestEvents(self, request)

    def route(self, verb: str, path: str) -> RestMatch | None:
        """The operation a request's verb and (percent-encoded) path below the interface URL
        name, with the params its path carries (``RestMatch.params`` adds the query's and
        the body's); None when no operation of this binding and dialect has that path."""
        found = None
        for op, route, pattern in self._patterns:
            if not self.dialect.has(op) or (m := pattern.fullmatch(path)) is None:
                continue
            args = {k: unquote(x) for k, x in m.groupdict().items()}
            if verb in (route.verb, route.also):
                return RestMatch(op, route, args, True)
            found = found or RestMatch(op, route, args, False)
        return found

    def _answer(self, value: Any, request_id: Any) -> Any:
        return {} if value is None else value  # a body is always an object (DELETE: {})

    def _error(self, code: int, message: str, data: Any, request_id: Any) -> tuple[int, Any]:
        return rest_error_body(self.layout, code, message, data)
