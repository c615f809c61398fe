"""The HTTP+JSON (REST) binding: operations as verbs and paths, errors as ``google.rpc.Status``.

v1.0 REST carries the same ProtoJSON payloads as v1.0 JSON-RPC, so its params come from
``V1Dialect``; v0.3 REST carries ProtoJSON of the v0.3 proto (``content`` for a message's
parts, nested file and data parts, ``TASK_STATE_*``), built by ``V03RestDialect``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects._jsonrpc import is_envelope, is_rpc_code, not_json
from a2a_anyio._dialects._shapes import Shapes
from a2a_anyio._dialects.ops import Send, SendConfig
from a2a_anyio._dialects.v03 import V03Dialect, encode_push_config
from a2a_anyio._dialects.v03 import decode_part as decode_v03_part
from a2a_anyio._errors import (
    _BY_REASON,
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
    rpc_error,
)
from a2a_anyio._model import (
    DataPart,
    JSONDict,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    StreamEvent,
    Task,
    TaskState,
    TextPart,
)


@dataclass(slots=True)
class RestRequest:
    """One HTTP request of the REST binding, relative to the interface URL."""

    method: str
    path: str
    query: dict[str, str]
    body: JSONDict | None
    #: Another body to try once if the server rejects the first (peers disagree on a shape).
    alternative: JSONDict | None = None
    #: The verb to try once after a 405.
    also: str | None = None


@dataclass(frozen=True, slots=True)
class Route:
    """How the binding carries one operation: ``verb`` and ``path``, where ``{name}`` stands
    for the params member of that name; the members sent as the ``query``; and the ``body``:
    "params" (as the dialect built them), "others" (the members not in the path) or None."""

    op: str
    verb: str
    path: str
    query: tuple[str, ...] = ()
    body: str | None = None
    #: The verb to try after a 405 (subscribe: POST per the spec, GET per the proto).
    also: str | None = None


_MEMBER = re.compile(r"\{(\w+)\}")
_LIST_QUERY = ("contextId", "status", "pageSize", "pageToken", "historyLength", "includeArtifacts")
# The "updated after" filter: a timestamp named after the field of each version's proto.
_SINCE = {"1.0": "statusTimestampAfter", "0.3": "lastUpdatedTime"}


def version_base(version: str) -> str:
    """The segment every path of ``version``'s layout starts with ("/v1" before v1.0)."""
    return "" if version == "1.0" else "/v1"


def _routes(version: str) -> dict[str, Route]:
    v1 = version == "1.0"
    base = version_base(version)
    task, config = ("taskId", "id") if v1 else ("id", "pushNotificationConfigId")
    configs = f"{base}/tasks/{{{task}}}/pushNotificationConfigs"
    routes = [
        Route("send", "POST", base + "/message:send", body="params"),
        Route("stream", "POST", base + "/message:stream", body="params"),
        Route("get", "GET", base + "/tasks/{id}", ("historyLength",)),
        Route("cancel", "POST", base + "/tasks/{id}:cancel", body="others"),
        Route("subscribe", "POST", base + "/tasks/{id}:subscribe", also="GET"),
        Route("push_create", "POST", configs, body="params"),
        Route("push_get", "GET", f"{configs}/{{{config}}}"),
        Route("push_list", "GET", configs),
        Route("push_delete", "DELETE", f"{configs}/{{{config}}}"),
        Route("extended_card", "GET", base + ("/extendedAgentCard" if v1 else "/card")),
        # v0.3: in the proto (GET /v1/tasks) from the spec's "0.4.0" draft; rarely served.
        Route("list", "GET", base + "/tasks", (*_LIST_QUERY, _SINCE["1.0" if v1 else "0.3"])),
    ]
    return {r.op: r for r in routes}


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


def _query(params: JSONDict, *names: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in names:
        value = params.get(name)
        if value is None:
            continue
        out[name] = ("true" if value else "false") if isinstance(value, bool) else _in_url(value)
    return out


@dataclass(frozen=True, slots=True)
class RestMatch:
    """A request read back: its route, the params members its path carries, and whether its
    verb is one the route is served with."""

    route: Route
    args: dict[str, str]
    allowed: bool

    def params(self, query: Mapping[str, str], body: Any) -> JSONDict:
        """The params as the dialect built them: the body's members, the query's, the path's."""
        out: JSONDict = dict(body) if isinstance(body, dict) else {}
        out.update((k, query[k]) for k in self.route.query if k in query)
        out.update(self.args)
        return out


class RestMapping:
    """Maps an operation, with the params its dialect built, to a REST request (``request``),
    and a request back to its route and params (``match``, the server's side)."""

    def __init__(self, version: str, tenant: str | None = None) -> None:
        self.version = version
        self.tenant = tenant
        self.prefix = f"/{_q(tenant)}" if tenant else ""
        self.routes = _routes(version)
        self._patterns = [(r, _pattern(self.prefix + r.path)) for r in self.routes.values()]

    def request(self, op: str, params: Any) -> RestRequest:
        route = self.routes.get(op)
        if route is None:
            raise ValueError(f"{op} has no HTTP+JSON form")
        p: JSONDict = dict(params or {})
        p.pop("tenant", None)  # the path carries it
        path = self.prefix + _MEMBER.sub(lambda m: _q(p.get(m[1]) or ""), route.path)
        body, alternative = None, None
        if route.body == "params":  # a dialect may give two shapes, as body and alternative
            body, alternative = p.get("body", p), p.get("alternative")
        elif route.body == "others":
            body = {k: x for k, x in p.items() if k not in _MEMBER.findall(route.path)}
        query = _query(p, *route.query)
        return RestRequest(route.verb, path, query, body, alternative, route.also)

    def match(self, verb: str, path: str) -> RestMatch | None:
        """What a request's verb and (percent-encoded) path below the interface URL name;
        None when no operation has that path."""
        found = None
        for route, pattern in self._patterns:
            if (m := pattern.fullmatch(path)) is not None:
                args = {k: unquote(x) for k, x in m.groupdict().items()}
                if verb in (route.verb, route.also):
                    return RestMatch(route, args, True)
                found = found or RestMatch(route, args, False)
        return found


def _pattern(path: str) -> re.Pattern[str]:
    pieces = _MEMBER.split(path)  # text, member, text, ...
    return re.compile(
        "".join(f"(?P<{x}>[^/:]+)" if i % 2 else re.escape(x) for i, x in enumerate(pieces))
    )


def rest_error(
    status: int,
    content: bytes,
    retry_after: float | None = None,
    *,
    version: str = "1.0",
    task_id: str | None = None,
    context: ErrorContext | None = None,
) -> A2AClientError:
    """The typed error for a failed REST call: ``ErrorInfo.reason`` first (v1.0), then an
    error class name (some v0.3 peers), a JSON-RPC code, then the HTTP status: before v1.0
    a status with a message names an A2A error (v1.0 dispatches on the reason only, so a
    proxy's JSON 502 stays an HTTP error, as it is over JSON-RPC). ``task_id`` is the task
    the call was about; ``context`` says which call it was."""
    where = context or {}
    text = content[:2000].decode("utf-8", "replace")
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
    cls: type[A2ARPCError] | None = _BY_REASON.get(reason or "")
    kind = body.get("type")
    if cls is None and isinstance(kind, str):
        cls = next((c for c in _BY_REASON.values() if c.__name__ == kind), None)
    if cls is not None:
        return _typed(cls, message or text or reason or "error", task_id, details, reason, where)
    code = body.get("code")
    if is_rpc_code(code):
        # A JSON-RPC error object: its code read as the dialect's version reads it.
        data = body.get("data")
        return rpc_error(code, message, data, version=version, task_id=task_id, context=where)
    if status in (401, 403):
        return A2AAuthError(status_code=status, body=text, **where)
    if version != "1.0" and message is not None and status in _V03_STATUSES:
        # v0.3 REST servers answer {"message": ...} with a status that names the error;
        # a bare 404 without a JSON message stays an HTTP error (often: a wrong path).
        return _typed(_V03_STATUSES[status], message, task_id, None, None, where)
    return A2AHTTPError(status_code=status, body=text, retry_after=retry_after, **where)


def _typed(
    cls: type[A2ARPCError],
    message: str,
    task_id: str | None,
    details: Any,
    reason: str | None,
    where: ErrorContext,
) -> A2ARPCError:
    if cls is TaskNotFoundError:
        return TaskNotFoundError(message, task_id=task_id, data=details, reason=reason, **where)
    if cls is TaskNotCancelableError:
        return TaskNotCancelableError(message, data=details, reason=reason, **where)
    return cls(message, data=details, reason=reason, **where)


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
_V03_STATUSES: dict[int, type[A2ARPCError]] = {
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


def rest_error_body(version: str, code: int, message: str, details: Any) -> tuple[int, JSONDict]:
    """HTTP status and body of an error with JSON-RPC ``code`` (the server's side of
    ``rest_error``): a ``google.rpc.Status`` in v1.0, the a2a-sdk 0.3's ``{"message"}``."""
    status, name, v03_status = _STATUSES.get(code, (500, "INTERNAL", 500))
    if version != "1.0":
        return v03_status, {"message": message}
    body = {"code": status, "status": name, "message": message, "details": details}
    return status, {"error": body}


def decode_rest_http(
    status: int,
    content: bytes,
    retry_after: float | None = None,
    *,
    version: str = "1.0",
    task_id: str | None = None,
    context: ErrorContext | None = None,
) -> Any:
    """The JSON body of a successful REST call, or the typed error of a failed one (see
    ``rest_error``)."""
    if not 200 <= status < 300:
        raise rest_error(
            status, content, retry_after, version=version, task_id=task_id, context=context
        )
    if not content.strip():
        return None
    try:
        value = json.loads(content)
    except (ValueError, RecursionError) as exc:
        raise not_json(content, context) from exc
    if (
        isinstance(value, dict)
        and isinstance(err := value.get("error"), dict)
        and is_envelope(value)
    ):
        # A JSON-RPC error sent with a success status: the error it is, not a bad result.
        code, message, data = err.get("code"), err.get("message"), err.get("data")
        raise rpc_error(code, message, data, version=version, task_id=task_id, context=context)
    return value


def unwrap_rest_event(
    value: Any,
    *,
    version: str = "1.0",
    task_id: str | None = None,
    context: ErrorContext | None = None,
) -> Any:
    """A streamed REST event: the StreamResponse itself, or the error it carries."""
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        body = json.dumps(value).encode()
        raise rest_error(500, body, version=version, task_id=task_id, context=context)
    return value


# -- v0.3 REST shapes ----------------------------------------------------------------------


def _decode_v03_rest_part(value: Any) -> Part:
    d = v.obj(value, "part")
    data = d.get("data")
    if isinstance(data, dict) and set(data) <= {"data"}:  # {"data": {"data": {...}}}
        return DataPart(data.get("data"), None, v.optional_dict(d, "metadata"), d)
    return decode_v03_part(value)


def _encode_v03_rest_part(part: Part) -> JSONDict:
    if isinstance(part, TextPart):
        out: JSONDict = {"text": part.text}
    elif isinstance(part, DataPart):
        data = part.data if isinstance(part.data, dict) else {"value": part.data}
        out = {"data": {"data": data}}
    else:
        f: JSONDict = (
            {"fileWithBytes": v.b64encode(part.data)}
            if part.data is not None
            else {"fileWithUri": part.url}
        )
        if part.media_type:
            f["mimeType"] = part.media_type
        if part.name:
            f["name"] = part.name
        out = {"file": f}
    if part.metadata:
        out["metadata"] = part.metadata
    return out


V03_REST = Shapes(
    _decode_v03_rest_part,
    _encode_v03_rest_part,
    {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT", Role.UNSPECIFIED: "ROLE_USER"},
    lambda state: v.proto_state(state, "TASK_STATE_CANCELLED"),
    final=True,
    message_parts="content",
)


def _config_name(task_id: str | None, config_id: str | None) -> str:
    return f"tasks/{task_id}/pushNotificationConfigs/{config_id}"


class V03RestDialect(V03Dialect):
    """Payloads of the v0.3 HTTP+JSON binding (ProtoJSON of the v0.3 proto)."""

    push_in_send = "pushNotification"

    def encode_message(self, message: Message) -> JSONDict:
        return V03_REST.encode_message(message)

    def decode_message(self, value: Any) -> Message:
        return V03_REST.decode_message(value)

    def send_params(self, message: Message, config: SendConfig) -> JSONDict:
        conf: JSONDict = {"blocking": config.blocking}
        if config.accepted_output_modes is not None:
            conf["acceptedOutputModes"] = config.accepted_output_modes
        if config.history_length:
            conf["historyLength"] = config.history_length
        params: JSONDict = {"message": self.encode_message(message), "configuration": conf}
        if config.metadata:
            params["metadata"] = config.metadata
        return params

    def read_send_params(self, params: Any) -> Send:
        d = v.obj(params, "params")
        if "message" not in d and "request" in d:  # the proto's field name
            d = {**d, "message": d["request"]}
        return super().read_send_params(d)

    def decode_send_result(self, value: Any) -> Task | Message:
        d = v.obj(value, "send result")
        if (x := d.get("task")) is not None:
            return self.decode_task(x)
        if (x := d.get("message", d.get("msg"))) is not None:
            return self.decode_message(x)
        v.bad("send result has neither task nor message")

    def encode_send_result(self, result: Task | Message) -> JSONDict:
        return V03_REST.encode_stream_response(result)

    def decode_task(self, value: Any) -> Task:
        return V03_REST.decode_task(value)

    def list_state(self, state: TaskState) -> str:
        return v.proto_state(v.state(state), "TASK_STATE_CANCELLED")

    def since_params(self, updated_after: str) -> JSONDict:
        return {"lastUpdatedTime": updated_after}

    def read_since(self, params: JSONDict) -> str | None:
        return v.text(params, "lastUpdatedTime") or None

    def encode_task(self, task: Task) -> JSONDict:
        return V03_REST.encode_task(task)

    def decode_event(self, value: Any) -> StreamEvent:
        d = v.obj(value, "stream event")
        if (x := d.get("statusUpdate")) is not None:
            return V03_REST.decode_status_update(v.obj(x, "statusUpdate"))
        if (x := d.get("artifactUpdate")) is not None:
            return V03_REST.decode_artifact_update(v.obj(x, "artifactUpdate"))
        if (x := d.get("task")) is not None:
            return self.decode_task(x)
        if (x := d.get("message", d.get("msg"))) is not None:
            return self.decode_message(x)
        v.bad("stream event has none of task, message, statusUpdate, artifactUpdate")

    def encode_event(self, event: StreamEvent, task: Task | None = None) -> JSONDict:
        return V03_REST.encode_stream_response(event)

    def encode_notification(self, event: StreamEvent, task: Task) -> JSONDict:
        return V03Dialect().encode_task(task)  # the JSON-RPC shape, as the a2a-sdk posts it

    def push_create_params(self, config: PushNotificationConfig) -> JSONDict:
        inner = V03Dialect().push_create_params(config)["pushNotificationConfig"]
        config_id = config.id or config.task_id or ""
        resource = {
            "name": _config_name(config.task_id, config_id),
            "pushNotificationConfig": inner,
        }
        # The a2a-sdk takes the whole create request; the JS SDK only the config itself.
        body = {"parent": f"tasks/{config.task_id}", "configId": config_id, "config": resource}
        return {"id": config.task_id, "body": body, "alternative": resource}

    def read_push_create_params(self, params: Any) -> PushNotificationConfig:
        d = v.obj(params, "params")
        config = self.decode_push_config(v.optional_dict(d, "config") or d)
        config.id = config.id or v.text(d, "configId")
        config.task_id = v.required_id(d, "id", None, "params")
        return config

    def encode_push_config(self, config: PushNotificationConfig) -> JSONDict:
        inner = encode_push_config(config)
        return {"name": _config_name(config.task_id, config.id), "pushNotificationConfig": inner}

    def decode_push_config(self, value: Any) -> PushNotificationConfig:
        d = v.obj(value, "push notification config")
        config = V03Dialect().decode_push_config(d)
        name = v.text(d, "name") or ""
        parts = name.split("/")
        if len(parts) == 4 and parts[0] == "tasks":  # tasks/{id}/pushNotificationConfigs/{cid}
            config.task_id, config.id = parts[1], config.id or parts[3]
        return config

    def decode_push_configs(self, value: Any) -> list[PushNotificationConfig]:
        items = v.items(v.obj(value, "push config list"), "configs") if value else []
        return [self.decode_push_config(c) for c in items]

    def encode_push_configs(self, configs: list[PushNotificationConfig]) -> Any:
        return {"configs": [self.encode_push_config(c) for c in configs], "nextPageToken": ""}
