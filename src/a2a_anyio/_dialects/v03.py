"""A2A v0.2 / v0.3 over JSON-RPC: ``message/send`` family, ``kind`` discriminators, ``final``."""

from __future__ import annotations

from typing import Any

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects._shapes import Shapes, put
from a2a_anyio._dialects.base import Dialect
from a2a_anyio._dialects.ops import PushRef, Send, SendConfig, TaskRef
from a2a_anyio._errors import shown
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


class V03Dialect(Dialect):
    """A2A v0.2 and v0.3 JSON-RPC."""

    version = "0.3"
    methods = {  # noqa: RUF012
        "send": "message/send",
        "stream": "message/stream",
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "list": "tasks/list",  # the spec's "0.4.0" draft; few v0.3 agents serve it
        "subscribe": "tasks/resubscribe",
        "push_create": "tasks/pushNotificationConfig/set",
        "push_get": "tasks/pushNotificationConfig/get",
        "push_list": "tasks/pushNotificationConfig/list",
        "push_delete": "tasks/pushNotificationConfig/delete",
        "extended_card": "agent/getAuthenticatedExtendedCard",
    }
    optional = frozenset({"list"})

    #: Where a send's configuration carries a push config.
    push_in_send = "pushNotificationConfig"

    def headers(self) -> dict[str, str]:
        # v0.3 servers ignore it; v1.0 servers with a compat layer route by it.
        return {"A2A-Version": "0.3"}

    def encode_message(self, message: Message) -> JSONDict:
        return encode_message(message)

    def decode_message(self, value: Any) -> Message:
        return decode_message(value)

    def send_params(self, message: Message, config: SendConfig) -> JSONDict:
        conf: JSONDict = {"blocking": config.blocking}
        if config.accepted_output_modes is not None:
            conf["acceptedOutputModes"] = config.accepted_output_modes
        # historyLength 0 means "everything" to v0.3 servers and "nothing" in v1.0: drop it.
        if config.history_length:
            conf["historyLength"] = config.history_length
        if config.push_config is not None:
            conf["pushNotificationConfig"] = encode_push_config(config.push_config)
        params: JSONDict = {"message": encode_message(message), "configuration": conf}
        if config.metadata:
            params["metadata"] = config.metadata
        return params

    def read_send_params(self, params: Any) -> Send:
        d = v.obj(params, "params")
        conf = v.optional_dict(d, "configuration") or {}
        push = conf.get(self.push_in_send)
        config = SendConfig(
            conf.get("blocking") is not False,
            v.integer(conf, "historyLength", "history_length") or None,  # 0 means all of it
            v.str_list(conf, "acceptedOutputModes", "accepted_output_modes"),
            None if push is None else decode_push_config(push),
            v.optional_dict(d, "metadata"),
        )
        return Send(self.decode_message(d.get("message")), config)

    def decode_send_result(self, value: Any) -> Task | Message:
        result = decode_result(value)
        if isinstance(result, (Task, Message)):
            return result
        v.bad("message/send returned an event instead of a task or message")

    def encode_send_result(self, result: Task | Message) -> JSONDict:
        return encode_result(result)

    def decode_event(self, value: Any) -> StreamEvent:
        return decode_result(value)

    def encode_event(self, event: StreamEvent, task: Task | None = None) -> JSONDict:
        return encode_result(event)

    def decode_task(self, value: Any) -> Task:
        return decode_task(value)

    def encode_task(self, task: Task) -> JSONDict:
        return encode_task(task)

    def task_params(self, task_id: str, history_length: int | None = None) -> JSONDict:
        params: JSONDict = {"id": task_id}
        if history_length:
            params["historyLength"] = history_length
        return params

    def read_task_params(self, params: Any) -> TaskRef:
        ref = super().read_task_params(params)
        return TaskRef(ref.task_id, ref.history_length or None)  # 0 means all of it

    def since_params(self, updated_after: str) -> JSONDict:
        return {"lastUpdatedAfter": v.epoch_ms(updated_after)}

    def read_since(self, params: JSONDict) -> str | None:
        ms = v.integer(params, "lastUpdatedAfter")
        return None if ms is None else v.iso_time(ms)

    def push_create_params(self, config: PushNotificationConfig) -> JSONDict:
        if not config.task_id:
            raise ValueError("a push notification config needs a task_id")
        return encode_task_push_config(config)

    def read_push_create_params(self, params: Any) -> PushNotificationConfig:
        return decode_push_config(params)

    def push_get_params(self, task_id: str, config_id: str | None) -> JSONDict:
        params: JSONDict = {"id": task_id}
        if config_id:
            params["pushNotificationConfigId"] = config_id
        return params

    def push_list_params(self, task_id: str) -> JSONDict:
        return {"id": task_id}

    def push_delete_params(self, task_id: str, config_id: str) -> JSONDict:
        return {"id": task_id, "pushNotificationConfigId": config_id}

    def read_push_params(self, params: Any) -> PushRef:
        d = v.obj(params, "params")
        return PushRef(
            v.required_id(d, "id", None, "params"), v.text(d, "pushNotificationConfigId")
        )

    def decode_push_config(self, value: Any) -> PushNotificationConfig:
        return decode_push_config(value)

    def encode_push_config(self, config: PushNotificationConfig) -> JSONDict:
        return encode_task_push_config(config)

    def decode_push_configs(self, value: Any) -> list[PushNotificationConfig]:
        if isinstance(value, dict):  # tolerate a v1.0-style {"configs": [...]}
            value = v.items(value, "configs")
        if not isinstance(value, list):
            v.bad("push config list is not an array")
        return [decode_push_config(c) for c in value]


class V02Dialect(V03Dialect):
    """A2A v0.2.x: the v0.3 JSON-RPC family without the extended-card method."""

    version = "0.2"
    methods = {  # noqa: RUF012
        k: m for k, m in V03Dialect.methods.items() if k not in ("extended_card", "list")
    }

    def headers(self) -> dict[str, str]:
        return {}
