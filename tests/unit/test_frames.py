"""Codecs against frames recorded from a real a2a-sdk 1.3.0 server (tests/frames/)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from a2a_anyio import (
    A2ARPCError,
    AgentCard,
    DataPart,
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
    TaskStatusUpdateEvent,
    TextPart,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_anyio._bindings import codec_for
from a2a_anyio._bindings.jsonrpc import decode_http, request, unwrap
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
from a2a_anyio._dialects.card import candidates, parse_card
from a2a_anyio._dialects.v03 import V03
from a2a_anyio._dialects.v1 import V1
from a2a_anyio._model import StreamEvent

from ._support import fold, frame_names, load_frame, sse_payloads

DATA_VALUE = {"city": "Paris", "count": 3, "ratio": 0.5, "tags": ["a", "b"], "nested": {"ok": True}}
HOOK = PushNotificationConfig(
    url="https://client.example.com/a2a-hook",
    id="hook-1",
    token="hook-token-123",
    auth_scheme="Bearer",
    auth_credentials="hook-secret",
)
DIALECTS: dict[str, Dialect] = {"v1_0": V1, "v0_3": V03}
V1_STATE = "TASK_STATE_"


def _params(frame: dict[str, Any]) -> Any:
    return frame["request"]["body"].get("params")


def _result(version: str, frame: dict[str, Any]) -> Any:
    """The unwrapped result of a JSON response frame (errors raise, as the client would)."""
    body = frame["request"]["body"]
    resp = frame["response"]
    return decode_http(
        resp["status"],
        json.dumps(resp["body"]).encode(),
        body["id"],
        codes=DIALECTS[version].errors,
    )


def _events(version: str, frame: dict[str, Any]) -> list[StreamEvent]:
    dialect = DIALECTS[version]
    req_id = frame["request"]["body"]["id"]
    return [
        dialect.decode(Op.STREAM, unwrap(p, req_id, codes=dialect.errors))
        for p in sse_payloads(frame["response"]["sse"])
    ]


def _state(version: str, name: str) -> str:
    return V1_STATE + name.upper().replace("-", "_") if version == "v1_0" else name


# -- expectations per frame: each takes (version, frame) and asserts on the decoded value -------


def check_card(version: str, frame: dict[str, Any]) -> None:
    card = parse_card(frame["response"]["body"])
    assert card.name == "SDK Test Agent"
    assert card.version == "1.2.3"
    assert card.description.startswith("Scripted A2A agent")
    assert card.documentation_url == "https://example.com/a2a-anyio/docs"
    assert card.provider is not None
    assert card.provider.organization == "a2a-anyio tests"
    assert card.capabilities.streaming
    assert card.capabilities.push_notifications
    assert card.capabilities.extended_agent_card
    assert card.default_input_modes == ["text/plain", "application/json"]
    assert [s.id for s in card.skills] == ["echo"]
    assert card.skills[0].examples[:2] == ["hello", "message ping"]
    bearer = card.security_schemes["bearer"]
    assert (bearer.type, bearer.scheme, bearer.bearer_format) == ("http", "Bearer", "JWT")
    assert card.security_requirements == [{"bearer": []}]
    bindings = [(i.binding, i.protocol_version, i.url.rsplit("/", 1)[-1]) for i in card.interfaces]
    if version == "v1_0":
        assert bindings == [("JSONRPC", "1.0", "jsonrpc"), ("HTTP+JSON", "1.0", "rest")]
    else:  # the compat server's hybrid card: supportedInterfaces wins over url/preferredTransport
        assert bindings == [
            ("JSONRPC", "1.0", "jsonrpc"),
            ("HTTP+JSON", "1.0", "rest"),
            ("JSONRPC", "0.3", "jsonrpc"),
            ("HTTP+JSON", "0.3", "rest"),
        ]
        assert candidates(card, "0.3", ("jsonrpc",))[0] is card.interfaces[2]
    assert candidates(card, "auto", ("jsonrpc",))[0] is card.interfaces[0]
    headers = frame["response"]["headers"]
    assert "max-age=60" in headers["cache-control"]
    assert headers["etag"].startswith('W/"')


def check_extended_card(version: str, frame: dict[str, Any]) -> None:
    card = DIALECTS[version].decode(Op.EXTENDED_CARD, _result(version, frame))
    assert isinstance(card, AgentCard)
    assert [s.id for s in card.skills] == ["echo", "extended-skill"]
    assert card.capabilities.extended_agent_card
    iface = candidates(card, "auto", ("jsonrpc",))[0]
    assert iface.binding == "JSONRPC"
    assert iface.url.endswith("/a2a/jsonrpc")
    # The v0.3 extended card is a plain v0.3 card (url + additionalInterfaces).
    assert iface.protocol_version == ("1.0" if version == "v1_0" else "0.3")
    assert card.security_schemes["bearer"].type == "http"


def _send(version: str, frame: dict[str, Any]) -> Task | Message:
    result: Task | Message = DIALECTS[version].decode(Op.SEND, _result(version, frame))
    return result


def check_send_message_task(version: str, frame: dict[str, Any]) -> None:
    task = _send(version, frame)
    assert isinstance(task, Task)
    assert task.state is TaskState.COMPLETED
    assert task.context_id
    assert [a.name for a in task.artifacts] == ["echo", "data"]
    assert task.artifacts[0].text == "echo: hello"
    assert task.artifacts[1].data == DATA_VALUE
    sent = task.history[0]
    assert sent.role is Role.USER
    assert sent.message_id == _params(frame)["message"]["messageId"]
    assert sent.parts == [TextPart("hello"), DataPart(DATA_VALUE)]
    assert sent.task_id == task.id


def check_send_message_message(version: str, frame: dict[str, Any]) -> None:
    msg = _send(version, frame)
    assert isinstance(msg, Message)
    assert msg.role is Role.AGENT
    assert msg.text == "pong: message ping"
    assert msg.context_id


def _check_state(
    version: str, frame: dict[str, Any], state: TaskState, status_text: str | None
) -> Task:
    task = _send(version, frame)
    assert isinstance(task, Task)
    assert task.state is state
    assert task.status.wire_state == _state(version, state.value)
    if status_text is None:
        assert task.status.message is None
    else:
        assert task.status.message is not None
        assert task.status.message.text == status_text
        assert task.status.message.role is Role.AGENT
    return task


def check_send_message_failed(version: str, frame: dict[str, Any]) -> None:
    _check_state(version, frame, TaskState.FAILED, "it failed")


def check_send_message_input_required(version: str, frame: dict[str, Any]) -> None:
    _check_state(version, frame, TaskState.INPUT_REQUIRED, "need more input")


def check_send_message_continue(version: str, frame: dict[str, Any]) -> None:
    task = _check_state(version, frame, TaskState.COMPLETED, None)
    assert task.id == _params(frame)["message"]["taskId"]
    assert task.context_id == _params(frame)["message"]["contextId"]
    assert task.text == "echo: more details"


def check_send_message_non_blocking(version: str, frame: dict[str, Any]) -> None:
    task = _send(version, frame)
    assert isinstance(task, Task)
    assert task.state in (TaskState.SUBMITTED, TaskState.WORKING)
    assert not task.state.is_final


check_send_message_return_immediately = check_send_message_non_blocking


def check_get_task(version: str, frame: dict[str, Any]) -> None:
    task = DIALECTS[version].decode(Op.GET, _result(version, frame))
    assert task.id == _params(frame)["id"]
    assert task.state is TaskState.COMPLETED
    assert task.text == "echo: hello"
    assert len(task.history) == 1


def check_cancel_task(version: str, frame: dict[str, Any]) -> None:
    task = DIALECTS[version].decode(Op.GET, _result(version, frame))
    assert task.id == _params(frame)["id"]
    assert task.state is TaskState.CANCELED
    assert task.status.message is not None
    assert task.status.message.text == "canceled"


def check_list_tasks(version: str, frame: dict[str, Any]) -> None:
    page = DIALECTS[version].decode(Op.LIST, _result(version, frame))
    assert isinstance(page, TaskPage)
    assert page.next_cursor is None  # "" on the wire
    assert (page.page_size, page.total_size) == (50, 1)
    [task] = page.tasks
    assert task.context_id == _params(frame)["contextId"]
    assert task.state is TaskState.COMPLETED
    assert task.history[0].parts == [
        TextPart("hello", media_type=""),
        DataPart(DATA_VALUE, media_type=""),
    ]


def _hook(version: str, frame: dict[str, Any]) -> PushNotificationConfig:
    params = _params(frame)
    task_id = params.get("taskId") or params.get("id")
    return PushNotificationConfig(
        url=HOOK.url,
        task_id=task_id,
        id=HOOK.id,
        token=HOOK.token,
        auth_scheme=HOOK.auth_scheme,
        auth_credentials=HOOK.auth_credentials,
    )


def check_push_config_create(version: str, frame: dict[str, Any]) -> None:
    config = DIALECTS[version].decode(Op.PUSH_GET, _result(version, frame))
    assert config == _hook(version, frame)


check_push_config_get = check_push_config_create


def check_push_config_list(version: str, frame: dict[str, Any]) -> None:
    configs = DIALECTS[version].decode(Op.PUSH_LIST, _result(version, frame))
    assert configs == [_hook(version, frame)]


def check_push_config_delete(version: str, frame: dict[str, Any]) -> None:
    assert _result(version, frame) is None


def _check_error(
    version: str, frame: dict[str, Any], cls: type[A2ARPCError], reason: bool
) -> A2ARPCError:
    with pytest.raises(cls) as info:
        _result(version, frame)
    err = info.value
    assert err.code == frame["response"]["body"]["error"]["code"]
    assert err.message == frame["response"]["body"]["error"]["message"]
    if reason and version == "v1_0":
        assert err.reason is not None
    return err


def check_error_task_not_found(version: str, frame: dict[str, Any]) -> None:
    err = _check_error(version, frame, TaskNotFoundError, True)
    if version == "v1_0":
        assert err.reason == "TASK_NOT_FOUND"


def check_error_task_not_cancelable(version: str, frame: dict[str, Any]) -> None:
    err = _check_error(version, frame, TaskNotCancelableError, True)
    if version == "v1_0":
        assert err.reason == "TASK_NOT_CANCELABLE"


def check_error_method_not_found(version: str, frame: dict[str, Any]) -> None:
    _check_error(version, frame, MethodNotFoundError, False)


def check_error_invalid_params(version: str, frame: dict[str, Any]) -> None:
    # The 1.x server answers schema violations of v0.3 requests with -32600.
    err = _check_error(
        version, frame, InvalidParamsError if version == "v1_0" else InvalidRequestError, False
    )
    if version == "v1_0":
        assert err.reason == "INVALID_PARAMS"
        assert isinstance(err.data, list)
        assert len(err.data) == 2


def check_error_version_not_supported(version: str, frame: dict[str, Any]) -> None:
    err = _check_error(version, frame, VersionNotSupportedError, True)
    assert err.reason == "VERSION_NOT_SUPPORTED"


def check_error_subscribe_terminal(version: str, frame: dict[str, Any]) -> None:
    resp = frame["response"]
    if "sse" in resp:  # the v0.3 layer streams the error as the only event
        [payload] = sse_payloads(resp["sse"])
        with pytest.raises(UnsupportedOperationError) as info:
            unwrap(payload, frame["request"]["body"]["id"], codes=V03.errors)
        assert info.value.code == -32004
    else:
        err = _check_error(version, frame, UnsupportedOperationError, True)
        assert err.reason == "UNSUPPORTED_OPERATION"


def check_stream_message(version: str, frame: dict[str, Any]) -> None:
    events = _events(version, frame)
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "Task",
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    first, working, a1, a2, a3, done = events
    assert isinstance(first, Task)
    assert first.state is TaskState.SUBMITTED
    assert isinstance(working, TaskStatusUpdateEvent)
    assert (working.status.state, working.final) == (TaskState.WORKING, False)
    assert isinstance(a1, TaskArtifactUpdateEvent)
    assert isinstance(a2, TaskArtifactUpdateEvent)
    assert isinstance(a3, TaskArtifactUpdateEvent)
    assert [(a.append, a.last_chunk) for a in (a1, a2, a3)] == [
        (False, False),
        (True, False),
        (True, True),
    ]
    assert isinstance(done, TaskStatusUpdateEvent)
    assert (done.status.state, done.final) == (TaskState.COMPLETED, True)
    assert all(e.task_id == first.id for e in (working, a1, a2, a3, done))
    task = fold(events)
    assert task is not None
    assert task.state is TaskState.COMPLETED
    assert [a.artifact_id for a in task.artifacts] == ["report"]
    assert task.text == "part 1 part 2 part 3"


def check_stream_input_required(version: str, frame: dict[str, Any]) -> None:
    first, last = _events(version, frame)
    assert isinstance(first, Task)
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.INPUT_REQUIRED
    # v1.0 has no flag (synthesised); the compat layer sends final: false and then closes.
    assert last.final is (version == "v1_0")
    assert last.status.message is not None
    assert last.status.message.text == "need more input"


def check_stream_message_reply(version: str, frame: dict[str, Any]) -> None:
    [msg] = _events(version, frame)
    assert isinstance(msg, Message)
    assert msg.text == "pong: message via stream"


def check_subscribe(version: str, frame: dict[str, Any]) -> None:
    first, last = _events(version, frame)
    assert isinstance(first, Task)
    assert first.id == _params(frame)["id"]
    assert first.state is TaskState.WORKING
    assert isinstance(last, TaskStatusUpdateEvent)
    assert (last.status.state, last.final) == (TaskState.CANCELED, True)


CHECKS: dict[str, Callable[[str, dict[str, Any]], None]] = {
    name.removeprefix("check_"): fn
    for name, fn in dict(globals()).items()
    if name.startswith("check_")
}
ALL_FRAMES = [(version, name) for version in DIALECTS for name in frame_names(version)]


def test_frames_are_recorded() -> None:
    for version in DIALECTS:
        assert len(frame_names(version)) >= 20, f"tests/frames/{version} looks empty"


@pytest.mark.parametrize(("version", "name"), ALL_FRAMES, ids=[f"{v}/{n}" for v, n in ALL_FRAMES])
def test_decode_recorded_response(version: str, name: str) -> None:
    assert name in CHECKS, f"no expectation for recorded frame {version}/{name}: add one"
    CHECKS[name](version, load_frame(version, name))


# -- our encoders against the recorded requests ------------------------------------------------

_OPS = {
    "cancel_task": "cancel",
    "get_task": "get",
    "list_tasks": "list",
    "push_config_create": "push_create",
    "push_config_get": "push_get",
    "push_config_list": "push_list",
    "push_config_delete": "push_delete",
    "extended_card": "extended_card",
    "subscribe": "subscribe",
    "error_task_not_found": "get",
    "error_task_not_cancelable": "cancel",
    "error_subscribe_terminal": "subscribe",
}


def _args(dialect: Dialect, name: str, recorded: Any) -> tuple[Op, OpArgs]:
    """The operation and arguments of the request the recorder made."""
    if name.startswith(("send_message", "stream")):
        op = Op.STREAM if name.startswith("stream") else Op.SEND
        msg = dialect.decode_message(recorded["message"])
        conf = recorded.get("configuration") or {}
        blocking = not conf.get("returnImmediately", False) and conf.get("blocking", True)
        return op, Send(msg, SendConfig(blocking=blocking))
    op = Op(_OPS[name])
    if op in (Op.GET, Op.CANCEL, Op.SUBSCRIBE):
        task_id = recorded["id"]
        if op is Op.GET:
            return op, TaskRef(task_id, recorded.get("historyLength"))
        return op, Cancel(task_id) if op is Op.CANCEL else TaskRef(task_id)
    if op is Op.LIST:
        return op, ListTasks(recorded.get("contextId"), None, None)
    if op is Op.EXTENDED_CARD:
        return op, None
    task_id = recorded.get("taskId") or recorded.get("id")
    if op is Op.PUSH_CREATE:
        config = copy.copy(HOOK)
        config.task_id = task_id
        return op, PushCreate(config)
    config_id = {Op.PUSH_GET: HOOK.id, Op.PUSH_DELETE: "hook-1"}.get(op)
    return op, PushRef(task_id, config_id)


# Requests the recorder made malformed on purpose (wrong dialect, no parts, no header).
_DELIBERATELY_WRONG = {
    "error_method_not_found",
    "error_invalid_params",
    "error_version_not_supported",
}
ENCODABLE = [
    (v, n)
    for v, n in ALL_FRAMES
    if n not in _DELIBERATELY_WRONG and load_frame(v, n)["request"]["method"] == "POST"
]


@pytest.mark.parametrize(("version", "name"), ENCODABLE, ids=[f"{v}/{n}" for v, n in ENCODABLE])
def test_encoders_match_recorded_requests(version: str, name: str) -> None:
    frame = load_frame(version, name)
    dialect = DIALECTS[version]
    body = frame["request"]["body"]
    codec = codec_for("jsonrpc", dialect.version, "https://agent.example/")
    sent = json.loads(codec.encode(*_args(dialect, name, body.get("params"))).body or b"")
    method, params = sent["method"], sent.get("params")
    assert method == body["method"]
    expected = copy.deepcopy(body.get("params"))
    if dialect is V03 and name.startswith(("send_message", "stream")):
        # We always say whether to block; the recorder left it to the server's default (true).
        expected.setdefault("configuration", {"blocking": True})
    assert params == expected
    envelope = request(method, params, body["id"])
    assert set(envelope) == set(body)  # no "params" member where the recorder sent none
    assert (envelope["jsonrpc"], envelope["id"]) == (body["jsonrpc"], body["id"])
    if version == "v1_0":
        assert frame["request"]["headers"]["a2a-version"] == codec.headers(Op.SEND)["A2A-Version"]


def test_v1_send_params_built_from_scratch_match_the_recording() -> None:
    frame = load_frame("v1_0", "send_message_task")
    msg = Message(Role.USER, [TextPart("hello"), DataPart(DATA_VALUE)], message_id="v1-msg-task")
    assert V1.write(Op.SEND, Send(msg, SendConfig())) == _params(frame)
    frame = load_frame("v1_0", "send_message_return_immediately")
    msg = Message(Role.USER, [TextPart("slow job")], message_id="v1-msg-slow")
    assert V1.write(Op.SEND, Send(msg, SendConfig(blocking=False))) == _params(frame)


def test_v03_send_params_built_from_scratch_match_the_recording() -> None:
    frame = load_frame("v0_3", "send_message_task")
    msg = Message(Role.USER, [TextPart("hello"), DataPart(DATA_VALUE)], message_id="v03-msg-task")
    params = V03.write(Op.SEND, Send(msg, SendConfig()))
    assert params["message"] == _params(frame)["message"]
    frame = load_frame("v0_3", "send_message_non_blocking")
    msg = Message(Role.USER, [TextPart("slow job")], message_id="v03-msg-slow")
    assert V03.write(Op.SEND, Send(msg, SendConfig(blocking=False))) == _params(frame)
