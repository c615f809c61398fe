"""The sans-IO codecs of v1.0 and v0.2/v0.3 JSON-RPC, without any frames."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_anyio import (
    A2AProtocolError,
    DataPart,
    FilePart,
    Message,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_anyio._bindings import codec_for
from a2a_anyio._bindings.jsonrpc import METHODS, JsonRpcCodec
from a2a_anyio._dialects import (
    Cancel,
    Dialect,
    ListTasks,
    Op,
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

PNG = b"\x89PNG\r\n\x1a\n\x00\x01\xff"


def _message(*parts: Any) -> Message:
    return Message(
        Role.USER,
        list(parts),
        message_id="m-1",
        context_id="c-1",
        task_id="t-1",
        metadata={"skillId": "s"},
        extensions=["https://ext.example/v1"],
        reference_task_ids=["t-0"],
    )


ROUND_TRIP_PARTS = [
    TextPart("hello"),
    FilePart(data=PNG, media_type="image/png", name="pic.png"),
    FilePart(url="https://files.example/report.pdf", media_type="application/pdf", name="r.pdf"),
    FilePart(data=b"no name"),
    DataPart({"city": "Paris", "n": [1, 2]}),
    DataPart({"x": 1}, metadata={"source": "form"}),
]


@pytest.mark.parametrize("dialect", [V1, V03], ids=["v1", "v03"])
@pytest.mark.parametrize("part", ROUND_TRIP_PARTS, ids=lambda p: type(p).__name__)
def test_message_round_trip(dialect: Dialect, part: Any) -> None:
    msg = _message(TextPart("intro"), part)
    back = dialect.decode_message(dialect.encode_message(msg))
    assert back == msg


def test_v1_message_shape() -> None:
    msg = _message(
        TextPart("hi", media_type="text/plain"),
        FilePart(data=b"abc", media_type="text/plain", name="a.txt"),
        FilePart(url="https://f.example/x"),
        DataPart([1, 2]),
    )
    assert V1.encode_message(msg) == {
        "messageId": "m-1",
        "role": "ROLE_USER",
        "parts": [
            {"text": "hi", "mediaType": "text/plain"},
            {"raw": "YWJj", "filename": "a.txt", "mediaType": "text/plain"},
            {"url": "https://f.example/x"},
            {"data": [1, 2]},
        ],
        "contextId": "c-1",
        "taskId": "t-1",
        "metadata": {"skillId": "s"},
        "extensions": ["https://ext.example/v1"],
        "referenceTaskIds": ["t-0"],
    }


def test_v03_message_shape() -> None:
    msg = _message(
        TextPart("hi"),
        FilePart(data=b"abc", media_type="text/plain", name="a.txt"),
        FilePart(url="https://f.example/x"),
        DataPart({"k": "v"}),
    )
    assert V03.encode_message(msg) == {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": [
            {"kind": "text", "text": "hi"},
            {"kind": "file", "file": {"bytes": "YWJj", "mimeType": "text/plain", "name": "a.txt"}},
            {"kind": "file", "file": {"uri": "https://f.example/x"}},
            {"kind": "data", "data": {"k": "v"}},
        ],
        "contextId": "c-1",
        "taskId": "t-1",
        "metadata": {"skillId": "s"},
        "extensions": ["https://ext.example/v1"],
        "referenceTaskIds": ["t-0"],
    }


@pytest.mark.parametrize("value", [[1, 2, 3], "text", 42, 0.5, True, None])
def test_v03_wraps_non_object_data_and_unwraps_it(value: Any) -> None:
    dialect = V03
    wire = dialect.encode_message(_message(DataPart(value)))
    assert wire["parts"] == [
        {"kind": "data", "data": {"value": value}, "metadata": {"data_part_compat": True}}
    ]
    back = dialect.decode_message(wire)
    assert back.parts == [DataPart(value)]


def test_v03_compat_mark_keeps_other_metadata() -> None:
    dialect = V03
    wire = dialect.encode_message(_message(DataPart([1], metadata={"a": 1})))
    assert wire["parts"][0]["metadata"] == {"a": 1, "data_part_compat": True}
    assert dialect.decode_message(wire).parts == [DataPart([1], metadata={"a": 1})]


def test_v03_object_data_with_value_key_is_not_unwrapped() -> None:
    part = V03.decode_message(
        {"role": "agent", "parts": [{"kind": "data", "data": {"value": 3}}]}
    ).parts[0]
    assert part == DataPart({"value": 3})


def test_v03_decodes_legacy_type_parts_and_file_variants() -> None:
    msg = V03.decode_message(
        {
            "role": "agent",
            "parts": [
                {"type": "text", "text": "legacy"},
                {"type": "file", "file": {"uri": "https://x.example/a", "mimeType": "a/b"}},
                {"type": "data", "data": {"k": 1}},
                {"text": "no kind"},
            ],
        }
    )
    assert msg.role is Role.AGENT
    assert msg.message_id == ""
    assert msg.parts == [
        TextPart("legacy"),
        FilePart(url="https://x.example/a", media_type="a/b"),
        DataPart({"k": 1}),
        TextPart("no kind"),
    ]


def test_v1_accepts_snake_case_and_url_safe_base64() -> None:
    msg = V1.decode_message(
        {
            "message_id": "m",
            "context_id": "c",
            "task_id": "t",
            "role": "ROLE_AGENT",
            "parts": [{"raw": "-_8", "media_type": "x/y"}],
        }
    )
    assert (msg.message_id, msg.context_id, msg.task_id) == ("m", "c", "t")
    assert msg.parts == [FilePart(data=b"\xfb\xff", media_type="x/y")]


# -- send params --------------------------------------------------------------------------------


def _tenant(tenant: str) -> JsonRpcCodec:
    """A v1.0 JSON-RPC codec with a tenant, which it adds to every request's params."""
    codec = codec_for("jsonrpc", "1.0", "https://agent.example/", tenant=tenant)
    assert isinstance(codec, JsonRpcCodec)
    return codec


def test_v1_send_params_blocking_default_has_no_configuration() -> None:
    params = V1.write(Op.SEND, Send(Message.user("x"), SendConfig()))
    assert set(params) == {"message"}


def test_v1_send_params_full() -> None:
    push = PushNotificationConfig(url="https://hook.example/", token="tok", auth_scheme="Bearer")
    params = _tenant("acme").params(
        Op.SEND,
        Send(
            Message.user("x"),
            SendConfig(
                blocking=False,
                history_length=0,
                accepted_output_modes=["text/plain"],
                push_config=push,
                metadata={"m": 1},
            ),
        ),
    )
    assert params["configuration"] == {
        "acceptedOutputModes": ["text/plain"],
        "historyLength": 0,
        "returnImmediately": True,
        "taskPushNotificationConfig": {
            "url": "https://hook.example/",
            "token": "tok",
            "authentication": {"scheme": "Bearer"},
        },
    }
    assert params["metadata"] == {"m": 1}
    assert params["tenant"] == "acme"


def test_v03_send_params_blocking_and_history() -> None:
    dialect = V03
    blocking = dialect.write(Op.SEND, Send(Message.user("x"), SendConfig(history_length=0)))
    assert blocking["configuration"] == {"blocking": True}
    push = PushNotificationConfig(
        url="https://hook.example/", auth_scheme="Bearer", auth_credentials="s"
    )
    params = dialect.write(
        Op.SEND,
        Send(
            Message.user("x"),
            SendConfig(
                blocking=False,
                history_length=5,
                accepted_output_modes=[],
                push_config=push,
                metadata={"m": 1},
            ),
        ),
    )
    assert params["configuration"] == {
        "blocking": False,
        "acceptedOutputModes": [],
        "historyLength": 5,
        "pushNotificationConfig": {
            "url": "https://hook.example/",
            "authentication": {"schemes": ["Bearer"], "credentials": "s"},
        },
    }
    assert params["metadata"] == {"m": 1}
    assert params["message"]["kind"] == "message"


def test_task_and_cancel_params() -> None:
    assert V1.write(Op.GET, TaskRef("t", 0)) == {"id": "t", "historyLength": 0}
    assert _tenant("x").params(Op.GET, TaskRef("t")) == {"id": "t", "tenant": "x"}
    assert V03.write(Op.GET, TaskRef("t", 0)) == {"id": "t"}
    assert V03.write(Op.GET, TaskRef("t", 3)) == {"id": "t", "historyLength": 3}
    assert V1.write(Op.CANCEL, Cancel("t", {"why": "x"})) == {"id": "t", "metadata": {"why": "x"}}
    assert V03.write(Op.CANCEL, Cancel("t")) == {"id": "t"}
    assert _tenant("x").params(Op.SUBSCRIBE, TaskRef("t")) == {"id": "t", "tenant": "x"}


def test_method_names() -> None:
    ops = (Op.SEND, Op.STREAM, Op.GET, Op.CANCEL, Op.SUBSCRIBE, Op.LIST)
    assert [METHODS["1.0"][op] for op in ops] == [
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "CancelTask",
        "SubscribeToTask",
        "ListTasks",
    ]
    assert [METHODS["0.3"][op] for op in ops] == [
        "message/send",
        "message/stream",
        "tasks/get",
        "tasks/cancel",
        "tasks/resubscribe",
        "tasks/list",
    ]
    for older in (V02, LEGACY):  # no listing before the v0.3 era
        assert Op.LIST not in METHODS[older.version] and not older.has(Op.LIST)
        with pytest.raises(ValueError, match="not part of"):
            older.write(Op.LIST, ListTasks(None, 10, None))
    assert V1.headers == {"A2A-Version": "1.0"}


# -- decoding results and events -----------------------------------------------------------------


def _v1_task(state: str = "TASK_STATE_WORKING") -> dict[str, Any]:
    return {
        "id": "t-1",
        "contextId": "c-1",
        "status": {
            "state": state,
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"messageId": "s", "role": "ROLE_AGENT", "parts": [{"text": "busy"}]},
        },
        "artifacts": [{"artifactId": "a", "name": "out", "parts": [{"text": "42"}]}],
        "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "q"}]}],
        "metadata": {"k": "v"},
    }


def _v03_task(state: str = "working") -> dict[str, Any]:
    return {
        "kind": "task",
        "id": "t-1",
        "contextId": "c-1",
        "status": {
            "state": state,
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {
                "kind": "message",
                "messageId": "s",
                "role": "agent",
                "parts": [{"kind": "text", "text": "busy"}],
            },
        },
        "artifacts": [
            {"artifactId": "a", "name": "out", "parts": [{"kind": "text", "text": "42"}]}
        ],
        "history": [
            {
                "kind": "message",
                "messageId": "m",
                "role": "user",
                "parts": [{"kind": "text", "text": "q"}],
            }
        ],
        "metadata": {"k": "v"},
    }


@pytest.mark.parametrize(
    ("dialect", "wire"),
    [(V1, _v1_task()), (V03, _v03_task())],
    ids=["v1", "v03"],
)
def test_decode_task(dialect: Dialect, wire: dict[str, Any]) -> None:
    task = dialect.decode(Op.GET, wire)
    assert (task.id, task.context_id, task.state) == ("t-1", "c-1", TaskState.WORKING)
    assert task.status.timestamp == "2026-01-01T00:00:00Z"
    assert task.status.message is not None
    assert task.status.message.text == "busy"
    assert task.status.message.role is Role.AGENT
    assert [a.artifact_id for a in task.artifacts] == ["a"]
    assert task.text == "42"
    assert task.artifacts[0].name == "out"
    assert [m.text for m in task.history] == ["q"]
    assert task.metadata == {"k": "v"}
    assert task.raw is wire


def test_v1_send_result() -> None:
    dialect = V1
    task = dialect.decode(Op.SEND, {"task": _v1_task("TASK_STATE_COMPLETED")})
    assert isinstance(task, Task)
    assert task.state is TaskState.COMPLETED
    msg = dialect.decode(
        Op.SEND, {"message": {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "pong"}]}}
    )
    assert isinstance(msg, Message)
    assert msg.text == "pong"


def test_v03_send_result() -> None:
    dialect = V03
    task = dialect.decode(Op.SEND, _v03_task("completed"))
    assert isinstance(task, Task)
    assert task.state is TaskState.COMPLETED
    msg = dialect.decode(
        Op.SEND,
        {
            "kind": "message",
            "messageId": "r",
            "role": "agent",
            "parts": [{"kind": "text", "text": "pong"}],
        },
    )
    assert isinstance(msg, Message)
    assert msg.text == "pong"
    bare = dialect.decode(Op.SEND, {"id": "t", "status": {"state": "submitted"}})
    assert isinstance(bare, Task)
    with pytest.raises(A2AProtocolError):
        dialect.decode(
            Op.SEND,
            {
                "kind": "status-update",
                "taskId": "t",
                "status": {"state": "working"},
                "final": False,
            },
        )


@pytest.mark.parametrize(
    ("state", "final"),
    [
        ("TASK_STATE_SUBMITTED", False),
        ("TASK_STATE_WORKING", False),
        ("TASK_STATE_INPUT_REQUIRED", True),
        ("TASK_STATE_AUTH_REQUIRED", True),
        ("TASK_STATE_COMPLETED", True),
        ("TASK_STATE_CANCELED", True),
        ("TASK_STATE_FAILED", True),
        ("TASK_STATE_REJECTED", True),
        ("TASK_STATE_SOMETHING_NEW", False),
    ],
)
def test_v1_status_event_final_is_synthesised(state: str, final: bool) -> None:
    event = V1.decode(
        Op.STREAM,
        {
            "statusUpdate": {
                "taskId": "t",
                "contextId": "c",
                "status": {"state": state},
                "metadata": {"m": 1},
            }
        },
    )
    assert isinstance(event, TaskStatusUpdateEvent)
    assert event.final is final
    assert (event.task_id, event.context_id, event.metadata) == ("t", "c", {"m": 1})


@pytest.mark.parametrize(
    ("state", "wire_final", "final"),
    [
        ("working", False, False),
        ("working", True, True),
        ("input-required", True, True),
        ("input-required", False, False),
        ("completed", True, True),
        ("completed", False, True),
        ("failed", None, True),
    ],
)
def test_v03_status_event_final_comes_from_the_wire(
    state: str, wire_final: Any, final: bool
) -> None:
    wire: dict[str, Any] = {
        "kind": "status-update",
        "taskId": "t",
        "contextId": "c",
        "status": {"state": state},
    }
    if wire_final is not None:
        wire["final"] = wire_final
    event = V03.decode(Op.STREAM, wire)
    assert isinstance(event, TaskStatusUpdateEvent)
    assert event.final is final


def test_artifact_events() -> None:
    v1_event = V1.decode(
        Op.STREAM,
        {
            "artifactUpdate": {
                "taskId": "t",
                "contextId": "c",
                "artifact": {"artifactId": "a", "parts": [{"text": "chunk"}]},
                "append": True,
                "lastChunk": True,
            }
        },
    )
    v03_event = V03.decode(
        Op.STREAM,
        {
            "kind": "artifact-update",
            "taskId": "t",
            "contextId": "c",
            "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "chunk"}]},
            "append": True,
            "lastChunk": True,
        },
    )
    for event in (v1_event, v03_event):
        assert isinstance(event, TaskArtifactUpdateEvent)
        assert (event.task_id, event.append, event.last_chunk) == ("t", True, True)
        assert event.artifact.text == "chunk"
    plain = V1.decode(
        Op.STREAM, {"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "a", "parts": []}}}
    )
    assert isinstance(plain, TaskArtifactUpdateEvent)
    assert (plain.append, plain.last_chunk) == (False, False)


def test_v1_stream_task_and_message_events() -> None:
    dialect = V1
    assert isinstance(dialect.decode(Op.STREAM, {"task": _v1_task()}), Task)
    msg = dialect.decode(
        Op.STREAM, {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": []}}
    )
    assert isinstance(msg, Message)
    snake = dialect.decode(
        Op.STREAM, {"status_update": {"task_id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}}
    )
    assert isinstance(snake, TaskStatusUpdateEvent)
    assert snake.final


# -- push configs ---------------------------------------------------------------------------------


def test_v1_push_config_shapes() -> None:
    dialect = V1
    config = PushNotificationConfig(
        url="https://hook.example/",
        task_id="t",
        id="h",
        token="tok",
        auth_scheme="Bearer",
        auth_credentials="s",
    )
    wire = {
        "url": "https://hook.example/",
        "taskId": "t",
        "id": "h",
        "token": "tok",
        "authentication": {"scheme": "Bearer", "credentials": "s"},
    }
    assert dialect.write(Op.PUSH_CREATE, PushCreate(config)) == wire
    assert dialect.decode(Op.PUSH_GET, wire) == config
    assert dialect.write(Op.PUSH_GET, PushRef("t", "h")) == {"taskId": "t", "id": "h"}
    assert dialect.write(Op.PUSH_LIST, PushRef("t")) == {"taskId": "t"}
    assert dialect.write(Op.PUSH_DELETE, PushRef("t", "h")) == {"taskId": "t", "id": "h"}
    assert dialect.decode(Op.PUSH_LIST, {"configs": [wire, wire]}) == [config, config]
    assert dialect.decode(Op.PUSH_LIST, [wire]) == [config]
    assert dialect.decode(Op.PUSH_LIST, {}) == []


def test_v03_push_config_shapes() -> None:
    dialect = V03
    config = PushNotificationConfig(
        url="https://hook.example/",
        task_id="t",
        id="h",
        token="tok",
        auth_scheme="Bearer",
        auth_credentials="s",
    )
    wire = {
        "taskId": "t",
        "pushNotificationConfig": {
            "url": "https://hook.example/",
            "id": "h",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "s"},
        },
    }
    assert dialect.write(Op.PUSH_CREATE, PushCreate(config)) == wire
    assert dialect.decode(Op.PUSH_GET, wire) == config
    assert dialect.write(Op.PUSH_GET, PushRef("t", "h")) == {
        "id": "t",
        "pushNotificationConfigId": "h",
    }
    assert dialect.write(Op.PUSH_GET, PushRef("t", None)) == {"id": "t"}
    assert dialect.write(Op.PUSH_LIST, PushRef("t")) == {"id": "t"}
    assert dialect.write(Op.PUSH_DELETE, PushRef("t", "h")) == {
        "id": "t",
        "pushNotificationConfigId": "h",
    }
    assert dialect.decode(Op.PUSH_LIST, [wire]) == [config]
    assert dialect.decode(Op.PUSH_LIST, {"configs": [wire]}) == [config]
    with pytest.raises(ValueError, match="task_id"):
        dialect.write(
            Op.PUSH_CREATE, PushCreate(PushNotificationConfig(url="https://hook.example/"))
        )


# -- list tasks ------------------------------------------------------------------------------------


def test_v1_list_tasks_params() -> None:
    params = _tenant("acme").params(
        Op.LIST,
        ListTasks(
            "c-1",
            20,
            "cursor-2",
            status=TaskState.INPUT_REQUIRED,
            history_length=2,
            include_artifacts=True,
            updated_after="2026-01-01T00:00:00Z",
        ),
    )
    assert params == {
        "contextId": "c-1",
        "pageSize": 20,
        "pageToken": "cursor-2",
        "status": "TASK_STATE_INPUT_REQUIRED",
        "historyLength": 2,
        "includeArtifacts": True,
        "statusTimestampAfter": "2026-01-01T00:00:00Z",
        "tenant": "acme",
    }
    assert V1.write(Op.LIST, ListTasks(None, None, None)) == {}


def test_v1_task_page() -> None:
    dialect = V1
    page = dialect.decode(
        Op.LIST,
        {
            "tasks": [_v1_task(), _v1_task("TASK_STATE_COMPLETED")],
            "nextPageToken": "n-2",
            "pageSize": 2,
            "totalSize": 7,
        },
    )
    assert [t.state for t in page.tasks] == [TaskState.WORKING, TaskState.COMPLETED]
    assert (page.next_cursor, page.page_size, page.total_size) == ("n-2", 2, 7)
    last = dialect.decode(Op.LIST, {"tasks": [], "nextPageToken": ""})
    assert last.next_cursor is None
    assert last.tasks == []
    assert dialect.decode(Op.LIST, {}).next_cursor is None


def test_v03_list_tasks_params_follow_the_v03_era_tasks_list() -> None:
    """``tasks/list`` as the spec's "0.4.0" draft has it: v0.3 states, a time filter in
    milliseconds; over HTTP+JSON the v0.3 proto's names (``TASK_STATE_CANCELLED``, a
    ``lastUpdatedTime`` timestamp)."""
    filters: dict[str, Any] = {
        "status": TaskState.CANCELED,
        "history_length": 0,
        "include_artifacts": True,
        "updated_after": "2026-01-01T00:00:01.5Z",
    }
    rpc = V03.write(Op.LIST, ListTasks("c-1", 20, "cursor-2", **filters))
    assert rpc == {
        "contextId": "c-1",
        "pageSize": 20,
        "pageToken": "cursor-2",
        "status": "canceled",
        "historyLength": 0,
        "includeArtifacts": True,
        "lastUpdatedAfter": 1767225601500,
    }
    assert V03.read(Op.LIST, rpc).updated_after == "2026-01-01T00:00:01.500Z"
    rest = V03_REST.write(Op.LIST, ListTasks("c-1", None, None, **filters))
    assert rest["status"] == "TASK_STATE_CANCELLED"
    assert rest["lastUpdatedTime"] == "2026-01-01T00:00:01.5Z"
    assert V03_REST.read(Op.LIST, rest).status is TaskState.CANCELED
    assert V03.write(Op.LIST, ListTasks(None, None, None)) == {}
    with pytest.raises(A2AProtocolError, match="unknown task state"):
        V03.read(Op.LIST, {"status": "running"})


def test_v03_task_page() -> None:
    dialect = V03
    wire = {"tasks": [_v03_task(), _v03_task("completed")], "totalSize": 5, "pageSize": 2}
    page = dialect.decode(Op.LIST, {**wire, "nextPageToken": "n-2"})
    assert [t.state for t in page.tasks] == [TaskState.WORKING, TaskState.COMPLETED]
    assert (page.next_cursor, page.page_size, page.total_size) == ("n-2", 2, 5)
    again = dialect.encode(Op.LIST, page)
    assert (
        again["tasks"][0]["kind"] == "task" and again["tasks"][1]["status"]["state"] == "completed"
    )
    assert dialect.decode(Op.LIST, {**wire, "nextPageToken": ""}).next_cursor is None


# -- malformed payloads ------------------------------------------------------------------------------

MALFORMED_V1: list[tuple[str, Any]] = [
    ("task", "not an object"),
    ("task", None),
    ("task", {"id": "t"}),
    ("task", {"status": {"state": "TASK_STATE_WORKING"}}),
    ("task", {"id": ["t"], "status": {}}),
    ("task", {"id": "t", "status": "working"}),
    ("task", {"id": "t", "status": {"state": 2, "timestamp": 5}}),
    ("task", {"id": "t", "status": {}, "artifacts": "nope"}),
    ("task", {"id": "t", "status": {}, "artifacts": [None]}),
    ("task", {"id": "t", "status": {}, "artifacts": [{"parts": [{"text": 1}]}]}),
    ("task", {"id": "t", "status": {}, "history": [{"parts": [{}]}]}),
    ("task", {"id": "t", "status": {}, "history": [{"parts": [{"raw": "!!"}]}]}),
    ("task", {"id": "t", "status": {}, "history": [{"parts": [{"raw": 5}]}]}),
    ("task", {"id": "t", "status": {}, "history": [{"parts": "x"}]}),
    ("task", {"id": "t", "status": {}, "history": [{"parts": [], "extensions": [1]}]}),
    ("task", {"id": "t", "status": {}, "metadata": []}),
    ("task", {"id": "t", "status": {"message": "hi"}}),
    ("send", {}),
    ("send", []),
    ("send", {"task": "x"}),
    ("event", {}),
    ("event", {"statusUpdate": {"taskId": "t"}}),
    ("event", {"statusUpdate": []}),
    ("event", {"statusUpdate": {"status": {"state": "TASK_STATE_WORKING"}}}),
    ("event", {"artifactUpdate": {"taskId": "t"}}),
    ("event", {"artifactUpdate": {"taskId": "t", "artifact": {"parts": []}, "append": "yes"}}),
    ("page", {"tasks": 3}),
    ("page", {"tasks": [{}]}),
    ("page", {"tasks": [], "nextPageToken": 5}),
    ("push", {}),
    ("push", {"url": 5}),
    ("push", {"url": "https://h/", "authentication": "Bearer"}),
    ("pushes", {"configs": "x"}),
    ("pushes", "x"),
]

MALFORMED_V03: list[tuple[str, Any]] = [
    ("task", "not an object"),
    ("task", {"kind": "task", "id": "t"}),
    (
        "task",
        {
            "kind": "task",
            "id": "t",
            "status": {},
            "artifacts": [{"parts": [{"kind": "file", "file": {}}]}],
        },
    ),
    (
        "task",
        {"kind": "task", "id": "t", "status": {}, "artifacts": [{"parts": [{"kind": "file"}]}]},
    ),
    (
        "task",
        {"kind": "task", "id": "t", "status": {}, "history": [{"parts": [{"kind": "video"}]}]},
    ),
    (
        "task",
        {
            "kind": "task",
            "id": "t",
            "status": {},
            "history": [{"parts": [{"kind": "text", "text": None}]}],
        },
    ),
    (
        "task",
        {
            "kind": "task",
            "id": "t",
            "status": {},
            "history": [{"parts": [{"kind": "file", "file": {"bytes": "%%"}}]}],
        },
    ),
    ("send", {"kind": "mystery"}),
    ("send", [1]),
    ("event", {"kind": "status-update"}),
    ("event", {"kind": "status-update", "taskId": "t", "status": {}, "final": "yes"}),
    ("event", {"kind": "artifact-update", "taskId": "t"}),
    ("event", {"kind": "artifact-update", "artifact": {"parts": []}}),
    ("event", {"kind": "status-update", "taskId": {"id": 1}, "status": {}}),
    ("event", {}),
    ("push", {"pushNotificationConfig": 3}),
    ("push", {"taskId": "t", "pushNotificationConfig": {}}),
    (
        "push",
        {"pushNotificationConfig": {"url": "https://h/", "authentication": {"schemes": "Bearer"}}},
    ),
    ("pushes", "x"),
    ("pushes", [3]),
]


def _decode(dialect: Dialect, what: str, value: Any) -> Any:
    if what == "task":
        return dialect.decode(Op.GET, value)
    if what == "send":
        return dialect.decode(Op.SEND, value)
    if what == "event":
        return dialect.decode(Op.STREAM, value)
    if what == "page":
        return dialect.decode(Op.LIST, value)
    if what == "push":
        return dialect.decode(Op.PUSH_GET, value)
    return dialect.decode(Op.PUSH_LIST, value)


@pytest.mark.parametrize(("what", "value"), MALFORMED_V1)
def test_v1_malformed_payloads_are_protocol_errors(what: str, value: Any) -> None:
    with pytest.raises(A2AProtocolError):
        _decode(V1, what, value)


@pytest.mark.parametrize(("what", "value"), MALFORMED_V03)
def test_v03_malformed_payloads_are_protocol_errors(what: str, value: Any) -> None:
    with pytest.raises(A2AProtocolError):
        _decode(V03, what, value)


def test_int_ids_are_tolerated() -> None:
    task = V1.decode(Op.GET, {"id": 17, "status": {"state": 3}})
    assert task.id == "17"
    assert task.state is TaskState.COMPLETED
    assert task.status.wire_state is None


def test_codecs_alike_share_their_header_tables() -> None:
    one = codec_for("jsonrpc", "1.0", "http://a.example/")
    other = codec_for("jsonrpc", "1.0", "http://b.example/")
    for op in (Op.SEND, Op.STREAM):
        assert one.headers(op) is other.headers(op)
    assert one.headers(Op.SEND, either=True) is other.headers(Op.SEND, either=True)
    opted = codec_for("jsonrpc", "1.0", "http://a.example/", extensions=["urn:x"])
    assert opted.headers(Op.SEND) is not one.headers(Op.SEND)
    assert opted.headers(Op.SEND)["A2A-Extensions"] == "urn:x"
