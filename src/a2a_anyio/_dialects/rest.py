"""The HTTP+JSON (REST) binding: operations as verbs and paths, errors as ``google.rpc.Status``.

v1.0 REST carries the same ProtoJSON payloads as v1.0 JSON-RPC, so its params come from
``V1Dialect``; v0.3 REST carries ProtoJSON of the v0.3 proto (``content`` for a message's
parts, nested file and data parts, ``TASK_STATE_*``), built by ``V03RestDialect``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects._shapes import Shapes
from a2a_anyio._dialects.base import Dialect, SendConfig
from a2a_anyio._dialects.v03 import V03Dialect
from a2a_anyio._dialects.v03 import decode_part as decode_v03_part
from a2a_anyio._dialects.v1 import V1Dialect
from a2a_anyio._errors import (
    _BY_REASON,
    A2AAuthError,
    A2AClientError,
    A2AHTTPError,
    A2AProtocolError,
    A2ARPCError,
    A2AServerError,
    ContentTypeNotSupportedError,
    InvalidAgentResponseError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
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


class RestMapping:
    """Maps an operation, with the params its dialect built, to a REST request."""

    def __init__(self, version: str, tenant: str | None = None) -> None:
        self.version = version
        self.tenant = tenant
        self.prefix = "" if version == "1.0" else "/v1"
        if tenant:
            self.prefix = f"/{_q(tenant)}{self.prefix}"

    def request(self, op: str, params: Any) -> RestRequest:
        p: JSONDict = dict(params or {})
        p.pop("tenant", None)  # the path carries it
        task = _q(p.get("taskId") or p.get("id") or "")
        base = self.prefix
        if op == "send":
            return RestRequest("POST", f"{base}/message:send", {}, p)
        if op == "stream":
            return RestRequest("POST", f"{base}/message:stream", {}, p)
        if op == "get":
            return RestRequest("GET", f"{base}/tasks/{task}", _query(p, "historyLength"), None)
        if op == "list":
            names = ("contextId", "status", "pageSize", "pageToken", "historyLength")
            query = _query(p, *names, "statusTimestampAfter", "includeArtifacts")
            return RestRequest("GET", f"{base}/tasks", query, None)
        if op == "cancel":
            body = {"metadata": p["metadata"]} if p.get("metadata") else {}
            return RestRequest("POST", f"{base}/tasks/{task}:cancel", {}, body)
        if op == "subscribe":
            return RestRequest("POST", f"{base}/tasks/{task}:subscribe", {}, None)
        configs = f"{base}/tasks/{task}/pushNotificationConfigs"
        config_id = _q(p.get("id") if self.version == "1.0" else p.get("pushNotificationConfigId"))
        if op == "push_create":
            return RestRequest("POST", configs, {}, p.get("body", p), p.get("alternative"))
        if op == "push_get":
            return RestRequest("GET", f"{configs}/{config_id}", {}, None)
        if op == "push_list":
            return RestRequest("GET", configs, {}, None)
        if op == "push_delete":
            return RestRequest("DELETE", f"{configs}/{config_id}", {}, None)
        if op == "extended_card":
            path = "/extendedAgentCard" if self.version == "1.0" else "/card"
            return RestRequest("GET", base + path, {}, None)
        raise ValueError(f"{op} has no HTTP+JSON form")


def rest_error(status: int, content: bytes, retry_after: float | None = None) -> A2AClientError:
    """The typed error for a failed REST call: ``ErrorInfo.reason`` first (v1.0), then an
    error class name (some v0.3 peers), then the HTTP status."""
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
        msg = message or text or reason or "error"
        if cls is TaskNotFoundError:
            return TaskNotFoundError(None, msg, data=details, reason=reason)
        if cls is A2AServerError:
            return A2AServerError(msg, data=details, reason=reason)
        return cls(msg, data=details, reason=reason)
    code = body.get("code")
    if isinstance(code, int) and not isinstance(code, bool) and -32799 <= code <= -32000:
        return rpc_error(code, message, body.get("data"), version="0.3")  # a JSON-RPC error
    if status in (401, 403):
        return A2AAuthError(status, text)
    if message is not None and status in _V03_STATUSES:
        # v0.3 REST servers answer {"message": ...} with a status that names the error;
        # a bare 404 without a JSON message stays an HTTP error (often: a wrong path).
        return _V03_STATUSES[status](message)
    return A2AHTTPError(status, text, retry_after=retry_after)


# The a2a-sdk 0.3 REST statuses (a2a-protocol §5.5), for errors that carry no reason.
_V03_STATUSES: dict[int, Callable[[str], A2AClientError]] = {
    404: lambda m: TaskNotFoundError(None, m),
    409: lambda m: TaskNotCancelableError(None, m),
    415: ContentTypeNotSupportedError,
    422: InvalidParamsError,
    501: UnsupportedOperationError,
    502: InvalidAgentResponseError,
}


def decode_rest_http(status: int, content: bytes, retry_after: float | None = None) -> Any:
    """The JSON body of a successful REST call, or the typed error of a failed one."""
    if not 200 <= status < 300:
        raise rest_error(status, content, retry_after)
    if not content.strip():
        return None
    try:
        return json.loads(content)
    except (ValueError, RecursionError) as exc:
        raise A2AProtocolError(f"response is not JSON: {content[:120]!r}") from exc


def unwrap_rest_event(value: Any) -> Any:
    """A streamed REST event: the StreamResponse itself, or the error it carries."""
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        raise rest_error(500, json.dumps(value).encode())
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


_V03_REST = Shapes(
    _decode_v03_rest_part,
    _encode_v03_rest_part,
    {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT", Role.UNSPECIFIED: "ROLE_USER"},
    message_parts="content",
)


class V03RestDialect(V03Dialect):
    """Payloads of the v0.3 HTTP+JSON binding (ProtoJSON of the v0.3 proto)."""

    def encode_message(self, message: Message) -> JSONDict:
        return _V03_REST.encode_message(message)

    def decode_message(self, value: Any) -> Message:
        return _V03_REST.decode_message(value)

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

    def decode_send_result(self, value: Any) -> Task | Message:
        d = v.obj(value, "send result")
        if (x := d.get("task")) is not None:
            return self.decode_task(x)
        if (x := d.get("message", d.get("msg"))) is not None:
            return self.decode_message(x)
        v.bad("send result has neither task nor message")

    def decode_task(self, value: Any) -> Task:
        return _V03_REST.decode_task(value)

    def decode_event(self, value: Any) -> StreamEvent:
        d = v.obj(value, "stream event")
        if (x := d.get("statusUpdate")) is not None:
            return _with_final(V1Dialect().decode_event({"statusUpdate": x}), x)
        if (x := d.get("artifactUpdate")) is not None:
            return V1Dialect().decode_event({"artifactUpdate": x})
        if (x := d.get("task")) is not None:
            return self.decode_task(x)
        if (x := d.get("message", d.get("msg"))) is not None:
            return self.decode_message(x)
        v.bad("stream event has none of task, message, statusUpdate, artifactUpdate")

    def push_create_params(self, config: PushNotificationConfig) -> JSONDict:
        inner = V03Dialect().push_create_params(config)["pushNotificationConfig"]
        config_id = config.id or config.task_id or ""
        name = f"tasks/{config.task_id}/pushNotificationConfigs/{config_id}"
        # The a2a-sdk takes the whole create request; the JS SDK only the config itself.
        body = {
            "parent": f"tasks/{config.task_id}",
            "configId": config_id,
            "config": {"name": name, "pushNotificationConfig": inner},
        }
        alternative = {"name": name, "pushNotificationConfig": inner}
        return {"taskId": config.task_id, "body": body, "alternative": alternative}

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


def _with_final(event: StreamEvent, wire: Any) -> StreamEvent:
    # v0.3 REST status events carry ``final``; v1.0 decoding only looks at the state.
    if isinstance(wire, dict) and wire.get("final") is True and hasattr(event, "final"):
        event.final = True
    return event


def rest_dialect(version: str, tenant: str | None = None) -> Dialect:
    """The payload dialect of the REST binding for ``version``."""
    return V1Dialect(None) if version.startswith("1.") else V03RestDialect()
