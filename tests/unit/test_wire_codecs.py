"""The wire codecs, one per (binding, dialect): requests they build, answers and stream events
they decode, on hand-made answers and on frames recorded from a real a2a-sdk server."""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from a2a_anyio import (
    A2AAuthError,
    A2AClientError,
    A2AConnectionError,
    A2AHTTPError,
    A2AProtocolError,
    A2AServerError,
    AgentCard,
    ExtendedCardNotConfiguredError,
    InvalidParamsError,
    InvalidRequestError,
    Message,
    MethodNotFoundError,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskPage,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_anyio._bindings import CODECS, Fallback, WireCodec, WireRequest, codec_for
from a2a_anyio._bindings.base import GrpcStatus, HttpStatus
from a2a_anyio._bindings.jsonrpc import CallEvents, JsonRpcCodec
from a2a_anyio._bindings.rest import RestCodec
from a2a_anyio._dialects import (
    Call,
    Cancel,
    Dialect,
    ListTasks,
    Op,
    OpArgs,
    PushCreate,
    PushRef,
    Send,
    SendConfig,
    TaskRef,
)
from a2a_anyio._dialects.legacy import LEGACY
from a2a_anyio._dialects.v03 import V02, V03
from a2a_anyio._dialects.v03_rest import V03_REST
from a2a_anyio._dialects.v1 import V1

from ._grpc_serving import serving
from ._support import frame_names, load_frame, sse_payloads

HOST = "https://agent.example.com"
RPC = HOST + "/a2a/jsonrpc"
REST = HOST + "/a2a/rest"
EXT = ("urn:ext:a", "urn:ext:b")

MSG = Message(Role.USER, [TextPart("hi")], message_id="m-1", context_id="c-1", task_id="t-1")
HOOK = PushNotificationConfig(
    url="https://hook.example/h",
    task_id="t-1",
    id="h-1",
    token="tok",
    auth_scheme="Bearer",
    auth_credentials="s",
)
ARGS: dict[Op, OpArgs] = {
    Op.SEND: Send(MSG, SendConfig(blocking=False, history_length=3)),
    Op.STREAM: Send(MSG),
    Op.GET: TaskRef("t-1", 5),
    Op.LIST: ListTasks("c-1", 10, "cur", status=TaskState.WORKING, include_artifacts=True),
    Op.CANCEL: Cancel("t-1", {"why": "done"}),
    Op.SUBSCRIBE: TaskRef("t-1"),
    Op.PUSH_CREATE: PushCreate(HOOK),
    Op.PUSH_GET: PushRef("t-1", "h-1"),
    Op.PUSH_LIST: PushRef("t-1"),
    Op.PUSH_DELETE: PushRef("t-1", "h-1"),
    Op.EXTENDED_CARD: None,
    Op.CALL: Call("ext/do", {"x": 1}),
}
# The tasks/send dialect carries no blocking flag (see below).
LEGACY_SEND: OpArgs = Send(MSG, SendConfig(history_length=3))

V1_MSG = {
    "messageId": "m-1",
    "role": "ROLE_USER",
    "parts": [{"text": "hi"}],
    "contextId": "c-1",
    "taskId": "t-1",
}
V03_MSG = {
    "kind": "message",
    "messageId": "m-1",
    "role": "user",
    "parts": [{"kind": "text", "text": "hi"}],
    "contextId": "c-1",
    "taskId": "t-1",
}
V03_REST_MSG = {
    "messageId": "m-1",
    "role": "ROLE_USER",
    "content": [{"text": "hi"}],
    "contextId": "c-1",
    "taskId": "t-1",
}
LEGACY_MSG = {"role": "user", "parts": [{"type": "text", "text": "hi"}]}
V1_HOOK = {
    "url": "https://hook.example/h",
    "taskId": "t-1",
    "id": "h-1",
    "token": "tok",
    "authentication": {"scheme": "Bearer", "credentials": "s"},
}
V03_HOOK = {
    "url": "https://hook.example/h",
    "id": "h-1",
    "token": "tok",
    "authentication": {"schemes": ["Bearer"], "credentials": "s"},
}
NO_PARAMS = object()

# (version, op, JSON-RPC method, params); NO_PARAMS: the request has no "params" member.
JSONRPC_CASES: list[tuple[str, Op, str, Any]] = [
    ("1.0", Op.SEND, "SendMessage", {"message": V1_MSG, "configuration": {"historyLength": 3, "returnImmediately": True}}),
    ("1.0", Op.STREAM, "SendStreamingMessage", {"message": V1_MSG}),
    ("1.0", Op.GET, "GetTask", {"id": "t-1", "historyLength": 5}),
    ("1.0", Op.LIST, "ListTasks", {"contextId": "c-1", "pageSize": 10, "pageToken": "cur", "status": "TASK_STATE_WORKING", "includeArtifacts": True}),
    ("1.0", Op.CANCEL, "CancelTask", {"id": "t-1", "metadata": {"why": "done"}}),
    ("1.0", Op.SUBSCRIBE, "SubscribeToTask", {"id": "t-1"}),
    ("1.0", Op.PUSH_CREATE, "CreateTaskPushNotificationConfig", V1_HOOK),
    ("1.0", Op.PUSH_GET, "GetTaskPushNotificationConfig", {"taskId": "t-1", "id": "h-1"}),
    ("1.0", Op.PUSH_LIST, "ListTaskPushNotificationConfigs", {"taskId": "t-1"}),
    ("1.0", Op.PUSH_DELETE, "DeleteTaskPushNotificationConfig", {"taskId": "t-1", "id": "h-1"}),
    ("1.0", Op.EXTENDED_CARD, "GetExtendedAgentCard", NO_PARAMS),
    ("1.0", Op.CALL, "ext/do", {"x": 1}),
    ("0.3", Op.SEND, "message/send", {"message": V03_MSG, "configuration": {"blocking": False, "historyLength": 3}}),
    ("0.3", Op.STREAM, "message/stream", {"message": V03_MSG, "configuration": {"blocking": True}}),
    ("0.3", Op.GET, "tasks/get", {"id": "t-1", "historyLength": 5}),
    ("0.3", Op.LIST, "tasks/list", {"contextId": "c-1", "pageSize": 10, "pageToken": "cur", "status": "working", "includeArtifacts": True}),
    ("0.3", Op.CANCEL, "tasks/cancel", {"id": "t-1", "metadata": {"why": "done"}}),
    ("0.3", Op.SUBSCRIBE, "tasks/resubscribe", {"id": "t-1"}),
    ("0.3", Op.PUSH_CREATE, "tasks/pushNotificationConfig/set", {"taskId": "t-1", "pushNotificationConfig": V03_HOOK}),
    ("0.3", Op.PUSH_GET, "tasks/pushNotificationConfig/get", {"id": "t-1", "pushNotificationConfigId": "h-1"}),
    ("0.3", Op.PUSH_LIST, "tasks/pushNotificationConfig/list", {"id": "t-1"}),
    ("0.3", Op.PUSH_DELETE, "tasks/pushNotificationConfig/delete", {"id": "t-1", "pushNotificationConfigId": "h-1"}),
    ("0.3", Op.EXTENDED_CARD, "agent/getAuthenticatedExtendedCard", NO_PARAMS),
    ("0.3", Op.CALL, "ext/do", {"x": 1}),
    ("0.2", Op.SEND, "message/send", {"message": V03_MSG, "configuration": {"blocking": False, "historyLength": 3}}),
    ("0.2", Op.STREAM, "message/stream", {"message": V03_MSG, "configuration": {"blocking": True}}),
    ("0.2", Op.GET, "tasks/get", {"id": "t-1", "historyLength": 5}),
    ("0.2", Op.CANCEL, "tasks/cancel", {"id": "t-1", "metadata": {"why": "done"}}),
    ("0.2", Op.SUBSCRIBE, "tasks/resubscribe", {"id": "t-1"}),
    ("0.2", Op.PUSH_CREATE, "tasks/pushNotificationConfig/set", {"taskId": "t-1", "pushNotificationConfig": V03_HOOK}),
    ("0.2", Op.PUSH_GET, "tasks/pushNotificationConfig/get", {"id": "t-1", "pushNotificationConfigId": "h-1"}),
    ("0.2", Op.PUSH_LIST, "tasks/pushNotificationConfig/list", {"id": "t-1"}),
    ("0.2", Op.PUSH_DELETE, "tasks/pushNotificationConfig/delete", {"id": "t-1", "pushNotificationConfigId": "h-1"}),
    ("0.2", Op.CALL, "ext/do", {"x": 1}),
    ("legacy", Op.SEND, "tasks/send", {"id": "t-1", "sessionId": "c-1", "message": LEGACY_MSG, "historyLength": 3}),
    ("legacy", Op.STREAM, "tasks/sendSubscribe", {"id": "t-1", "sessionId": "c-1", "message": LEGACY_MSG}),
    ("legacy", Op.GET, "tasks/get", {"id": "t-1", "historyLength": 5}),
    ("legacy", Op.CANCEL, "tasks/cancel", {"id": "t-1", "metadata": {"why": "done"}}),
    ("legacy", Op.SUBSCRIBE, "tasks/resubscribe", {"id": "t-1"}),
    ("legacy", Op.PUSH_CREATE, "tasks/pushNotification/set", {"id": "t-1", "pushNotificationConfig": V03_HOOK}),
    ("legacy", Op.PUSH_GET, "tasks/pushNotification/get", {"id": "t-1"}),
    ("legacy", Op.CALL, "ext/do", {"x": 1}),
]  # fmt: skip

V03_REST_PUSH = {
    "parent": "tasks/t-1",
    "configId": "h-1",
    "config": {"name": "tasks/t-1/pushNotificationConfigs/h-1", "pushNotificationConfig": V03_HOOK},
}
# (version, op, HTTP method, path below the interface URL, query, body)
REST_CASES: list[tuple[str, Op, str, str, dict[str, str], Any]] = [
    ("1.0", Op.SEND, "POST", "/message:send", {}, {"message": V1_MSG, "configuration": {"historyLength": 3, "returnImmediately": True}}),
    ("1.0", Op.STREAM, "POST", "/message:stream", {}, {"message": V1_MSG}),
    ("1.0", Op.GET, "GET", "/tasks/t-1", {"historyLength": "5"}, None),
    ("1.0", Op.LIST, "GET", "/tasks", {"contextId": "c-1", "status": "TASK_STATE_WORKING", "pageSize": "10", "pageToken": "cur", "includeArtifacts": "true"}, None),
    ("1.0", Op.CANCEL, "POST", "/tasks/t-1:cancel", {}, {"metadata": {"why": "done"}}),
    ("1.0", Op.SUBSCRIBE, "POST", "/tasks/t-1:subscribe", {}, None),
    ("1.0", Op.PUSH_CREATE, "POST", "/tasks/t-1/pushNotificationConfigs", {}, V1_HOOK),
    ("1.0", Op.PUSH_GET, "GET", "/tasks/t-1/pushNotificationConfigs/h-1", {}, None),
    ("1.0", Op.PUSH_LIST, "GET", "/tasks/t-1/pushNotificationConfigs", {}, None),
    ("1.0", Op.PUSH_DELETE, "DELETE", "/tasks/t-1/pushNotificationConfigs/h-1", {}, None),
    ("1.0", Op.EXTENDED_CARD, "GET", "/extendedAgentCard", {}, None),
    ("0.3", Op.SEND, "POST", "/v1/message:send", {}, {"message": V03_REST_MSG, "configuration": {"blocking": False, "historyLength": 3}}),
    ("0.3", Op.STREAM, "POST", "/v1/message:stream", {}, {"message": V03_REST_MSG, "configuration": {"blocking": True}}),
    ("0.3", Op.GET, "GET", "/v1/tasks/t-1", {"historyLength": "5"}, None),
    ("0.3", Op.LIST, "GET", "/v1/tasks", {"contextId": "c-1", "status": "TASK_STATE_WORKING", "pageSize": "10", "pageToken": "cur", "includeArtifacts": "true"}, None),
    ("0.3", Op.CANCEL, "POST", "/v1/tasks/t-1:cancel", {}, {"metadata": {"why": "done"}}),
    ("0.3", Op.SUBSCRIBE, "POST", "/v1/tasks/t-1:subscribe", {}, None),
    ("0.3", Op.PUSH_CREATE, "POST", "/v1/tasks/t-1/pushNotificationConfigs", {}, V03_REST_PUSH),
    ("0.3", Op.PUSH_GET, "GET", "/v1/tasks/t-1/pushNotificationConfigs/h-1", {}, None),
    ("0.3", Op.PUSH_LIST, "GET", "/v1/tasks/t-1/pushNotificationConfigs", {}, None),
    ("0.3", Op.PUSH_DELETE, "DELETE", "/v1/tasks/t-1/pushNotificationConfigs/h-1", {}, None),
    ("0.3", Op.EXTENDED_CARD, "GET", "/v1/card", {}, None),
]  # fmt: skip


def _json(req: WireRequest[Any]) -> Any:
    assert req.body is not None
    return json.loads(req.body)


def _answer(value: Any) -> bytes:
    return json.dumps(value).encode()


def _rpc(req: WireRequest[Any], result: Any) -> bytes:
    return _answer({"jsonrpc": "2.0", "id": req.request_id, "result": result})


def _rpc_error(req: WireRequest[Any], code: int, message: str = "no", data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _answer({"jsonrpc": "2.0", "id": req.request_id, "error": error})


def _status(reason: str, code: int = 400, message: str = "refused") -> bytes:
    info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}
    return _answer({"error": {"code": code, "message": message, "details": [info]}})


# -- the table ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("binding", "version", "cls", "dialect", "speaks"),
    [
        ("jsonrpc", "1.0", JsonRpcCodec, V1, ("jsonrpc", "1.0")),
        ("JSONRPC", "1.0.1", JsonRpcCodec, V1, ("jsonrpc", "1.0")),
        ("jsonrpc", "1.1", JsonRpcCodec, V1, ("jsonrpc", "1.0")),
        ("jsonrpc", "0.3.0", JsonRpcCodec, V03, ("jsonrpc", "0.3")),
        ("jsonrpc", "0.2.5", JsonRpcCodec, V02, ("jsonrpc", "0.2")),
        ("jsonrpc", "legacy", JsonRpcCodec, LEGACY, ("jsonrpc", "legacy")),
        ("rest", "1.0", RestCodec, V1, ("rest", "1.0")),
        ("HTTP+JSON", "0.3", RestCodec, V03_REST, ("rest", "0.3")),
        ("rest", "0.2.6", RestCodec, V03_REST, ("rest", "0.3")),
    ],
)
def test_codec_for_chooses_by_binding_and_version_family(
    binding: str,
    version: str,
    cls: type[WireCodec],
    dialect: Dialect,
    speaks: tuple[str, str],
) -> None:
    codec = codec_for(binding, version, RPC, extensions=EXT)
    assert type(codec) is cls
    assert codec.dialect is dialect
    assert (codec.binding, codec.version) == speaks
    assert (codec.url, codec.extensions) == (RPC, EXT)


@pytest.mark.parametrize(
    ("binding", "version"), [("jsonrpc", "2.0"), ("grpc", "legacy"), ("rest", "legacy")]
)
def test_codec_for_refuses_pairs_no_codec_speaks(binding: str, version: str) -> None:
    with pytest.raises(ValueError, match="no codec"):
        codec_for(binding, version, RPC)


def test_ops_know_whether_they_repeat_safely_and_stream() -> None:
    idempotent = {op.value for op in Op if op.idempotent}
    reads = {"get", "list", "subscribe", "push_get", "push_list", "extended_card"}
    assert idempotent == reads | {"cancel", "push_delete"}
    assert {op for op in Op if op.streams} == {Op.STREAM, Op.SUBSCRIBE}


# -- encode ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "op", "method", "params"),
    JSONRPC_CASES,
    ids=[f"{c[0]}-{c[1].value}" for c in JSONRPC_CASES],
)
def test_jsonrpc_encode(version: str, op: Op, method: str, params: Any) -> None:
    codec = codec_for("jsonrpc", version, RPC)
    req = codec.encode(op, LEGACY_SEND if (version, op) == ("legacy", Op.SEND) else ARGS[op])
    assert (req.op, req.method, req.url, req.name) == (op, "POST", RPC, method)
    expected = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not NO_PARAMS:
        expected["params"] = params
    assert _json(req) == expected
    assert req.request_id == 1
    assert req.idempotent is op.idempotent
    assert req.streams is op.streams
    assert req.alternative is None


@pytest.mark.parametrize(
    ("version", "op", "method", "path", "query", "body"),
    REST_CASES,
    ids=[f"{c[0]}-{c[1].value}" for c in REST_CASES],
)
def test_rest_encode(
    version: str, op: Op, method: str, path: str, query: dict[str, str], body: Any
) -> None:
    codec = codec_for("rest", version, REST + "/")  # a trailing slash is no extra segment
    req = codec.encode(op, ARGS[op])
    url = urlsplit(req.url)
    assert (req.method, url.scheme, url.netloc, url.path) == (method, "https", "agent.example.com", "/a2a/rest" + path)  # fmt: skip
    assert dict(parse_qsl(url.query)) == query
    assert (json.loads(req.body) if req.body is not None else None) == body
    assert (req.name, req.request_id, req.idempotent) == (f"{method} {path}", None, op.idempotent)


def test_jsonrpc_request_ids_count_per_codec() -> None:
    codec, other = codec_for("jsonrpc", "1.0", RPC), codec_for("jsonrpc", "1.0", RPC)
    ids = [codec.encode(Op.GET, TaskRef("t")).request_id for _ in range(3)]
    assert ids == [1, 2, 3]
    assert other.encode(Op.GET, TaskRef("t")).request_id == 1
    assert _json(codec.encode(Op.GET, TaskRef("t")))["id"] == 4


def test_call_sends_the_method_as_given_and_may_be_idempotent() -> None:
    codec = codec_for("jsonrpc", "1.0", RPC, tenant="acme")
    req = codec.encode(Op.CALL, Call("cstp.query", ["a", 1], idempotent=True))
    assert _json(req) == {"jsonrpc": "2.0", "id": 1, "method": "cstp.query", "params": ["a", 1]}
    assert req.idempotent
    assert "params" not in _json(codec.encode(Op.CALL, Call("ping")))
    assert not codec.encode(Op.CALL, Call("ping")).idempotent


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_a_call_that_may_stream_accepts_both_and_reads_each_events_result(version: str) -> None:
    codec = codec_for("jsonrpc", version, RPC)
    plain = codec.encode(Op.CALL, Call("ext/count"))
    req = codec.encode(Op.CALL, Call("ext/count", {"n": 2}, stream=True))
    assert "Accept" not in plain.headers
    assert req.headers["Accept"] == "application/json, text/event-stream"
    events = codec.event_decoder(req)
    assert isinstance(events, CallEvents)
    # The method's own results, as they came: no A2A event is read from them.
    assert events.decode(json.dumps({"jsonrpc": "2.0", "id": 2, "result": [1, {"n": 2}]})) == [
        1,
        {"n": 2},
    ]
    with pytest.raises(InvalidParamsError) as info:
        events.decode(
            json.dumps({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "no"}})
        )
    assert (info.value.method, info.value.request_id) == ("ext/count", 2)
    with pytest.raises(A2AProtocolError, match="id"):
        events.decode(json.dumps({"jsonrpc": "2.0", "id": 9, "result": 1}))


# Content type, dialect headers and extension opt-ins per codec (what A2AClient._headers sent).
HEADERS = {
    ("jsonrpc", "1.0"): {"Content-Type": "application/json", "A2A-Version": "1.0", "A2A-Extensions": "urn:ext:a,urn:ext:b"},
    ("jsonrpc", "0.3"): {"Content-Type": "application/json", "A2A-Version": "0.3", "A2A-Extensions": "urn:ext:a,urn:ext:b", "X-A2A-Extensions": "urn:ext:a,urn:ext:b"},
    ("jsonrpc", "0.2"): {"Content-Type": "application/json", "A2A-Extensions": "urn:ext:a,urn:ext:b", "X-A2A-Extensions": "urn:ext:a,urn:ext:b"},
    ("jsonrpc", "legacy"): {"Content-Type": "application/json", "A2A-Extensions": "urn:ext:a,urn:ext:b", "X-A2A-Extensions": "urn:ext:a,urn:ext:b"},
    ("rest", "1.0"): {"Content-Type": "application/a2a+json", "A2A-Version": "1.0", "A2A-Extensions": "urn:ext:a,urn:ext:b"},
    ("rest", "0.3"): {"Content-Type": "application/json", "A2A-Version": "0.3", "A2A-Extensions": "urn:ext:a,urn:ext:b", "X-A2A-Extensions": "urn:ext:a,urn:ext:b"},
}  # fmt: skip


@pytest.mark.parametrize(("binding", "version"), list(HEADERS))
def test_headers(binding: str, version: str) -> None:
    expected = HEADERS[binding, version]
    codec = codec_for(binding, version, RPC, extensions=EXT)
    assert dict(codec.encode(Op.GET, TaskRef("t")).headers) == expected
    streamed = codec.encode(Op.SUBSCRIBE, TaskRef("t"))
    assert dict(streamed.headers) == {**expected, "Accept": "text/event-stream"}
    bare = codec_for(binding, version, RPC).encode(Op.GET, TaskRef("t"))
    assert not {"A2A-Extensions", "X-A2A-Extensions"} & set(bare.headers)


def test_tenant_goes_into_v1_params_and_rest_paths() -> None:
    v1 = codec_for("jsonrpc", "1.0", RPC, tenant="acme")
    assert _json(v1.encode(Op.GET, TaskRef("t")))["params"] == {"id": "t", "tenant": "acme"}
    assert _json(v1.encode(Op.EXTENDED_CARD, None))["params"] == {"tenant": "acme"}
    sent = _json(v1.encode(Op.SEND, Send(MSG)))["params"]
    assert sent["tenant"] == "acme"
    v03 = codec_for("jsonrpc", "0.3", RPC, tenant="acme")  # pre-1.0 has no tenants
    assert _json(v03.encode(Op.GET, TaskRef("t")))["params"] == {"id": "t"}
    rest = codec_for("rest", "1.0", REST, tenant="a/b")
    assert rest.encode(Op.GET, TaskRef("t")).url == REST + "/a%2Fb/tasks/t"
    assert "tenant" not in _json(rest.encode(Op.SEND, Send(MSG)))
    old = codec_for("rest", "0.3", REST, tenant="acme")
    assert old.encode(Op.EXTENDED_CARD, None).url == REST + "/acme/v1/card"


def test_rest_urls_are_percent_encoded_and_keep_the_interface_query() -> None:
    codec = codec_for("rest", "1.0", REST + "?key=k%26v")
    req = codec.encode(Op.GET, TaskRef("a/b c?#%", history_length=0))
    assert req.url == REST + "/tasks/a%2Fb%20c%3F%23%25?key=k%26v&historyLength=0"
    assert req.name == "GET /tasks/a%2Fb%20c%3F%23%25"
    listed = codec.encode(Op.LIST, ListTasks("x&y=z", None, updated_after="2026-01-01T00:00:00Z"))
    query = urlsplit(listed.url).query
    assert query == "key=k%26v&contextId=x%26y%3Dz&statusTimestampAfter=2026-01-01T00%3A00%3A00Z"
    pushed = codec.encode(Op.PUSH_DELETE, PushRef("t", "c/1"))
    assert urlsplit(pushed.url).path == "/a2a/rest/tasks/t/pushNotificationConfigs/c%2F1"


def test_v02_extended_card_is_a_plain_get_beside_the_endpoint() -> None:
    codec = codec_for("jsonrpc", "0.2", RPC, extensions=EXT)
    req = codec.encode(Op.EXTENDED_CARD, None)
    assert (req.method, req.url, req.body) == ("GET", HOST + "/agent/authenticatedExtendedCard", None)  # fmt: skip
    assert (req.request_id, req.idempotent) == (None, True)
    assert dict(req.headers) == {"A2A-Extensions": "urn:ext:a,urn:ext:b", "X-A2A-Extensions": "urn:ext:a,urn:ext:b"}  # fmt: skip
    card = {"name": "x", "description": "d", "version": "1", "url": RPC, "skills": []}
    assert isinstance(codec.decode(req, HttpStatus(200), {}, _answer(card)), AgentCard)
    with pytest.raises(A2AAuthError) as info:
        codec.decode(req, HttpStatus(401), {}, b"who are you")
    assert info.value.method == "GET /agent/authenticatedExtendedCard"
    with pytest.raises(ValueError, match="no JSON-RPC request"):
        codec.event_decoder(req)


SUPPORTED = {
    ("jsonrpc", "1.0"): set(Op),
    ("jsonrpc", "0.3"): set(Op),
    ("jsonrpc", "0.2"): set(Op) - {Op.LIST},
    ("jsonrpc", "legacy"): set(Op) - {Op.LIST, Op.PUSH_LIST, Op.PUSH_DELETE, Op.EXTENDED_CARD},
    ("rest", "1.0"): set(Op) - {Op.CALL},
    ("rest", "0.3"): set(Op) - {Op.CALL},
}


@pytest.mark.parametrize(("binding", "version"), list(SUPPORTED))
def test_unsupported_operations_are_refused_by_encode(binding: str, version: str) -> None:
    codec = codec_for(binding, version, RPC)
    assert {op for op in Op if codec.supports(op)} == SUPPORTED[binding, version]
    for op in set(Op) - SUPPORTED[binding, version]:
        with pytest.raises(UnsupportedOperationError) as info:
            codec.encode(op, ARGS[op])
        name = "JSON-RPC" if binding == "jsonrpc" else "HTTP+JSON"
        what = "tasks/send (legacy A2A)" if version == "legacy" else f"A2A v{version}"
        assert info.value.message == f"{op.value} is not part of {what} over {name}"


def test_arguments_that_do_not_fit_the_operation_are_misuse() -> None:
    codec = codec_for("jsonrpc", "1.0", RPC)
    with pytest.raises(ValueError, match="get takes TaskRef, not Cancel"):
        codec.encode(Op.GET, Cancel("t"))
    with pytest.raises(ValueError, match="extended_card takes NoneType"):
        codec.encode(Op.EXTENDED_CARD, TaskRef("t"))
    with pytest.raises(ValueError, match="history_length"):
        codec.encode(Op.SUBSCRIBE, TaskRef("t", 3))
    with pytest.raises(ValueError, match="config_id"):
        codec.encode(Op.PUSH_DELETE, PushRef("t"))
    with pytest.raises(ValueError, match="task_id"):
        codec_for("jsonrpc", "0.3", RPC).encode(
            Op.PUSH_CREATE, PushCreate(PushNotificationConfig("https://h"))
        )


# -- alternatives ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "0.3"])
def test_rest_subscribe_is_sent_again_as_get_after_a_405(version: str) -> None:
    codec = codec_for("rest", version, REST)
    req = codec.encode(Op.SUBSCRIBE, TaskRef("t-1"))
    alt = req.alternative
    assert alt is not None
    assert (req.method, req.when, alt.method, alt.body, alt.url) == ("POST", Fallback.METHOD_NOT_ALLOWED, "GET", None, req.url)  # fmt: skip
    assert alt.name.startswith("GET /") and alt.name.endswith("/tasks/t-1:subscribe")
    assert alt.alternative is None and alt.headers["Accept"] == "text/event-stream"
    with pytest.raises(A2AHTTPError) as info:
        codec.decode(req, HttpStatus(405), {}, b"Method Not Allowed")
    assert req.alternative_for(info.value) is alt
    with pytest.raises(A2AHTTPError) as info:
        codec.decode(req, HttpStatus(404), {}, b"Not Found")
    assert req.alternative_for(info.value) is None
    assert alt.alternative_for(A2AHTTPError(status_code=405)) is None  # once


def test_v03_rest_push_create_has_a_second_body_shape() -> None:
    codec = codec_for("rest", "0.3", REST)
    req = codec.encode(Op.PUSH_CREATE, PushCreate(HOOK))
    alt = req.alternative
    assert alt is not None and req.when is Fallback.REJECTED
    assert (alt.method, alt.url, alt.alternative) == ("POST", req.url, None)
    assert _json(alt) == {"name": "tasks/t-1/pushNotificationConfigs/h-1", "pushNotificationConfig": V03_HOOK}  # fmt: skip
    for rejected in (
        A2AHTTPError(status_code=400),
        A2AHTTPError(status_code=500),
        InvalidParamsError("bad shape"),
    ):
        assert req.alternative_for(rejected) is alt
    for kept in (
        A2AAuthError(status_code=403),
        TaskNotFoundError(task_id="t-1"),
        A2AConnectionError("reset"),
    ):
        assert req.alternative_for(kept) is None
    assert codec_for("rest", "1.0", REST).encode(Op.PUSH_CREATE, PushCreate(HOOK)).alternative is None  # fmt: skip


# -- decode: results ------------------------------------------------------------------------

V1_TASK = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
V1_REPLY = {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "ok"}]}
V03_TASK = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "working"}}


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
def test_v1_results_per_operation(binding: str) -> None:
    codec = codec_for(binding, "1.0", RPC)

    def decode(op: Op, value: Any) -> Any:
        req = codec.encode(op, ARGS[op])
        body = _rpc(req, value) if binding == "jsonrpc" else _answer(value)
        return codec.decode(req, HttpStatus(200), {}, body)

    sent = decode(Op.SEND, {"task": V1_TASK})
    assert isinstance(sent, Task) and sent.state is TaskState.WORKING
    assert isinstance(decode(Op.SEND, {"message": V1_REPLY}), Message)
    assert isinstance(decode(Op.STREAM, {"message": V1_REPLY}), Message)  # no stream: one event
    assert isinstance(decode(Op.SUBSCRIBE, {"task": V1_TASK}), Task)
    assert decode(Op.GET, V1_TASK).id == "t-1"
    assert decode(Op.CANCEL, V1_TASK).context_id == "c-1"
    page = decode(Op.LIST, {"tasks": [V1_TASK], "nextPageToken": "n", "pageSize": 1, "totalSize": 2})  # fmt: skip
    assert isinstance(page, TaskPage) and (page.next_cursor, page.total_size) == ("n", 2)
    assert decode(Op.PUSH_CREATE, V1_HOOK) == HOOK
    assert decode(Op.PUSH_GET, V1_HOOK) == HOOK
    assert decode(Op.PUSH_LIST, {"configs": [V1_HOOK]}) == [HOOK]
    assert decode(Op.PUSH_DELETE, {}) is None
    card = decode(Op.EXTENDED_CARD, {"name": "x", "description": "d", "version": "1", "url": RPC})
    assert isinstance(card, AgentCard) and card.name == "x"
    if binding == "jsonrpc":
        assert decode(Op.CALL, {"any": ["json"]}) == {"any": ["json"]}
        req = codec.encode(Op.PUSH_DELETE, ARGS[Op.PUSH_DELETE])
        no_result = _answer({"jsonrpc": "2.0", "id": req.request_id})  # a null result left out
        assert codec.decode(req, HttpStatus(200), {}, no_result) is None
    else:
        req = codec.encode(Op.PUSH_DELETE, ARGS[Op.PUSH_DELETE])
        assert codec.decode(req, HttpStatus(204), {}, b"") is None


def test_v03_results_over_both_bindings() -> None:
    rpc = codec_for("jsonrpc", "0.3", RPC)
    req = rpc.encode(Op.SEND, ARGS[Op.SEND])
    assert rpc.decode(req, HttpStatus(200), {}, _rpc(req, V03_TASK)) == rpc.dialect.decode(
        Op.GET, V03_TASK
    )
    req = rpc.encode(Op.PUSH_LIST, ARGS[Op.PUSH_LIST])
    configs = rpc.decode(req, HttpStatus(200), {}, _rpc(req, [{"taskId": "t-1", "pushNotificationConfig": V03_HOOK}]))  # fmt: skip
    assert configs == [HOOK]
    rest = codec_for("rest", "0.3", REST)
    req = rest.encode(Op.GET, ARGS[Op.GET])
    task = rest.decode(req, HttpStatus(200), {}, _answer({"id": "t-1", "status": {"state": "TASK_STATE_CANCELLED"}}))  # fmt: skip
    assert task.state is TaskState.CANCELED
    req = rest.encode(Op.PUSH_GET, ARGS[Op.PUSH_GET])
    named = {"name": "tasks/t-1/pushNotificationConfigs/h-1", "pushNotificationConfig": {**V03_HOOK, "id": None}}  # fmt: skip
    assert rest.decode(req, HttpStatus(200), {}, _answer(named)) == HOOK


def test_legacy_results() -> None:
    codec = codec_for("jsonrpc", "legacy", RPC)
    req = codec.encode(Op.SEND, LEGACY_SEND)
    legacy = {"id": "t-1", "sessionId": "c-1", "status": {"state": "completed"}}
    task = codec.decode(req, HttpStatus(200), {}, _rpc(req, legacy))
    assert (task.id, task.context_id, task.state) == ("t-1", "c-1", TaskState.COMPLETED)
    req = codec.encode(Op.PUSH_GET, ARGS[Op.PUSH_GET])
    config = codec.decode(req, HttpStatus(200), {}, _rpc(req, {"id": "t-1", "pushNotificationConfig": V03_HOOK}))  # fmt: skip
    assert config == HOOK


def test_a_legacy_send_carries_no_blocking_flag() -> None:
    """tasks/send has no blocking flag: a non-blocking send is the same request (the client
    alone decides whether to follow an unfinished task up)."""
    codec = codec_for("jsonrpc", "legacy", RPC)
    blocking = json.loads(codec.encode(Op.SEND, LEGACY_SEND).body or b"")
    free = json.loads(codec.encode(Op.SEND, ARGS[Op.SEND]).body or b"")
    for params in (blocking["params"], free["params"]):
        params.pop("id"), params.pop("sessionId")  # new task and session ids each time
        params["message"].pop("messageId", None)
    assert blocking["params"] == free["params"]
    assert "blocking" not in json.dumps(free["params"])


# -- decode: errors -------------------------------------------------------------------------


def _raises(codec: WireCodec, req: WireRequest[Any], status: int, body: bytes, **headers: str) -> A2AClientError:  # fmt: skip
    with pytest.raises(A2AClientError) as info:
        codec.decode(req, HttpStatus(status), headers, body)
    return info.value


def test_jsonrpc_errors_are_typed_and_say_which_call() -> None:
    codec = codec_for("jsonrpc", "1.0", RPC)
    codec.encode(Op.SEND, ARGS[Op.SEND])  # id 1: the request below is id 2
    req = codec.encode(Op.GET, TaskRef("t-9"))
    err = _raises(codec, req, 200, _rpc_error(req, -32001, "gone"))
    assert isinstance(err, TaskNotFoundError)
    assert (err.task_id, err.code, err.message, err.method, err.request_id) == ("t-9", -32001, "gone", "GetTask", 2)  # fmt: skip
    # JSON-RPC errors are honoured whatever the status.
    assert isinstance(_raises(codec, req, 500, _rpc_error(req, -32009)), VersionNotSupportedError)
    info = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "EXTENDED_AGENT_CARD_NOT_CONFIGURED"}]  # fmt: skip
    err = _raises(codec, req, 200, _rpc_error(req, -32099, data=info))
    assert isinstance(err, ExtendedCardNotConfiguredError) and err.reason == "EXTENDED_AGENT_CARD_NOT_CONFIGURED"  # fmt: skip
    wrong_id = _answer({"jsonrpc": "2.0", "id": 99, "result": V1_TASK})
    assert isinstance(_raises(codec, req, 200, wrong_id), A2AProtocolError)
    assert isinstance(_raises(codec, req, 200, b"<html>"), A2AProtocolError)
    assert isinstance(_raises(codec, req, 200, b'{"ok": true}'), A2AProtocolError)
    err = _raises(codec, req, 200, _rpc(req, {"id": "t"}))  # a task without a status
    assert isinstance(err, A2AProtocolError) and err.method == "GetTask"


def test_error_codes_are_read_in_the_codecs_version() -> None:
    for version, cls in (("1.0", VersionNotSupportedError), ("0.3", A2AServerError)):
        codec = codec_for("jsonrpc", version, RPC)
        req = codec.encode(Op.GET, TaskRef("t"))
        err = _raises(codec, req, 200, _rpc_error(req, -32009))
        assert type(err) is cls and isinstance(err, A2AServerError) is (version == "0.3")


@pytest.mark.parametrize(("binding", "version"), list(SUPPORTED))
def test_http_errors_of_every_codec(binding: str, version: str) -> None:
    codec = codec_for(binding, version, RPC)
    req = codec.encode(Op.GET, TaskRef("t-1"))
    for status in (401, 403):
        err = _raises(codec, req, status, b"denied")
        assert isinstance(err, A2AAuthError) and err.status_code == status
        assert (err.method, err.request_id) == (req.name, req.request_id)
    err = _raises(codec, req, 503, b"busy", **{"Retry-After": "7"})
    assert isinstance(err, A2AHTTPError) and not isinstance(err, A2AAuthError)
    assert (err.status_code, err.retry_after, err.retryable) == (503, 7.0, True)
    err = _raises(codec, req, 429, b"slow down", **{"retry-after": "2"})
    assert isinstance(err, A2AHTTPError) and err.retry_after == 2.0
    err = _raises(codec, req, 502, b"<html>bad gateway</html>")
    assert isinstance(err, A2AHTTPError) and err.retry_after is None
    assert isinstance(_raises(codec, req, 200, b"not json"), A2AProtocolError)


def test_rest_errors_by_reason_class_name_and_status() -> None:
    codec = codec_for("rest", "1.0", REST)
    req = codec.encode(Op.GET, TaskRef("t-9"))
    err = _raises(codec, req, 404, _status("TASK_NOT_FOUND", 404))
    assert isinstance(err, TaskNotFoundError)
    assert (err.task_id, err.reason, err.method, err.request_id) == ("t-9", "TASK_NOT_FOUND", "GET /tasks/t-9", None)  # fmt: skip
    assert isinstance(_raises(codec, req, 400, _status("TASK_NOT_CANCELABLE")), TaskNotCancelableError)  # fmt: skip
    assert isinstance(_raises(codec, req, 400, _status("VERSION_NOT_SUPPORTED")), VersionNotSupportedError)  # fmt: skip
    named = _answer({"type": "TaskNotFoundError", "message": "no"})
    assert isinstance(_raises(codec, req, 404, named), TaskNotFoundError)
    rpc_shaped = _answer({"error": {"code": -32602, "message": "bad"}})
    assert isinstance(_raises(codec, req, 400, rpc_shaped), InvalidParamsError)
    plain = _raises(codec, req, 404, b"Not Found")  # a wrong path, not a missing task
    assert type(plain) is A2AHTTPError and plain.status_code == 404
    old = codec_for("rest", "0.3", REST)
    cancel = old.encode(Op.CANCEL, Cancel("t-1"))
    for status, cls in ((409, TaskNotCancelableError), (422, InvalidParamsError), (501, UnsupportedOperationError)):  # fmt: skip
        err = _raises(old, cancel, status, _answer({"message": "says the server"}))
        assert type(err) is cls and err.message == "says the server"


def test_an_optional_operation_answered_as_missing_is_unsupported() -> None:
    """A v0.3 agent may not list tasks: its method-not-found answer to tasks/list (JSON-RPC
    -32601; over HTTP+JSON a 404, 405 or 501 without an A2A error) is
    UnsupportedOperationError, caused by that answer. Other answers, and the same answers to
    operations every agent of the dialect serves, keep their own type."""
    rpc = codec_for("jsonrpc", "0.3", RPC)
    req = rpc.encode(Op.LIST, ARGS[Op.LIST])
    err = _raises(rpc, req, 200, _rpc_error(req, -32601, "Method not found"))
    assert type(err) is UnsupportedOperationError and isinstance(err.__cause__, MethodNotFoundError)
    assert err.message == "the agent does not serve tasks/list (it answered: Method not found)"
    assert (err.agent, err.method, err.operation, err.request_id) == (RPC, "tasks/list", "list", req.request_id)  # fmt: skip
    assert type(_raises(rpc, req, 200, _rpc_error(req, -32602))) is InvalidParamsError
    assert (
        type(_raises(rpc, req, 404, b"Not Found")) is A2AHTTPError
    )  # the endpoint, not the method
    get = rpc.encode(Op.GET, TaskRef("t-1"))
    assert type(_raises(rpc, get, 200, _rpc_error(get, -32601))) is MethodNotFoundError
    v1 = codec_for("jsonrpc", "1.0", RPC)  # ListTasks is no option in v1.0: another dialect?
    req = v1.encode(Op.LIST, ARGS[Op.LIST])
    assert type(_raises(v1, req, 200, _rpc_error(req, -32601))) is MethodNotFoundError

    rest = codec_for("rest", "0.3", REST)
    req = rest.encode(Op.LIST, ARGS[Op.LIST])
    for status, body in ((404, b"Not Found"), (405, b"Method Not Allowed"), (501, b"")):
        err = _raises(rest, req, status, body)
        assert type(err) is UnsupportedOperationError and err.method == "GET /v1/tasks"
        assert isinstance(err.__cause__, A2AHTTPError) and err.__cause__.status_code == status
    unknown = _raises(rest, req, 500, _answer({"message": "unknown exception"}))  # a2a-sdk 0.3
    assert type(unknown) is A2AHTTPError and unknown.status_code == 500
    get = rest.encode(Op.GET, TaskRef("t-1"))
    assert type(_raises(rest, get, 404, b"Not Found")) is A2AHTTPError


# -- stream events --------------------------------------------------------------------------


def _events(binding: str, version: str) -> tuple[WireCodec, WireRequest[Any]]:
    codec = codec_for(binding, version, RPC)
    return codec, codec.encode(Op.STREAM, Send(MSG))


def test_jsonrpc_events_are_id_checked_and_unwrapped() -> None:
    codec, req = _events("jsonrpc", "1.0")
    events = codec.event_decoder(req)
    data = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_WORKING"}}}})  # fmt: skip
    event = events.decode(data)
    assert isinstance(event, TaskStatusUpdateEvent) and event.status.state is TaskState.WORKING
    assert events.decode("  \n" + data) == event  # leading whitespace
    with pytest.raises(A2AProtocolError) as info:
        events.decode(data.replace('"id": 1', '"id": 2'))
    assert (info.value.method, info.value.request_id) == ("SendStreamingMessage", 1)
    with pytest.raises(UnsupportedOperationError) as error:
        events.decode(json.dumps({"jsonrpc": "2.0", "id": 1, "error": {"code": -32004, "message": "terminal"}}))  # fmt: skip
    assert error.value.request_id == 1
    for bad in ("{not json", data + " {}", '{"jsonrpc": "2.0", "id": 1, "result": {"bogus": 1}}'):
        with pytest.raises(A2AProtocolError):
            events.decode(bad)


def test_jsonrpc_events_read_in_place_as_unwrap_reads_them() -> None:
    # The usual envelope is read in place; every other goes to unwrap, as before.
    codec, req = _events("jsonrpc", "1.0")
    events = codec.event_decoder(req)
    result = {"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_WORKING"}}}
    usual = events.decode(json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}))
    for odd in (
        {"jsonrpc": "2.0", "id": "1", "result": result},  # the id echoed as a string
        {"jsonrpc": "2.0", "id": 1, "result": result, "error": None},  # a null error beside it
    ):
        assert events.decode(json.dumps(odd)) == usual
    for bad in (
        {"jsonrpc": "2.0", "id": 1, "result": None},
        {"jsonrpc": "2.0", "id": None, "result": result},
        {"jsonrpc": "2.0", "result": result},
        [result],
    ):
        with pytest.raises(A2AProtocolError) as info:
            events.decode(json.dumps(bad))
        assert info.value.request_id == 1
    with pytest.raises(UnsupportedOperationError):
        events.decode(json.dumps({"jsonrpc": "2.0", "id": 1, "result": result, "error": {"code": -32004, "message": "no"}}))  # fmt: skip


def test_rest_events_raise_the_error_they_carry() -> None:
    codec, req = _events("rest", "1.0")
    events = codec.event_decoder(req)
    assert isinstance(events.decode(json.dumps({"message": V1_REPLY})), Message)
    with pytest.raises(TaskNotFoundError) as info:
        events.decode(_status("TASK_NOT_FOUND").decode())
    assert info.value.method == "POST /message:stream"
    with pytest.raises(A2AProtocolError):
        events.decode("data: oops")


# (binding, version, event payload as the stream carries it, ends the stream?)
ENDS: list[tuple[str, str, Any, bool]] = [
    ("jsonrpc", "1.0", {"task": {**V1_TASK, "status": {"state": "TASK_STATE_WORKING"}}}, False),
    # A stream's opening snapshot may be the task before the message (the JS SDK's follow-ups).
    ("jsonrpc", "1.0", {"task": {**V1_TASK, "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}}, False),
    ("jsonrpc", "1.0", {"task": {**V1_TASK, "status": {"state": "TASK_STATE_COMPLETED"}}}, True),
    ("jsonrpc", "1.0", {"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_AUTH_REQUIRED"}}}, True),
    ("jsonrpc", "1.0", {"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}}, False),
    ("jsonrpc", "1.0", {"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "a", "parts": []}, "lastChunk": True}}, False),
    ("jsonrpc", "1.0", {"message": V1_REPLY}, True),
    ("jsonrpc", "0.3", {**V03_TASK, "status": {"state": "input-required"}}, False),
    ("jsonrpc", "0.3", {**V03_TASK, "status": {"state": "failed"}}, True),
    ("jsonrpc", "0.3", {"kind": "status-update", "taskId": "t", "status": {"state": "input-required"}, "final": False}, False),
    ("jsonrpc", "0.3", {"kind": "status-update", "taskId": "t", "status": {"state": "input-required"}, "final": True}, True),
    ("jsonrpc", "0.3", {"kind": "message", "messageId": "r", "role": "agent", "parts": []}, True),
    ("jsonrpc", "legacy", {"id": "t", "status": {"state": "working"}, "final": True}, True),
    ("jsonrpc", "legacy", {"id": "t", "status": {"state": "working"}}, False),
    ("rest", "1.0", {"task": {**V1_TASK, "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}}, False),
    ("rest", "0.3", {"task": {**V1_TASK, "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}}, False),
    ("rest", "0.3", {"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}, "final": True}}, True),
    ("rest", "0.3", {"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_CANCELLED"}}}, True),
]  # fmt: skip


@pytest.mark.parametrize(("binding", "version", "payload", "ends"), ENDS)
def test_end_of_stream_per_dialect(binding: str, version: str, payload: Any, ends: bool) -> None:
    codec, req = _events(binding, version)
    if binding == "jsonrpc":
        payload = {"jsonrpc": "2.0", "id": req.request_id, "result": payload}
    events = codec.event_decoder(req)
    assert events.ends(events.decode(json.dumps(payload))) is ends


# Streams of whole tasks, no kind and no final flag: (version, the task as the stream carries
# it). The snapshot that opens a stream may be the state a continued task had before.
SNAPSHOTS = [
    ("0.3", {"id": "t-1", "contextId": "c-1"}),
    ("legacy", {"id": "t-1", "sessionId": "c-1"}),
]


@pytest.mark.parametrize(("version", "task"), SNAPSHOTS)
def test_a_stream_of_whole_tasks_ends_on_the_first_final_state(
    version: str, task: dict[str, Any]
) -> None:
    def snapshot(state: str, **more: Any) -> str:
        value = {**task, "status": {"state": state}, **more}
        return json.dumps({"jsonrpc": "2.0", "id": req.request_id, "result": value})

    codec, req = _events("jsonrpc", version)
    events = codec.event_decoder(req)
    assert not events.ends(events.decode(snapshot("input-required")))  # opens: may be stale
    assert not events.ends(events.decode(snapshot("working")))
    done = events.decode(snapshot("input-required", artifacts=[{"parts": [{"text": "x"}]}]))
    assert isinstance(done, Task)
    assert events.ends(done)
    assert done.artifacts[0].text == "x"  # a whole task, not a status update
    # a terminal state ends the stream even where it opens it
    fresh = codec.event_decoder(req)
    assert fresh.ends(fresh.decode(snapshot("completed")))


# -- recorded frames ------------------------------------------------------------------------

# frames directory -> (binding, version, interface URL path on the recording server)
FRAME_DIRS = {"v1_0": ("jsonrpc", "1.0"), "v0_3": ("jsonrpc", "0.3"), "v1_0_rest": ("rest", "1.0")}
_FRAME_OPS = {
    "get_task": Op.GET,
    "error_task_not_found": Op.GET,
    "list_tasks": Op.LIST,
    "cancel_task": Op.CANCEL,
    "error_task_not_cancelable": Op.CANCEL,
    "subscribe": Op.SUBSCRIBE,
    "subscribe_get": Op.SUBSCRIBE,
    "error_subscribe_terminal": Op.SUBSCRIBE,
    "push_config_create": Op.PUSH_CREATE,
    "push_config_get": Op.PUSH_GET,
    "push_config_list": Op.PUSH_LIST,
    "push_config_delete": Op.PUSH_DELETE,
    "extended_card": Op.EXTENDED_CARD,
}
ALL_FRAMES = [(d, n) for d in FRAME_DIRS for n in frame_names(d) if n != "card"]


def _frame_codec(directory: str, name: str) -> WireCodec:
    binding, version = FRAME_DIRS[directory]
    if name == "quirk_v03_path_as_tenant":  # /a2a/rest/v1/...: "v1" taken as a tenant
        return codec_for(binding, version, REST, tenant="v1")
    return codec_for(binding, version, RPC if binding == "jsonrpc" else REST)


def _frame_request(codec: WireCodec, name: str, frame: dict[str, Any]) -> WireRequest[Any]:
    """Our request for the call the recorder made, with the recorded JSON-RPC id."""
    recorded = frame["request"]
    body = recorded["body"]
    params = (body.get("params") if codec.binding == "jsonrpc" else body) or {}
    if codec.binding == "jsonrpc":
        task = params.get("taskId") or params.get("id") or ""
    else:
        found = re.search(r"/tasks/([^/:?]+)", recorded["path"])
        task = found.group(1) if found else ""
    op: Op
    args: OpArgs
    if codec.binding == "jsonrpc" and name == "error_method_not_found":
        op, args = Op.CALL, Call(body["method"], body.get("params"))
    elif name == "error_method_not_found":  # an unrouted REST path: decoded as any call
        op, args = Op.CANCEL, Cancel(task)
    elif "message" in params:
        op = Op.STREAM if name.startswith("stream") else Op.SEND
        conf = params.get("configuration") or {}
        blocking = not conf.get("returnImmediately", False) and conf.get("blocking", True)
        args = Send(codec.dialect.decode_message(params["message"]), SendConfig(blocking))
    else:
        op = _FRAME_OPS[name]
        if op is Op.GET:
            query = dict(parse_qsl(urlsplit(recorded["path"]).query))
            history = params.get("historyLength", query.get("historyLength"))
            args = TaskRef(task, int(history) if history is not None else None)
        elif op is Op.LIST:
            query = dict(parse_qsl(urlsplit(recorded["path"]).query))
            args = ListTasks(params.get("contextId", query.get("contextId")), None)
        elif op is Op.CANCEL:
            args = Cancel(task)
        elif op is Op.SUBSCRIBE:
            args = TaskRef(task)
        elif op is Op.PUSH_CREATE:
            args = PushCreate(_hook(task))
        elif op in (Op.PUSH_GET, Op.PUSH_DELETE):
            args = PushRef(task, "hook-1")
        elif op is Op.PUSH_LIST:
            args = PushRef(task)
        else:
            args = None
    req = codec.encode(op, args)
    if codec.binding == "jsonrpc":
        req = dataclasses.replace(req, request_id=body["id"])
    return req


def _hook(task_id: str) -> PushNotificationConfig:
    return PushNotificationConfig(
        url="https://client.example.com/a2a-hook",
        task_id=task_id,
        id="hook-1",
        token="hook-token-123",
        auth_scheme="Bearer",
        auth_credentials="hook-secret",
    )


# Requests the recorder made malformed on purpose: our codecs cannot (and should not) say them.
_MALFORMED = {("v0_3", "error_invalid_params"), ("v1_0_rest", "error_method_not_found")}
ENCODABLE = [f for f in ALL_FRAMES if f not in _MALFORMED]


@pytest.mark.parametrize(("directory", "name"), ENCODABLE, ids=[f"{d}/{n}" for d, n in ENCODABLE])
def test_encoded_requests_match_the_recorded_ones(directory: str, name: str) -> None:
    frame = load_frame(directory, name)
    codec = _frame_codec(directory, name)
    req = _frame_request(codec, name, frame)
    recorded = frame["request"]
    if name == "subscribe_get":  # the recorder sent the GET form: our alternative
        assert req.alternative is not None
        req = req.alternative
    url = urlsplit(req.url)
    assert req.method == recorded["method"]
    assert url.path + (f"?{url.query}" if url.query else "") == recorded["path"]
    sent = json.loads(req.body) if req.body is not None else None
    expected = recorded["body"]
    if codec.binding == "rest":
        if req.op is Op.SUBSCRIBE and req.method == "POST":  # the recorder sent {}, we no body
            expected = None
        if name == "push_config_create":  # we also name the task in the body
            expected = {**expected, "taskId": req.task_id}
    elif codec.version == "0.3" and req.op in (Op.SEND, Op.STREAM):
        # We always say whether to block; the recorder left it to the server's default (true).
        expected = {**expected, "params": {"configuration": {"blocking": True}, **expected["params"]}}  # fmt: skip
    if sent is not None and codec.binding == "jsonrpc":
        sent["id"] = recorded["body"]["id"]
    assert sent == expected
    if codec.version == "1.0" and name != "error_version_not_supported":
        assert req.headers["A2A-Version"] == recorded["headers"]["a2a-version"]
        assert req.headers["Content-Type"] == recorded["headers"].get("content-type", req.headers["Content-Type"])  # fmt: skip


_SEND_STATES = {
    "send_message_task": TaskState.COMPLETED,
    "send_message_continue": TaskState.COMPLETED,
    "quirk_v03_path_as_tenant": TaskState.COMPLETED,
    "send_message_failed": TaskState.FAILED,
    "send_message_input_required": TaskState.INPUT_REQUIRED,
}
_ERRORS: dict[str, type[A2AClientError]] = {
    "error_task_not_found": TaskNotFoundError,
    "error_task_not_cancelable": TaskNotCancelableError,
    "error_method_not_found": MethodNotFoundError,
    "error_invalid_params": InvalidParamsError,
    "error_version_not_supported": VersionNotSupportedError,
    "error_subscribe_terminal": UnsupportedOperationError,
}


def _check_result(name: str, req: WireRequest[Any], result: Any) -> None:
    op = req.op
    if op is Op.SEND:
        if name == "send_message_message":
            assert isinstance(result, Message) and result.role is Role.AGENT
        elif name in _SEND_STATES:
            assert isinstance(result, Task) and result.state is _SEND_STATES[name]
        else:  # returned at once
            assert isinstance(result, Task) and not result.state.is_final
    elif op is Op.GET:
        assert isinstance(result, Task) and result.id == req.task_id
        assert result.state is TaskState.COMPLETED
    elif op is Op.CANCEL:
        assert isinstance(result, Task) and result.state is TaskState.CANCELED
    elif op is Op.LIST:
        assert isinstance(result, TaskPage) and len(result.tasks) == 1
    elif op in (Op.PUSH_CREATE, Op.PUSH_GET):
        assert result == _hook(req.task_id or "")
    elif op is Op.PUSH_LIST:
        assert result == [_hook(req.task_id or "")]
    elif op is Op.PUSH_DELETE:
        assert result is None
    else:
        assert op is Op.EXTENDED_CARD
        assert isinstance(result, AgentCard)
        assert [s.id for s in result.skills] == ["echo", "extended-skill"]


def _check_events(directory: str, name: str, events: list[Any], ends: list[bool]) -> None:
    kinds = [type(e) for e in events]
    if name == "stream_message":
        assert kinds == [Task, TaskStatusUpdateEvent] + [TaskArtifactUpdateEvent] * 3 + [TaskStatusUpdateEvent]  # fmt: skip
        assert events[-1].status.state is TaskState.COMPLETED
    elif name == "stream_message_reply":
        assert kinds == [Message]
    elif name == "stream_input_required":
        assert kinds == [Task, TaskStatusUpdateEvent]
        assert events[-1].status.state is TaskState.INPUT_REQUIRED
    else:
        assert name in ("subscribe", "subscribe_get")
        assert kinds == [Task, TaskStatusUpdateEvent]
        assert events[0].state is TaskState.WORKING
        assert events[-1].status.state is TaskState.CANCELED
    # Only the last event ends the stream; the v0.3 layer sends final: false on an interrupted
    # state and then closes (the stream follower takes that as a normal end).
    last = not (directory == "v0_3" and name == "stream_input_required")
    assert ends == [False] * (len(events) - 1) + [last]


@pytest.mark.parametrize(("directory", "name"), ALL_FRAMES, ids=[f"{d}/{n}" for d, n in ALL_FRAMES])
def test_recorded_answers_decode(directory: str, name: str) -> None:
    frame = load_frame(directory, name)
    codec = _frame_codec(directory, name)
    req = _frame_request(codec, name, frame)
    resp = frame["response"]
    expected_error = _ERRORS.get(name)
    if codec.binding == "rest" and name == "error_method_not_found":
        expected_error = A2AHTTPError  # no route: a plain-text 404
    if codec.version == "0.3" and name == "error_invalid_params":
        expected_error = InvalidRequestError  # the 1.x server's answer to a v0.3 schema violation
    if "sse" in resp:
        decoder = codec.event_decoder(req)
        if expected_error is not None:
            with pytest.raises(expected_error) as info:
                for payload in sse_payloads(resp["sse"]):
                    decoder.decode(json.dumps(payload))
            assert (info.value.method, info.value.request_id) == (req.name, req.request_id)
            return
        events = [decoder.decode(json.dumps(p)) for p in sse_payloads(resp["sse"])]
        _check_events(directory, name, events, [decoder.ends(e) for e in events])
        return
    body = resp["body"]
    raw = body.encode() if isinstance(body, str) else _answer(body)
    headers = {"content-type": resp["content_type"]}
    if expected_error is None:
        _check_result(name, req, codec.decode(req, HttpStatus(resp["status"]), headers, raw))
        return
    with pytest.raises(expected_error) as info:
        codec.decode(req, HttpStatus(resp["status"]), headers, raw)
    err = info.value
    assert (err.method, err.request_id) == (req.name, req.request_id)
    if isinstance(err, TaskNotFoundError):
        assert err.task_id == "no-such-task"


def test_every_frame_directory_is_recorded() -> None:
    for directory in FRAME_DIRS:
        assert len(frame_names(directory)) >= 20, f"tests/frames/{directory} looks empty"


def test_every_codec_in_the_table_encodes_and_decodes_a_get() -> None:
    for (binding, version), (cls, dialect) in CODECS.items():
        codec = codec_for(binding, version, RPC)
        module, name = cls.split(":")
        assert type(codec).__module__ == f"a2a_anyio._bindings.{module}"
        assert type(codec).__name__ == name
        module, name = dialect.split(":")
        assert codec.dialect is getattr(
            importlib.import_module(f"a2a_anyio._dialects.{module}"), name
        )
        req = codec.encode(Op.GET, TaskRef("t-1"))
        if binding == "grpc":  # a Task message, and the gRPC status OK
            done = Task("t-1", "c-1", TaskStatus(TaskState.COMPLETED))
            answer = serving(codec).encode_result(Op.GET, done)
            assert codec.decode(req, GrpcStatus(0), {}, answer) == done
            continue
        task = {"id": "t-1", "status": {"state": "completed"}}
        body = _rpc(req, task) if binding == "jsonrpc" else _answer(task)
        assert codec.decode(req, HttpStatus(200), {}, body).state is TaskState.COMPLETED
