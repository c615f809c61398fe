"""A2A v1.0 over JSON-RPC: PascalCase methods, ProtoJSON shapes, ``A2A-Version: 1.0``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects._shapes import Shapes
from a2a_anyio._dialects.base import Dialect
from a2a_anyio._dialects.ops import PushRef, Send, SendConfig
from a2a_anyio._errors import error_details
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
    TaskState,
    TextPart,
)

_ROLE_OUT = {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT", Role.UNSPECIFIED: "ROLE_UNSPECIFIED"}


def decode_part(value: Any) -> Part:
    # ProtoJSON may spell an unset member as null: only a non-null member chooses the kind.
    d = value if type(value) is dict else v.obj(value, "part")
    if len(d) == 1:  # the usual parts: text alone, or data alone
        if type(text := d.get("text")) is str:
            return TextPart(text, None, None, d)
        if "data" in d:
            return DataPart(d["data"], None, None, d)
    media_type = v.text(d, "mediaType", "media_type")
    metadata = v.optional_dict(d, "metadata")
    if (text := d.get("text")) is not None:
        if not isinstance(text, str):
            v.bad("text is not a string")
        return TextPart(text, media_type, metadata, d)
    if d.get("raw") is not None:
        return FilePart(v.b64decode(d["raw"]), None, media_type, v.text(d, "filename"), metadata, d)
    if d.get("url") is not None:
        return FilePart(None, v.text(d, "url"), media_type, v.text(d, "filename"), metadata, d)
    if "data" in d:
        return DataPart(d["data"], media_type, metadata, d)
    if "text" in d:  # {"text": null}: an empty text part, the protobuf default
        return TextPart("", media_type, metadata, d)
    v.bad("part has none of text, raw, url, data")


def encode_part(part: Part) -> JSONDict:
    if isinstance(part, TextPart):
        out: JSONDict = {"text": part.text}
    elif isinstance(part, DataPart):
        out = {"data": part.data}
    else:
        out = {"raw": v.b64encode(part.data)} if part.data is not None else {"url": part.url}
        if part.name:
            out["filename"] = part.name
    if part.media_type:
        out["mediaType"] = part.media_type
    if part.metadata:
        out["metadata"] = part.metadata
    return out


_SHAPES = Shapes(decode_part, encode_part, _ROLE_OUT, v.proto_state)
decode_message = _SHAPES.decode_message
encode_message = _SHAPES.encode_message
decode_status = _SHAPES.decode_status
encode_status = _SHAPES.encode_status
decode_artifact = _SHAPES.decode_artifact
encode_artifact = _SHAPES.encode_artifact
decode_task = _SHAPES.decode_task
encode_task = _SHAPES.encode_task
decode_status_update = _SHAPES.decode_status_update
encode_status_update = _SHAPES.encode_status_update
decode_artifact_update = _SHAPES.decode_artifact_update
encode_artifact_update = _SHAPES.encode_artifact_update
encode_stream_response = _SHAPES.encode_stream_response


def decode_stream_response(value: Any) -> StreamEvent:
    """A ``StreamResponse``: exactly one of task, message, statusUpdate, artifactUpdate."""
    d = value if type(value) is dict else v.obj(value, "stream event")
    # The snake_case spelling is looked up only when the camelCase one is absent.
    if (x := d.get("artifactUpdate")) is not None:  # the most frequent, looked up first
        return decode_artifact_update(x if type(x) is dict else v.obj(x, "artifactUpdate"))
    if (x := d.get("statusUpdate")) is not None or (x := d.get("status_update")) is not None:
        return decode_status_update(v.obj(x, "statusUpdate"))
    if (x := d.get("artifact_update")) is not None:
        return decode_artifact_update(v.obj(x, "artifactUpdate"))
    if (x := d.get("task")) is not None:
        return decode_task(x)
    if (x := d.get("message")) is not None:
        return decode_message(x)
    v.bad("stream event has none of task, message, statusUpdate, artifactUpdate")


def decode_push_config(value: Any) -> PushNotificationConfig:
    d = v.obj(value, "push notification config")
    auth = v.optional_dict(d, "authentication") or {}
    url = v.text(d, "url")
    if not url:
        v.bad("push notification config has no url")
    return PushNotificationConfig(
        url=url,
        task_id=v.text(d, "taskId", "task_id"),
        id=v.text(d, "id"),
        token=v.text(d, "token"),
        auth_scheme=v.text(auth, "scheme"),
        auth_credentials=v.text(auth, "credentials"),
        raw=d,
    )


def encode_push_config(config: PushNotificationConfig, *, with_task: bool = True) -> JSONDict:
    out: JSONDict = {"url": config.url}
    if with_task and config.task_id:
        out["taskId"] = config.task_id
    if config.id:
        out["id"] = config.id
    if config.token:
        out["token"] = config.token
    if config.auth_scheme:
        auth: JSONDict = {"scheme": config.auth_scheme}
        if config.auth_credentials:
            auth["credentials"] = config.auth_credentials
        out["authentication"] = auth
    return out


class V1Dialect(Dialect):
    """A2A v1.0 JSON-RPC."""

    version = "1.0"
    methods = {  # noqa: RUF012
        "send": "SendMessage",
        "stream": "SendStreamingMessage",
        "get": "GetTask",
        "list": "ListTasks",
        "cancel": "CancelTask",
        "subscribe": "SubscribeToTask",
        "push_create": "CreateTaskPushNotificationConfig",
        "push_get": "GetTaskPushNotificationConfig",
        "push_list": "ListTaskPushNotificationConfigs",
        "push_delete": "DeleteTaskPushNotificationConfig",
        "extended_card": "GetExtendedAgentCard",
    }

    def __init__(self, tenant: str | None = None) -> None:
        self.tenant = tenant

    def headers(self) -> dict[str, str]:
        return {"A2A-Version": "1.0"}

    def _with_tenant(self, params: JSONDict) -> JSONDict:
        if self.tenant:
            params["tenant"] = self.tenant
        return params

    def encode_message(self, message: Message) -> JSONDict:
        return encode_message(message)

    def decode_message(self, value: Any) -> Message:
        return decode_message(value)

    def send_params(self, message: Message, config: SendConfig) -> JSONDict:
        params: JSONDict = {"message": encode_message(message)}
        conf: JSONDict = {}
        if config.accepted_output_modes is not None:
            conf["acceptedOutputModes"] = config.accepted_output_modes
        if config.history_length is not None:
            conf["historyLength"] = config.history_length
        if not config.blocking:
            conf["returnImmediately"] = True
        if config.push_config is not None:
            conf["taskPushNotificationConfig"] = encode_push_config(
                config.push_config, with_task=False
            )
        if conf:
            params["configuration"] = conf
        if config.metadata:
            params["metadata"] = config.metadata
        return self._with_tenant(params)

    def read_send_params(self, params: Any) -> Send:
        d = v.obj(params, "params")
        conf = v.optional_dict(d, "configuration") or {}
        push = v.field(conf, "taskPushNotificationConfig", "task_push_notification_config")
        config = SendConfig(
            not v.boolean(conf, "returnImmediately", "return_immediately"),
            v.integer(conf, "historyLength", "history_length"),
            v.str_list(conf, "acceptedOutputModes", "accepted_output_modes"),
            None if push is None else decode_push_config(push),
            v.optional_dict(d, "metadata"),
        )
        return Send(decode_message(d.get("message")), config)

    def decode_send_result(self, value: Any) -> Task | Message:
        d = v.obj(value, "SendMessage result")
        if (x := d.get("task")) is not None:
            return decode_task(x)
        if (x := d.get("message")) is not None:
            return decode_message(x)
        v.bad("SendMessage result has neither task nor message")

    def encode_send_result(self, result: Task | Message) -> JSONDict:
        return _SHAPES.encode_stream_response(result)

    def decode_event(self, value: Any) -> StreamEvent:
        return decode_stream_response(value)

    def encode_event(self, event: StreamEvent, task: Task | None = None) -> JSONDict:
        return _SHAPES.encode_stream_response(event)

    def encode_notification(self, event: StreamEvent, task: Task) -> JSONDict:
        return _SHAPES.encode_stream_response(event)  # v1.0 posts the event itself

    def decode_task(self, value: Any) -> Task:
        return decode_task(value)

    def encode_task(self, task: Task) -> JSONDict:
        return encode_task(task)

    def task_params(self, task_id: str, history_length: int | None = None) -> JSONDict:
        return self._with_tenant(super().task_params(task_id, history_length))

    def cancel_params(self, task_id: str, metadata: JSONDict | None = None) -> JSONDict:
        return self._with_tenant(super().cancel_params(task_id, metadata))

    def subscribe_params(self, task_id: str) -> JSONDict:
        return self._with_tenant(super().subscribe_params(task_id))

    def list_state(self, state: TaskState) -> str:
        return v.proto_state(v.state(state))

    def since_params(self, updated_after: str) -> JSONDict:
        return {"statusTimestampAfter": updated_after}

    def read_since(self, params: JSONDict) -> str | None:
        return v.text(params, "statusTimestampAfter") or None

    def list_tasks_params(
        self, context_id: str | None, limit: int | None, cursor: str | None, **filters: Any
    ) -> JSONDict:
        return self._with_tenant(super().list_tasks_params(context_id, limit, cursor, **filters))

    def push_create_params(self, config: PushNotificationConfig) -> JSONDict:
        return self._with_tenant(encode_push_config(config))

    def read_push_create_params(self, params: Any) -> PushNotificationConfig:
        return decode_push_config(params)

    def push_get_params(self, task_id: str, config_id: str | None) -> JSONDict:
        params: JSONDict = {"taskId": task_id}
        if config_id:
            params["id"] = config_id
        return self._with_tenant(params)

    def push_list_params(self, task_id: str) -> JSONDict:
        return self._with_tenant({"taskId": task_id})

    def push_delete_params(self, task_id: str, config_id: str) -> JSONDict:
        return self._with_tenant({"taskId": task_id, "id": config_id})

    def read_push_params(self, params: Any) -> PushRef:
        d = v.obj(params, "params")
        return PushRef(v.required_id(d, "taskId", "task_id", "params"), v.text(d, "id"))

    def decode_push_config(self, value: Any) -> PushNotificationConfig:
        return decode_push_config(value)

    def encode_push_config(self, config: PushNotificationConfig) -> JSONDict:
        return encode_push_config(config)

    def decode_push_configs(self, value: Any) -> list[PushNotificationConfig]:
        if isinstance(value, list):  # tolerate a bare array
            return [decode_push_config(c) for c in value]
        d = v.obj(value, "ListTaskPushNotificationConfigs result")
        return [decode_push_config(c) for c in v.items(d, "configs")]

    def encode_push_configs(self, configs: list[PushNotificationConfig]) -> Any:
        return {"configs": [encode_push_config(c) for c in configs]}

    def error_data(self, code: int, metadata: Mapping[str, Any]) -> Any:
        return error_details(code, metadata)  # v1.0: an ErrorInfo, whatever the metadata
