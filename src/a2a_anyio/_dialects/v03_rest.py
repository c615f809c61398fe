"""A2A v0.3 as its HTTP+JSON binding carries it: ProtoJSON of the v0.3 proto (``content``
for a message's parts, nested file and data parts, ``TASK_STATE_*``, push configs named
``tasks/{id}/pushNotificationConfigs/{id}``)."""

from __future__ import annotations

from typing import Any

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects import v03
from a2a_anyio._dialects._shapes import Shapes
from a2a_anyio._dialects.dialect import (
    Payload,
    list_payload,
    or_none,
    same,
    subscribe_payload,
)
from a2a_anyio._dialects.ops import Op, PushCreate, Send, SendConfig
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


def _decode_v03_rest_part(value: Any) -> Part:
    d = v.obj(value, "part")
    data = d.get("data")
    if isinstance(data, dict) and set(data) <= {"data"}:  # {"data": {"data": {...}}}
        return DataPart(data.get("data"), None, v.optional_dict(d, "metadata"), d)
    return v03.decode_part(value)


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


SHAPES = Shapes(
    _decode_v03_rest_part,
    _encode_v03_rest_part,
    {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT", Role.UNSPECIFIED: "ROLE_USER"},
    lambda state: v.proto_state(state, "TASK_STATE_CANCELLED"),
    final=True,
    message_parts="content",
)


def _config_name(task_id: str | None, config_id: str | None) -> str:
    return f"tasks/{task_id}/pushNotificationConfigs/{config_id}"


def send_params(args: Send) -> JSONDict:
    config: SendConfig = args.config
    conf: JSONDict = {"blocking": config.blocking}
    if config.accepted_output_modes is not None:
        conf["acceptedOutputModes"] = config.accepted_output_modes
    if config.history_length:
        conf["historyLength"] = config.history_length
    params: JSONDict = {"message": SHAPES.encode_message(args.message), "configuration": conf}
    if config.metadata:
        params["metadata"] = config.metadata
    return params


_READ_SEND = v03.read_send(SHAPES.decode_message, "pushNotification")


def read_send_params(params: Any) -> Send:
    d = v.obj(params, "params")
    if "message" not in d and "request" in d:  # the proto's field name
        d = {**d, "message": d["request"]}
    return _READ_SEND(d)


def decode_send_result(value: Any) -> Task | Message:
    d = v.obj(value, "send result")
    if (x := d.get("task")) is not None:
        return SHAPES.decode_task(x)
    if (x := d.get("message", d.get("msg"))) is not None:
        return SHAPES.decode_message(x)
    v.bad("send result has neither task nor message")


def decode_event(value: Any) -> StreamEvent:
    d = v.obj(value, "stream event")
    if (x := d.get("statusUpdate")) is not None:
        return SHAPES.decode_status_update(v.obj(x, "statusUpdate"))
    if (x := d.get("artifactUpdate")) is not None:
        return SHAPES.decode_artifact_update(v.obj(x, "artifactUpdate"))
    if (x := d.get("task")) is not None:
        return SHAPES.decode_task(x)
    if (x := d.get("message", d.get("msg"))) is not None:
        return SHAPES.decode_message(x)
    v.bad("stream event has none of task, message, statusUpdate, artifactUpdate")


def _config_resource(config: PushNotificationConfig, config_id: str | None = None) -> JSONDict:
    """A ``TaskPushNotificationConfig``: the config under its resource name."""
    name = _config_name(config.task_id, config.id if config_id is None else config_id)
    return {"name": name, "pushNotificationConfig": v03.encode_push_config(config)}


def _new_config_id(config: PushNotificationConfig) -> str:
    if not config.task_id:
        raise ValueError("a push notification config needs a task_id")
    return config.id or config.task_id


def write_push_create(args: PushCreate) -> JSONDict:
    """The whole create request, as the a2a-sdk takes it."""
    config = args.config
    config_id = _new_config_id(config)
    resource = _config_resource(config, config_id)
    return {"parent": f"tasks/{config.task_id}", "configId": config_id, "config": resource}


def write_push_resource(args: PushCreate) -> JSONDict:
    """The config alone, as the JS SDK takes it."""
    return _config_resource(args.config, _new_config_id(args.config))


def read_push_create(params: Any) -> PushCreate:
    d = v.obj(params, "params")
    config = decode_push_config(v.optional_dict(d, "config") or d)
    config.id = config.id or v.text(d, "configId")
    config.task_id = v.required_id(d, "id", None, "params")
    return PushCreate(config)


def decode_push_config(value: Any) -> PushNotificationConfig:
    d = v.obj(value, "push notification config")
    config = v03.decode_push_config(d)
    name = v.text(d, "name") or ""
    parts = name.split("/")
    if len(parts) == 4 and parts[0] == "tasks":  # tasks/{id}/pushNotificationConfigs/{cid}
        config.task_id, config.id = parts[1], config.id or parts[3]
    return config


def decode_push_configs(value: Any) -> list[PushNotificationConfig]:
    items = v.items(v.obj(value, "push config list"), "configs") if value else []
    return [decode_push_config(c) for c in items]


def encode_push_configs(configs: list[PushNotificationConfig]) -> JSONDict:
    return {"configs": [_config_resource(c) for c in configs], "nextPageToken": ""}


def _event(event: StreamEvent, task: Task | None = None) -> JSONDict:
    return SHAPES.encode_stream_response(event)


def _since(updated_after: str) -> JSONDict:
    return {"lastUpdatedTime": updated_after}


def _read_since(params: JSONDict) -> str | None:
    return v.text(params, "lastUpdatedTime") or None


_EVENTS = Payload(same, same, decode_event, SHAPES.encode_stream_response)
_PUSH = (decode_push_config, _config_resource)
_JSONRPC = v03.V03.payloads

#: v0.3's dialect but for the payloads' ProtoJSON (a push notification stays the JSON-RPC
#: shape, as the a2a-sdk posts it).
V03_REST = v03.V03._replace(
    payloads={
        Op.SEND: Payload(
            send_params, read_send_params, decode_send_result, SHAPES.encode_stream_response
        ),
        Op.STREAM: _EVENTS._replace(write=send_params, read=read_send_params),
        Op.GET: _JSONRPC[Op.GET]._replace(decode=SHAPES.decode_task, encode=SHAPES.encode_task),
        Op.CANCEL: _JSONRPC[Op.CANCEL]._replace(
            decode=or_none(SHAPES.decode_task), encode=SHAPES.encode_task
        ),
        Op.SUBSCRIBE: subscribe_payload(_EVENTS),
        Op.LIST: list_payload(
            SHAPES.decode_task,
            SHAPES.encode_task,
            lambda state: v.proto_state(state, "TASK_STATE_CANCELLED"),
            (_since, _read_since),
        ),
        Op.PUSH_CREATE: Payload(
            write_push_create, read_push_create, *_PUSH, alternative=write_push_resource
        ),
        Op.PUSH_GET: _JSONRPC[Op.PUSH_GET]._replace(
            decode=decode_push_config, encode=_config_resource
        ),
        Op.PUSH_LIST: _JSONRPC[Op.PUSH_LIST]._replace(
            decode=decode_push_configs, encode=encode_push_configs
        ),
        Op.PUSH_DELETE: _JSONRPC[Op.PUSH_DELETE],
        Op.EXTENDED_CARD: _JSONRPC[Op.EXTENDED_CARD],
    },
    encode_message=SHAPES.encode_message,
    decode_message=SHAPES.decode_message,
    encode_event=_event,
)
