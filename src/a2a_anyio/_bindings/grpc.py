"""The gRPC binding: each operation an RPC of the version's ``A2AService`` (v1.0:
``lf.a2a.v1``, v0.3: ``a2a.v1``), its payloads protobuf messages, its errors a gRPC status
with ``google.rpc.Status`` details. Used only by clients whose agents speak it (the
``grpc`` extra: protobuf, googleapis-common-protos); protobuf and the messages are loaded
when a codec first encodes or decodes, not when a card merely lists a gRPC interface.

The payloads stay the dialects': a request is the ProtoJSON the dialect writes (the same
the HTTP+JSON binding carries) read into the RPC's message, an answer its message written
as ProtoJSON for the dialect to decode (both ways ``grpc_json``). What v0.3's
messages carry as resource names (``tasks/{id}``) is the binding's table, as a REST path is.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote, urlsplit

from a2a_anyio._bindings.base import (
    EventDecoder,
    R,
    Status,
    StreamStatus,
    WireCodec,
    WireRequest,
    raise_in,
)
from a2a_anyio._dialects import Op, OpArgs, task_of
from a2a_anyio._dialects.errors import REASONS, by_name, typed_error
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    A2AHTTPError,
    A2AProtocolError,
    A2ARPCError,
    A2AServerError,
    A2ATimeoutError,
    ErrorContext,
    ExtendedCardNotConfiguredError,
    MethodNotFoundError,
    ParseError,
    clipped,
)
from a2a_anyio._model import JSONDict, StreamEvent

if TYPE_CHECKING:
    from google.protobuf.any_pb2 import Any as AnyMessage
    from google.protobuf.message import Message

# -- the services ----------------------------------------------------------------------------

_FIELD = re.compile(r"\{(\w+)\}")
_EMPTY = "google.protobuf.empty_pb2:Empty"


class Rpc(NamedTuple):
    """How the binding carries one operation: the RPC ``method``, its ``request`` and
    ``response`` messages (by name, in the service's module unless "module:Name");
    ``names``: request fields that hold params members as a resource name (v0.3:
    ``{"name": "tasks/{id}"}``, ``{id}`` being the member ``id``); ``drops``: params members
    the request has no field for."""

    method: str
    request: str
    response: str
    names: Mapping[str, str] = MappingProxyType({})
    drops: tuple[str, ...] = ()


class Service(NamedTuple):
    """The gRPC binding of one version: the service's full name, the module of its
    messages (protoc's, in ``grpc_pb``), its RPCs; ``sends_by_stream``: see
    ``WireCodec.sends_by_stream``."""

    name: str
    module: str
    rpcs: Mapping[Op, Rpc]
    sends_by_stream: bool = False

    def message(self, name: str) -> type[Message]:
        """The message class ``name`` (see ``Rpc``), its module imported if need be."""
        module, _, cls = name.rpartition(":")
        found: type[Message] = getattr(importlib.import_module(module or self.module), cls)
        return found


_TASK, _CONFIG = "tasks/{id}", "tasks/{id}/pushNotificationConfigs/{pushNotificationConfigId}"
_V03 = Service(
    "a2a.v1.A2AService",
    "a2a_anyio._bindings.grpc_pb.a2a_v0_3_pb2",
    {
        Op.SEND: Rpc("SendMessage", "SendMessageRequest", "SendMessageResponse"),
        Op.STREAM: Rpc("SendStreamingMessage", "SendMessageRequest", "StreamResponse"),
        Op.GET: Rpc("GetTask", "GetTaskRequest", "Task", {"name": _TASK}),
        # The v0.3 proto's CancelTaskRequest carries no metadata.
        Op.CANCEL: Rpc("CancelTask", "CancelTaskRequest", "Task", {"name": _TASK}, ("metadata",)),
        Op.SUBSCRIBE: Rpc(
            "TaskSubscription", "TaskSubscriptionRequest", "StreamResponse", {"name": _TASK}
        ),
        Op.PUSH_CREATE: Rpc(
            "CreateTaskPushNotificationConfig",
            "CreateTaskPushNotificationConfigRequest",
            "TaskPushNotificationConfig",
            {"parent": _TASK},
        ),
        Op.PUSH_GET: Rpc(
            "GetTaskPushNotificationConfig",
            "GetTaskPushNotificationConfigRequest",
            "TaskPushNotificationConfig",
            {"name": _CONFIG},
        ),
        Op.PUSH_LIST: Rpc(
            "ListTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigRequest",
            "ListTaskPushNotificationConfigResponse",
            {"parent": _TASK},
        ),
        Op.PUSH_DELETE: Rpc(
            "DeleteTaskPushNotificationConfig",
            "DeleteTaskPushNotificationConfigRequest",
            _EMPTY,
            {"name": _CONFIG},
        ),
        Op.EXTENDED_CARD: Rpc("GetAgentCard", "GetAgentCardRequest", "AgentCard"),
    },
    # a2a-sdk 0.3's SendMessage handler, cancelled, still waits for its agent to end.
    sends_by_stream=True,
)
#: The service of each dialect version (v0.2's proto is v0.3's).
SERVICES: Mapping[str, Service] = {
    "1.0": Service(
        "lf.a2a.v1.A2AService",
        "a2a_anyio._bindings.grpc_pb.a2a_v1_pb2",
        {
            Op.SEND: Rpc("SendMessage", "SendMessageRequest", "SendMessageResponse"),
            Op.STREAM: Rpc("SendStreamingMessage", "SendMessageRequest", "StreamResponse"),
            Op.GET: Rpc("GetTask", "GetTaskRequest", "Task"),
            Op.LIST: Rpc("ListTasks", "ListTasksRequest", "ListTasksResponse"),
            Op.CANCEL: Rpc("CancelTask", "CancelTaskRequest", "Task"),
            Op.SUBSCRIBE: Rpc("SubscribeToTask", "SubscribeToTaskRequest", "StreamResponse"),
            Op.PUSH_CREATE: Rpc(
                "CreateTaskPushNotificationConfig",
                "TaskPushNotificationConfig",
                "TaskPushNotificationConfig",
            ),
            Op.PUSH_GET: Rpc(
                "GetTaskPushNotificationConfig",
                "GetTaskPushNotificationConfigRequest",
                "TaskPushNotificationConfig",
            ),
            Op.PUSH_LIST: Rpc(
                "ListTaskPushNotificationConfigs",
                "ListTaskPushNotificationConfigsRequest",
                "ListTaskPushNotificationConfigsResponse",
            ),
            Op.PUSH_DELETE: Rpc(
                "DeleteTaskPushNotificationConfig",
                "DeleteTaskPushNotificationConfigRequest",
                _EMPTY,
            ),
            Op.EXTENDED_CARD: Rpc(
                "GetExtendedAgentCard", "GetExtendedAgentCardRequest", "AgentCard"
            ),
        },
    ),
    "0.3": _V03,
    "0.2": _V03,
}


def _named(params: JSONDict, names: Mapping[str, str], drops: tuple[str, ...]) -> JSONDict:
    """``params`` with the members the resource names hold put into them (a name the
    params hold already stays), without those the message has no field for."""
    out = {k: x for k, x in params.items() if k not in drops}
    for field, template in names.items():
        values = {m: out.pop(m, None) for m in _FIELD.findall(template)}
        if field not in out:
            out[field] = _fill(template, values)
    return out


def _fill(template: str, values: Mapping[str, Any]) -> str:
    first = next(iter(values.values()))  # v0.3: a task's default config is named by its id
    return _FIELD.sub(lambda m: str(values[m[1]] or first or ""), template)


def _message(cls: type[Message], value: Any) -> Message:
    """``value`` (ProtoJSON) as a message of ``cls``; A2AProtocolError when it cannot be one."""
    from google.protobuf import json_format

    from a2a_anyio._bindings.grpc_json import from_json

    try:
        return from_json(cls, value or {})
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        raise A2AProtocolError(
            f"the value cannot be a {cls.DESCRIPTOR.name}: {clipped(str(exc), 300)}"
        ) from None


def _bytes(message: Message) -> bytes:
    data: bytes = message.SerializeToString(deterministic=True)
    return data


def _json(message: Message) -> JSONDict:
    from a2a_anyio._bindings.grpc_json import to_json

    value: JSONDict = to_json(message)
    return value


def _read(cls: type[Message], data: bytes) -> JSONDict:
    """A message of ``cls`` from its bytes, as ProtoJSON (A2AProtocolError when it is none)."""
    from google.protobuf.message import DecodeError

    try:
        return _json(cls.FromString(data))
    except (DecodeError, ValueError, TypeError, RecursionError) as exc:
        raise A2AProtocolError(
            f"the answer is no {cls.DESCRIPTOR.name} message: {clipped(str(exc), 200)}"
        ) from None


# -- errors ----------------------------------------------------------------------------------

#: gRPC status codes by name.
STATUS_NAMES = (
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
)  # fmt: skip
#: The HTTP status each gRPC status stands for (google.rpc.Code's mapping): what an
#: A2AHTTPError of a status that names no A2A error says.
HTTP_STATUS = (200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401)
DEADLINE_EXCEEDED, PERMISSION_DENIED, UNIMPLEMENTED, UNAUTHENTICATED = 4, 7, 12, 16
DOMAIN = "a2a-protocol.org"
#: Error class names some v0.3 servers put before their message ("TaskNotFoundError: ...")
#: that are not the names of this client's classes.
_V03_NAMES: Mapping[str, type[A2ARPCError]] = {
    "InternalError": A2AServerError,
    "JSONParseError": ParseError,
    "AuthenticatedExtendedCardNotConfiguredError": ExtendedCardNotConfiguredError,
}


def status_message(headers: Mapping[str, str]) -> str:
    """``grpc-message``, percent-decoded and cut short."""
    return clipped(unquote(headers.get("grpc-message", ""), errors="replace"), 1000)


def status_details(headers: Mapping[str, str]) -> list[JSONDict]:
    """The details of ``grpc-status-details-bin`` (a ``google.rpc.Status``) as ProtoJSON;
    a detail of a type not known here is its ``@type`` alone; nothing when absent or bad."""
    raw = headers.get("grpc-status-details-bin", "")
    if not raw:
        return []
    from google.protobuf.message import DecodeError
    from google.rpc import error_details_pb2, status_pb2  # noqa: F401 (details it unpacks)

    try:
        status = status_pb2.Status.FromString(base64.b64decode(raw + "=" * (-len(raw) % 4)))
    except (binascii.Error, ValueError, DecodeError, RecursionError):
        return []
    return [_detail(item) for item in status.details]


def _detail(item: AnyMessage) -> JSONDict:
    try:
        return _json(item)
    except (TypeError, ValueError, KeyError, RecursionError):
        return {"@type": item.type_url}


def grpc_error(
    status: int,
    headers: Mapping[str, str],
    *,
    task_id: str | None = None,
    context: ErrorContext | None = None,
) -> A2AClientError:
    """The typed error of a gRPC status that is no success: an A2A ``ErrorInfo.reason``
    first (domain ``a2a-protocol.org``), then an error class named before the message (v0.3
    servers), then the status: UNAUTHENTICATED and PERMISSION_DENIED are A2AAuthError,
    UNIMPLEMENTED a method not found, DEADLINE_EXCEEDED a timeout, any other an A2AHTTPError
    with the HTTP status it stands for (``retry_after`` from a ``RetryInfo``)."""
    where = context or {}
    message = status_message(headers)
    details = status_details(headers)
    name = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else str(status)
    reason = next(
        (
            d["reason"]
            for d in details
            if str(d.get("@type", "")).endswith("google.rpc.ErrorInfo")
            and d.get("domain") == DOMAIN
            and isinstance(d.get("reason"), str)
        ),
        None,
    )
    cls = REASONS.get(reason or "")
    text = message
    if cls is None and ": " in message:
        named, _, rest = message.partition(": ")
        cls = by_name(named) or _V03_NAMES.get(named)
        text = rest if cls is not None else message
    if cls is not None:
        fields = {"data": details or None, "reason": reason}
        return typed_error(cls, text or name, task_id=task_id, context=where, **fields)
    said = f"gRPC status {name}" + (f": {message}" if message else "")
    if status in (UNAUTHENTICATED, PERMISSION_DENIED):
        code = 401 if status == UNAUTHENTICATED else 403
        return A2AAuthError(said, status_code=code, body=message, **where)
    if status == UNIMPLEMENTED:
        return MethodNotFoundError(said, data=details or None, **where)
    if status == DEADLINE_EXCEEDED:
        return A2ATimeoutError(
            f"deadline timeout: the agent gave up ({said})", timeout="deadline", **where
        )
    wait = next((_seconds(d.get("retryDelay")) for d in details if "retryDelay" in d), None)
    http = HTTP_STATUS[status] if 0 <= status < len(HTTP_STATUS) else 500
    return A2AHTTPError(said, status_code=http, body=message, retry_after=wait, **where)


def _seconds(duration: Any) -> float | None:
    """A ProtoJSON Duration ("1.5s") in seconds."""
    text = str(duration)
    try:
        return max(0.0, float(text.removesuffix("s")))
    except ValueError:
        return None


# -- the binding -----------------------------------------------------------------------------


class GrpcEvents(EventDecoder):
    """Events of a server-streaming RPC: each message a ``StreamResponse``; the status that
    ends the stream, when it is no success, is raised."""

    def __init__(self, codec: GrpcCodec, request: WireRequest[Any]) -> None:
        super().__init__(codec.dialect, request)
        self._codec = codec
        service = codec.service
        self._response = service.message(service.rpcs[request.op].response)
        self._decode = codec.dialect.payloads[Op.STREAM].decode

    def decode(self, data: bytes | StreamStatus) -> StreamEvent:
        if isinstance(data, StreamStatus):
            raise self._codec.error(self.request, data.status, data.headers)
        try:
            event: StreamEvent = self._decode(_read(self._response, data))
        except A2AClientError as exc:
            raise_in(self.context, exc)
        return event


class GrpcCodec(WireCodec):
    """A dialect over gRPC at one interface (``http://`` cleartext, ``https://`` TLS);
    ``tenant`` goes into each request's ``tenant`` field (v1.0). CALL is not part of the
    binding."""

    binding = "grpc"
    binding_name = "gRPC"
    transport = "grpc"
    content_type = "application/grpc"

    def _bind(self) -> None:
        self.service = SERVICES[self.version]
        self.sends_by_stream = self.service.sends_by_stream
        parts = urlsplit(self.url)
        self._origin = f"{parts.scheme}://{parts.netloc}"

    def headers(self, op: Op, *, either: bool = False) -> Mapping[str, str]:
        return self._unary_headers

    def supports(self, op: Op) -> bool:
        return op in self.service.rpcs and self.dialect.has(op)

    def path(self, op: Op) -> str:
        """The RPC path of ``op``: ``/<service>/<method>``."""
        return f"/{self.service.name}/{self.service.rpcs[op].method}"

    def params(self, op: Op, args: OpArgs) -> Any:
        params = super().params(op, args) or {}
        if self.tenant and self.dialect.tenant is not None:
            params = {**params, self.dialect.tenant: self.tenant}
        return params

    def _encode(self, op: Op, args: OpArgs) -> WireRequest[Any]:
        rpc = self.service.rpcs[op]
        params = _named(self.params(op, args), rpc.names, rpc.drops)
        message = _message(self.service.message(rpc.request), params)
        return WireRequest(
            op,
            "POST",
            self._origin + self.path(op),
            self._unary_headers,
            _bytes(message),
            op.idempotent,
            None,
            rpc.method,
            task_of(args),
            interface=self.url,
        )

    def error(
        self, request: WireRequest[Any], status: int, headers: Mapping[str, str]
    ) -> A2AClientError:
        """The typed error of ``request``'s status (``grpc_error``)."""
        return grpc_error(status, headers, task_id=request.task_id, context=request.context)

    def decode(
        self, request: WireRequest[R], status: Status, headers: Mapping[str, str], body: bytes
    ) -> R:
        """``status`` is the call's gRPC status, ``body`` the answer's one message. See
        ``WireCodec.decode`` and ``grpc_error``."""
        if status:
            self._refused(request, self.error(request, status, headers))
        try:
            service = self.service
            value = _read(service.message(service.rpcs[request.op].response), body)
        except A2AClientError as exc:
            raise_in(request.context, exc)
        return self._result(request, value)

    def event_decoder(self, request: WireRequest[Any]) -> EventDecoder:
        return GrpcEvents(self, request)
