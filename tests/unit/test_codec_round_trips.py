"""The codecs run both ways: what a client encodes a server decodes, and what a server encodes
a client decodes, for every operation of every codec (the testing kit serves with them)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from a2a_anyio import (
    A2ARPCError,
    Artifact,
    DataPart,
    FilePart,
    InvalidParamsError,
    InvalidRequestError,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    StreamEvent,
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
from a2a_anyio._bindings import JsonRpcCodec, WireCodec, WireRequest, codec_for
from a2a_anyio._bindings.base import HttpStatus
from a2a_anyio._bindings.jsonrpc import PLAIN_GETS, read_request
from a2a_anyio._bindings.rest import RestCodec
from a2a_anyio._dialects import (
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
from a2a_anyio._dialects.v03 import V03
from a2a_anyio._dialects.v1 import V1
from a2a_anyio._errors import ParseError
from a2a_anyio.push import decode_notification

URLS = {"jsonrpc": "https://agent.example.com/a2a", "rest": "https://agent.example.com/a2a/rest"}
CODECS = [
    ("jsonrpc", "1.0"),
    ("jsonrpc", "0.3"),
    ("jsonrpc", "0.2"),
    ("jsonrpc", "legacy"),
    ("jsonrpc", "python-a2a"),
    ("rest", "1.0"),
    ("rest", "0.3"),
]
PARTS: list[Part] = [
    TextPart("hi"),
    DataPart({"n": 1}),
    FilePart(data=b"\x89PNG", media_type="image/png", name="a.png"),
    FilePart(url="https://files.example/r.pdf", media_type="application/pdf"),
]
MSG = Message(Role.USER, PARTS, message_id="m-1", context_id="c-1", task_id="t-1")
HOOK = PushNotificationConfig(
    url="https://hook.example/h",
    task_id="t-1",
    id="h-1",
    token="tok",
    auth_scheme="Bearer",
    auth_credentials="s",
)
CONFIG = SendConfig(False, 3, ["text/plain"], HOOK, {"skillId": "s"})
ARGS: dict[Op, OpArgs] = {
    Op.SEND: Send(MSG, CONFIG),
    Op.STREAM: Send(MSG),
    Op.GET: TaskRef("t-1", 5),
    Op.SUBSCRIBE: TaskRef("t-1"),
    Op.CANCEL: Cancel("t-1", {"why": "done"}),
    Op.LIST: ListTasks("c-1", 10, "cur", TaskState.WORKING, 2, True, "2026-01-01T00:00:00Z"),
    Op.PUSH_CREATE: PushCreate(HOOK),
    Op.PUSH_GET: PushRef("t-1", "h-1"),
    Op.PUSH_LIST: PushRef("t-1"),
    Op.PUSH_DELETE: PushRef("t-1", "h-1"),
    Op.EXTENDED_CARD: None,
}


REPLY = Message(Role.AGENT, [TextPart("pong")], message_id="m-2", context_id="c-1")
WORKING = TaskStatus(TaskState.WORKING, REPLY, "2026-01-01T00:00:00.000Z")
ARTIFACT = Artifact("a-1", PARTS, name="report", description="all of it")
TASK = Task("t-1", "c-1", WORKING, [ARTIFACT], [MSG], {"k": "v"})
DONE = TaskStatus(TaskState.COMPLETED, timestamp="2026-01-01T00:00:01.000Z")
EVENTS: list[StreamEvent] = [
    TASK,
    TaskStatusUpdateEvent("t-1", "c-1", TaskStatus(TaskState.WORKING), False, {"k": "v"}),
    TaskArtifactUpdateEvent("t-1", "c-1", ARTIFACT, append=True, last_chunk=True),
    TaskStatusUpdateEvent("t-1", "c-1", DONE, final=True),
    REPLY,
]
CARD = {"name": "Agent", "description": "d", "url": URLS["jsonrpc"], "version": "1"}
RESULTS: dict[Op, list[Any]] = {
    Op.SEND: [TASK, REPLY],
    Op.GET: [TASK],
    Op.CANCEL: [TASK],
    Op.LIST: [TaskPage([TASK], "next", 3, 1), TaskPage([], None, 0, 50)],
    Op.PUSH_CREATE: [HOOK],
    Op.PUSH_GET: [HOOK],
    Op.PUSH_LIST: [[HOOK, PushNotificationConfig("https://hook.example/2", "t-1", "h-2")]],
    Op.PUSH_DELETE: [None],
    Op.EXTENDED_CARD: [CARD],
}


def _codec(binding: str, version: str) -> WireCodec:
    return codec_for(binding, version, URLS[binding])


def _cases(table: dict[Op, Any]) -> list[tuple[str, str, Op]]:
    return [
        (binding, version, op)
        for binding, version in CODECS
        for op in table
        if _codec(binding, version).supports(op)
    ]


def _served(codec: WireCodec, req: WireRequest[Any]) -> OpArgs:
    """What a server reads from ``req``, checking that it names the same operation."""
    if isinstance(codec, JsonRpcCodec):
        req_id, method, params = read_request(req.body or b"")
        assert (req_id, codec.op_for(method)) == (req.request_id, req.op)
        return codec.decode_params(req.op, params)
    assert isinstance(codec, RestCodec)
    url = urlsplit(req.url)
    match = codec.route(req.method, url.path[len(urlsplit(codec.url).path) :])
    assert match is not None
    assert (match.op, match.allowed) == (req.op, True)
    body = json.loads(req.body) if req.body else None
    return codec.decode_params(req.op, match.params(dict(parse_qsl(url.query)), body))


def _sent(req: WireRequest[Any]) -> tuple[str, str, Any]:
    """Method, URL and body of ``req``, without the JSON-RPC id."""
    body = json.loads(req.body) if req.body else None
    if isinstance(body, dict):
        body.pop("id", None)
    return req.method, req.url, body


@pytest.mark.parametrize(("binding", "version", "op"), _cases(ARGS))
def test_the_server_reads_what_the_client_wrote(binding: str, version: str, op: Op) -> None:
    codec = _codec(binding, version)
    args = ARGS[op]
    req = codec.encode(op, args)
    if req.request_id is None and isinstance(codec, JsonRpcCodec):
        assert req.url.endswith(PLAIN_GETS[version][op])  # a plain GET: no params to read
        return
    got = _served(codec, req)
    assert _sent(codec.encode(op, got)) == _sent(req)  # nothing the client wrote was lost
    if req.alternative is not None:
        assert _served(codec, req.alternative) == got
    if isinstance(got, Send):
        assert got.message.parts == PARTS
        assert got.message.task_id == "t-1"
        assert got.config.metadata == args.config.metadata  # type: ignore[union-attr]
    elif not (version == "legacy" and op is Op.PUSH_GET):  # one config per task, no id
        assert (type(got), got) == (type(args), args)  # named tuples: == alone ignores the type


def _decoded(codec: WireCodec, op: Op, value: Any) -> Any:
    req = codec.encode(op, ARGS[op])
    body = json.dumps(codec.encode_result(op, value, req.request_id)).encode()
    return codec.decode(req, HttpStatus(200), {"content-type": codec.content_type}, body)


@pytest.mark.parametrize(("binding", "version", "op"), _cases(RESULTS))
def test_the_client_reads_what_the_server_wrote(binding: str, version: str, op: Op) -> None:
    codec = _codec(binding, version)
    for value in RESULTS[op]:
        if version in ("legacy", "python-a2a") and isinstance(value, Message):
            continue  # legacy agents answer with tasks only
        got = _decoded(codec, op, value)
        if op is Op.EXTENDED_CARD:
            assert got.name == value["name"]
            continue
        # Written again, it is what was written: nothing the server wrote was lost.
        assert codec.encode_result(op, got) == codec.encode_result(op, value)
        if isinstance(value, (Task, Message)):
            assert type(got) is type(value)
            assert got.context_id == value.context_id


@pytest.mark.parametrize(("binding", "version"), CODECS)
def test_stream_events_both_ways(binding: str, version: str) -> None:
    codec = _codec(binding, version)
    req = codec.encode(Op.STREAM, ARGS[Op.STREAM])
    decoder = codec.event_decoder(req)
    for event in EVENTS:
        if version == "legacy" and isinstance(event, (Task, Message)):
            continue  # legacy streams carry status and artifact events only
        if version == "python-a2a" and isinstance(event, Message):
            continue  # ... and python-a2a's whole tasks too
        data = json.dumps(codec.encode_event(event, req.request_id, TASK))
        got = decoder.decode(data)
        assert type(got) is type(event)
        assert codec.encode_event(got, req.request_id, TASK) == json.loads(data)
        assert decoder.ends(got) == (event is EVENTS[3] or isinstance(event, Message))


@pytest.mark.parametrize(("binding", "version"), CODECS)
@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (-32001, TaskNotFoundError),
        (-32002, TaskNotCancelableError),
        (-32004, UnsupportedOperationError),
        (-32602, InvalidParamsError),
    ],
)
def test_errors_both_ways(binding: str, version: str, code: int, cls: type[A2ARPCError]) -> None:
    codec = _codec(binding, version)
    req = codec.encode(Op.GET, TaskRef("t-1"))
    status, body = codec.encode_error(code, "no", {"taskId": "t-1"}, req.request_id)
    with pytest.raises(cls) as caught:
        codec.decode(req, HttpStatus(status), {}, json.dumps(body).encode())
    if binding == "jsonrpc":
        assert (status, body["id"], body["error"]["code"]) == (200, req.request_id, code)
    if version == "1.0":
        assert caught.value.data[0]["metadata"] == {"taskId": "t-1"}


def test_v1_errors_carry_an_error_info() -> None:
    rest = _codec("rest", "1.0")
    status, body = rest.encode_error(-32009, "1.0 only")
    assert status == 400
    assert body["error"]["status"] == "FAILED_PRECONDITION"
    assert body["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    req = rest.encode(Op.GET, TaskRef("t-1"))
    with pytest.raises(VersionNotSupportedError):
        rest.decode(req, HttpStatus(status), {}, json.dumps(body).encode())
    _, plain = _codec("jsonrpc", "0.3").encode_error(-32001, "gone", request_id=7)
    assert plain == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32001, "message": "gone"}}
    assert _codec("rest", "0.3").encode_error(-32602, "bad") == (422, {"message": "bad"})


def test_jsonrpc_requests_and_methods_read_back() -> None:
    with pytest.raises(ParseError):
        read_request(b"{not json")
    with pytest.raises(InvalidRequestError) as no_request:
        read_request(b"[1]")
    assert no_request.value.request_id is None
    with pytest.raises(InvalidRequestError) as no_version:
        read_request(b'{"id": 3, "method": "GetTask"}')
    assert no_version.value.request_id == 3
    v1, v02, v03 = (_codec("jsonrpc", v) for v in ("1.0", "0.2", "0.3"))
    assert isinstance(v1, JsonRpcCodec) and isinstance(v02, JsonRpcCodec)
    assert isinstance(v03, JsonRpcCodec)
    assert v1.op_for("SendMessage") is Op.SEND
    assert v1.op_for("message/send") is None
    assert v03.op_for("agent/getAuthenticatedExtendedCard") is Op.EXTENDED_CARD
    assert v02.op_for("agent/getAuthenticatedExtendedCard") is None


def test_rest_routes_read_back() -> None:
    v1, v03 = _codec("rest", "1.0"), _codec("rest", "0.3")
    assert isinstance(v1, RestCodec) and isinstance(v03, RestCodec)
    get = v1.route("GET", "/tasks/t%201")
    assert get is not None and get.allowed and get.op is Op.GET
    assert get.params({"historyLength": "2", "id": "x"}, None) == {
        "id": "t 1",
        "historyLength": "2",
    }
    wrong_verb = v1.route("DELETE", "/tasks/t-1")
    assert wrong_verb is not None and not wrong_verb.allowed
    subscribe = v1.route("GET", "/tasks/t-1:subscribe")  # POST per the spec, GET per the proto
    assert subscribe is not None and subscribe.allowed
    assert v1.route("POST", "/tasks/t-1:pause") is None
    assert v1.route("POST", "/v1/message:send") is None
    assert v03.route("POST", "/message:send") is None
    listing = v03.route("GET", "/v1/tasks")  # the v0.3 proto's path (the "0.4.0" draft)
    assert listing is not None and listing.op is Op.LIST
    card = v03.route("GET", "/v1/card")
    assert card is not None and card.op is Op.EXTENDED_CARD


@pytest.mark.parametrize("dialect", [V1, V03, LEGACY])
def test_push_notifications_read_back(dialect: Dialect) -> None:
    event = EVENTS[1]
    got, form = decode_notification(dialect.encode_notification(event, TASK))
    if dialect.version == "1.0":
        assert form == "1.0"  # v1.0 posts the event
        assert isinstance(got, TaskStatusUpdateEvent) and got.metadata == {"k": "v"}
    else:
        assert isinstance(got, Task) and (got.id, got.context_id) == ("t-1", "c-1")
