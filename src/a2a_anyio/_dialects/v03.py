"""A2A v0.3 and v0.2 as JSON-RPC carries them: ``kind`` discriminators, ``final``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects._shapes import Shapes, put
from a2a_anyio._dialects.card import parse_card
from a2a_anyio._dialects.dialect import (
    Dialect,
    Payload,
    cancel_payload,
    list_payload,
    needs_config,
    nothing,
    push_ref_payload,
    same,
    subscribe_payload,
    task_payload,
)
from a2a_anyio._dialects.ops import Op, PushCreate, Send, SendConfig
from a2a_anyio._errors import (
    ContentTypeNotSupportedError,
    ExtendedCardNotConfiguredError,
    InvalidAgentResponseError,
    shown,
)
from a2a_anyio._model import (
    DataPart,
    FilePart,
    JSONDict,
    Message,
    Part,
    PushNotificationConfig,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
    TextPart,
)

_ROLE_OUT = {Role.USER: "user", Role.AGENT: "agent", Role.UNSPECIFIED: "user"}
# v1.0 data parts may hold any JSON value; v0.3 only objects. The 1.x SDK wraps the others
# as {"value": x} and marks the part, and so do we, unwrapping on the way back.
_COMPAT_MARK = "data_part_compat"


def decode_part(value: Any) -> Part:
    d = v.obj(value, "part")
    kind = d.get("kind", d.get("type"))
    metadata = v.optional_dict(d, "metadata")
    if kind == "text" or (kind is None and "text" in d):
        t = d.get("text")
        if not isinstance(t, str):
            v.bad("text part is not a string")
        return TextPart(t, None, metadata, d)
    if kind == "file" or (kind is None and "file" in d):
        f = v.obj(d.get("file"), "file part")
        media_type = v.text(f, "mimeType", "mime_type") or v.text(f, "mediaType")
        name = v.text(f, "name")
        raw = f.get("bytes", f.get("fileWithBytes", f.get("data")))
        if raw is not None:
            return FilePart(v.b64decode(raw), None, media_type, name, metadata, d)
        uri = v.text(f, "uri") or v.text(f, "fileWithUri") or v.text(f, "url")
        if not uri:
            v.bad("file part has neither bytes nor uri")
        return FilePart(None, uri, media_type, name, metadata, d)
    if kind == "data" or (kind is None and "data" in d):
        data = d.get("data")
        if metadata and metadata.get(_COMPAT_MARK) and isinstance(data, dict) and "value" in data:
            data = data["value"]
            # The mark is wire-only (the SDK pops it too): it must not leak into the model.
            metadata = {k: x for k, x in metadata.items() if k != _COMPAT_MARK} or None
        return DataPart(data, None, metadata, d)
    v.bad(f"unknown part kind {shown(kind)}")


def encode_part(part: Part) -> JSONDict:
    metadata = part.metadata
    if isinstance(part, TextPart):
        out: JSONDict = {"kind": "text", "text": part.text}
    elif isinstance(part, DataPart):
        data = part.data
        if not isinstance(data, dict):
            data = {"value": data}
            metadata = {**(metadata or {}), _COMPAT_MARK: True}
        out = {"kind": "data", "data": data}
    else:
        f: JSONDict = (
            {"bytes": v.b64encode(part.data)} if part.data is not None else {"uri": part.url}
        )
        if part.media_type:
            f["mimeType"] = part.media_type
        if part.name:
            f["name"] = part.name
        out = {"kind": "file", "file": f}
    if metadata:
        out["metadata"] = metadata
    return out


_SHAPES = Shapes(decode_part, encode_part, _ROLE_OUT, lambda s: s.value, kinds=True, final=True)
decode_message = _SHAPES.decode_message
encode_message = _SHAPES.encode_message
decode_status = _SHAPES.decode_status
encode_status = _SHAPES.encode_status
decode_artifact = _SHAPES.decode_artifact
encode_artifact = _SHAPES.encode_artifact
decode_task = _SHAPES.decode_task
encode_task = _SHAPES.encode_task


def decode_status_update(d: JSONDict) -> TaskStatusUpdateEvent:
    status = decode_status(d.get("status"))
    return TaskStatusUpdateEvent(
        task_id=v.required_id(d, "taskId", None, "status update"),
        context_id=v.text(d, "contextId"),
        status=status,
        # Servers set final; a terminal state ends the stream even if one forgets.
        final=v.boolean(d, "final") or status.state.is_terminal,
        metadata=v.optional_dict(d, "metadata"),
        raw=d,
    )


def decode_artifact_update(d: JSONDict) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=v.required_id(d, "taskId", None, "artifact update"),
        context_id=v.text(d, "contextId"),
        artifact=decode_artifact(d.get("artifact")),
        append=v.boolean(d, "append"),
        last_chunk=v.boolean(d, "lastChunk"),
        metadata=v.optional_dict(d, "metadata"),
        raw=d,
    )


#: The ``kind`` of each object a result may be.
KINDS = frozenset({"task", "message", "status-update", "artifact-update"})


def decode_result(value: Any) -> StreamEvent:
    """A result told apart by ``kind``: task, message, status-update or artifact-update."""
    d = v.obj(value, "result")
    kind = d.get("kind")
    if kind == "status-update":
        return decode_status_update(d)
    if kind == "artifact-update":
        return decode_artifact_update(d)
    if kind == "task" or (kind is None and "status" in d and "id" in d):
        return decode_task(d)
    if kind == "message" or (kind is None and "parts" in d and "role" in d):
        return decode_message(d)
    v.bad(f"unknown result kind {shown(kind)}")


def encode_result(event: StreamEvent) -> JSONDict:
    """What ``decode_result`` reads."""
    if isinstance(event, TaskArtifactUpdateEvent):
        return {"kind": "artifact-update", **_SHAPES.encode_artifact_update(event)}
    if isinstance(event, TaskStatusUpdateEvent):
        return {"kind": "status-update", **_SHAPES.encode_status_update(event)}
    if isinstance(event, Task):
        return encode_task(event)
    return encode_message(event)


def decode_push_config(value: Any) -> PushNotificationConfig:
    """A ``TaskPushNotificationConfig`` (or the config alone)."""
    d = v.obj(value, "push notification config")
    inner = v.obj(d.get("pushNotificationConfig", d), "pushNotificationConfig")
    auth = v.optional_dict(inner, "authentication") or {}
    schemes = v.str_list(auth, "schemes") or []
    url = v.text(inner, "url")
    if not url:
        v.bad("push notification config has no url")
    return PushNotificationConfig(
        url=url,
        task_id=v.text(d, "taskId"),
        id=v.text(inner, "id"),
        token=v.text(inner, "token"),
        auth_scheme=schemes[0] if schemes else None,
        auth_credentials=v.text(auth, "credentials"),
        raw=d,
    )


def encode_task_push_config(config: PushNotificationConfig) -> JSONDict:
    """A ``TaskPushNotificationConfig``: what ``decode_push_config`` reads."""
    out = put({}, taskId=config.task_id)
    out["pushNotificationConfig"] = encode_push_config(config)
    return out


def encode_push_config(config: PushNotificationConfig) -> JSONDict:
    out: JSONDict = {"url": config.url}
    if config.id:
        out["id"] = config.id
    if config.token:
        out["token"] = config.token
    if config.auth_scheme:
        auth: JSONDict = {"schemes": [config.auth_scheme]}
        if config.auth_credentials:
            auth["credentials"] = config.auth_credentials
        out["authentication"] = auth
    return out


def send_params(args: Send) -> JSONDict:
    config = args.config
    conf: JSONDict = {"blocking": config.blocking}
    if config.accepted_output_modes is not None:
        conf["acceptedOutputModes"] = config.accepted_output_modes
    # historyLength 0 means "everything" to v0.3 servers and "nothing" in v1.0: drop it.
    if config.history_length:
        conf["historyLength"] = config.history_length
    if config.push_config is not None:
        conf["pushNotificationConfig"] = encode_push_config(config.push_config)
    params: JSONDict = {"message": encode_message(args.message), "configuration": conf}
    if config.metadata:
        params["metadata"] = config.metadata
    return params


def read_send(decode_message: Callable[[Any], Message], push_in_send: str) -> Callable[[Any], Send]:
    """The reader of send params whose messages ``decode_message`` reads, the push config
    in the configuration's ``push_in_send``."""

    def read(params: Any) -> Send:
        d = v.obj(params, "params")
        conf = v.optional_dict(d, "configuration") or {}
        push = conf.get(push_in_send)
        config = SendConfig(
            conf.get("blocking") is not False,
            v.integer(conf, "historyLength", "history_length") or None,  # 0 means all of it
            v.str_list(conf, "acceptedOutputModes", "accepted_output_modes"),
            None if push is None else decode_push_config(push),
            v.optional_dict(d, "metadata"),
        )
        return Send(decode_message(d.get("message")), config)

    return read


def decode_send_result(value: Any) -> Task | Message:
    result = decode_result(value)
    if isinstance(result, (Task, Message)):
        return result
    v.bad("message/send returned an event instead of a task or message")


def write_push_config(args: PushCreate) -> JSONDict:
    if not args.config.task_id:
        raise ValueError("a push notification config needs a task_id")
    return encode_task_push_config(args.config)


def decode_push_configs(value: Any) -> list[PushNotificationConfig]:
    if isinstance(value, dict):  # tolerate a v1.0-style {"configs": [...]}
        value = v.items(value, "configs")
    if not isinstance(value, list):
        v.bad("push config list is not an array")
    return [decode_push_config(c) for c in value]


def encode_push_configs(configs: list[PushNotificationConfig]) -> list[JSONDict]:
    return [encode_task_push_config(c) for c in configs]


def _event(event: StreamEvent, task: Task | None = None) -> JSONDict:
    return encode_result(event)


def _notification(event: StreamEvent, task: Task) -> JSONDict:
    return encode_task(task)  # the whole task, before v1.0


def _since(updated_after: str) -> JSONDict:
    return {"lastUpdatedAfter": v.epoch_ms(updated_after)}


def _read_since(params: JSONDict) -> str | None:
    ms = v.integer(params, "lastUpdatedAfter")
    return None if ms is None else v.iso_time(ms)


_EVENTS = Payload(same, same, decode_result, encode_result)
_PUSH = (decode_push_config, encode_task_push_config)
_REF = ("id", "pushNotificationConfigId")
_READ_SEND = read_send(decode_message, "pushNotificationConfig")

V03 = Dialect(
    "0.3",
    {
        Op.SEND: Payload(send_params, _READ_SEND, decode_send_result, encode_result),
        Op.STREAM: _EVENTS._replace(write=send_params, read=_READ_SEND),
        Op.GET: task_payload(decode_task, encode_task, zero_is_all=True),
        Op.CANCEL: cancel_payload(decode_task, encode_task),
        Op.SUBSCRIBE: subscribe_payload(_EVENTS),
        # The spec's "0.4.0" draft; few v0.3 agents serve it.
        Op.LIST: list_payload(decode_task, encode_task, lambda s: s.value, (_since, _read_since)),
        Op.PUSH_CREATE: Payload(
            write_push_config, lambda params: PushCreate(decode_push_config(params)), *_PUSH
        ),
        Op.PUSH_GET: push_ref_payload(*_REF, *_PUSH),
        Op.PUSH_LIST: push_ref_payload(_REF[0], None, decode_push_configs, encode_push_configs),
        Op.PUSH_DELETE: needs_config(push_ref_payload(*_REF, nothing, nothing)),
        Op.EXTENDED_CARD: Payload(nothing, nothing, parse_card, same),
    },
    encode_message,
    decode_message,
    _event,
    _notification,
    # v0.3 servers ignore it; v1.0 servers with a compat layer route by it.
    headers={"A2A-Version": "0.3"},
    optional=frozenset({Op.LIST}),
    errors={
        -32005: ContentTypeNotSupportedError,
        -32006: InvalidAgentResponseError,
        -32007: ExtendedCardNotConfiguredError,
    },
)
#: v0.2.x: v0.3's payloads without the task list, no version header, two codes fewer.
V02 = V03._replace(
    version="0.2",
    payloads={op: p for op, p in V03.payloads.items() if op is not Op.LIST},
    headers={},
    optional=frozenset(),
    errors={k: x for k, x in V03.errors.items() if k != -32007},
)
