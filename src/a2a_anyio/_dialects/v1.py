"""A2A v1.0: ProtoJSON payloads (both bindings carry the same), ``A2A-Version: 1.0``."""

from __future__ import annotations

from typing import Any

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects import v03
from a2a_anyio._dialects._shapes import Shapes
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
from a2a_anyio._dialects.errors import error_details
from a2a_anyio._dialects.ops import Op, PushCreate, Send, SendConfig
from a2a_anyio._errors import (
    ContentTypeNotSupportedError,
    ExtendedCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidAgentResponseError,
    VersionNotSupportedError,
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
    TaskStatusUpdateEvent,
    TextPart,
)

_ROLE_OUT = {Role.USER: "ROLE_USER", Role.AGENT: "ROLE_AGENT", Role.UNSPECIFIED: "ROLE_UNSPECIFIED"}


def decode_part(value: Any) -> Part:
    # ProtoJSON may spell an unset member as null: only a non-null member chooses the kind.
    d = value if type(value) is dict else v.obj(value, "part")
    if len(d) == 1:  # the usual parts: text alone, or data alone
        if type(text := d.get("text")) is str:
            part = TextPart(text)
            del part.raw  # made again when read (TextPart): a task keeps thousands of these
            return part
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


_SHAPES = Shapes(decode_part, encode_part, _ROLE_OUT, v.proto_state, lean=True)
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
    if isinstance(kind := d.get("kind"), str) and kind in v03.KINDS:
        return _v03_event(d)
    v.bad("stream event has none of task, message, statusUpdate, artifactUpdate")


def _v03_event(d: JSONDict) -> StreamEvent:
    """An event shaped as v0.3 shapes it (``kind``), which some v1.0 servers send among their
    own: read by v0.3's decoders, and ending the stream where a v1.0 event would."""
    event = v03.decode_result(d)
    if isinstance(event, TaskStatusUpdateEvent) and event.status.state.is_final:
        event.final = True  # v1.0 ends a stream on an interrupted state too
    return event


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


def send_params(args: Send) -> JSONDict:
    config = args.config
    params: JSONDict = {"message": encode_message(args.message)}
    conf: JSONDict = {}
    if config.accepted_output_modes is not None:
        conf["acceptedOutputModes"] = config.accepted_output_modes
    if config.history_length is not None:
        conf["historyLength"] = config.history_length
    if not config.blocking:
        conf["returnImmediately"] = True
    if config.push_config is not None:
        conf["taskPushNotificationConfig"] = encode_push_config(config.push_config, with_task=False)
    if conf:
        params["configuration"] = conf
    if config.metadata:
        params["metadata"] = config.metadata
    return params


def read_send_params(params: Any) -> Send:
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


def decode_send_result(value: Any) -> Task | Message:
    d = v.obj(value, "SendMessage result")
    if (x := d.get("task")) is not None:
        return decode_task(x)
    if (x := d.get("message")) is not None:
        return decode_message(x)
    if d.get("kind") in ("task", "message"):
        return v03.decode_send_result(d)  # shaped as v0.3 shapes it (some v1.0 servers)
    v.bad("SendMessage result has neither task nor message")


def decode_push_configs(value: Any) -> list[PushNotificationConfig]:
    if isinstance(value, list):  # tolerate a bare array
        return [decode_push_config(c) for c in value]
    d = v.obj(value, "ListTaskPushNotificationConfigs result")
    return [decode_push_config(c) for c in v.items(d, "configs")]


def encode_push_configs(configs: list[PushNotificationConfig]) -> JSONDict:
    return {"configs": [encode_push_config(c) for c in configs]}


def _event(event: StreamEvent, task: Task | None = None) -> JSONDict:
    return encode_stream_response(event)  # a notification posts the event itself too


def _since(updated_after: str) -> JSONDict:
    return {"statusTimestampAfter": updated_after}


def _read_since(params: JSONDict) -> str | None:
    return v.text(params, "statusTimestampAfter") or None


_EVENTS = Payload(same, same, decode_stream_response, encode_stream_response)
_PUSH = (decode_push_config, encode_push_config)

V1 = Dialect(
    "1.0",
    {
        Op.SEND: Payload(send_params, read_send_params, decode_send_result, encode_stream_response),
        Op.STREAM: _EVENTS._replace(write=send_params, read=read_send_params),
        Op.GET: task_payload(decode_task, encode_task),
        Op.CANCEL: cancel_payload(decode_task, encode_task),
        Op.SUBSCRIBE: subscribe_payload(_EVENTS),
        Op.LIST: list_payload(decode_task, encode_task, v.proto_state, (_since, _read_since)),
        Op.PUSH_CREATE: Payload(
            lambda args: encode_push_config(args.config),
            lambda params: PushCreate(decode_push_config(params)),
            *_PUSH,
        ),
        Op.PUSH_GET: push_ref_payload("taskId", "id", *_PUSH),
        Op.PUSH_LIST: push_ref_payload("taskId", None, decode_push_configs, encode_push_configs),
        Op.PUSH_DELETE: needs_config(push_ref_payload("taskId", "id", nothing, nothing)),
        Op.EXTENDED_CARD: Payload(nothing, nothing, parse_card, same),
    },
    encode_message,
    decode_message,
    _event,
    _event,
    headers={"A2A-Version": "1.0"},
    errors={
        -32005: ContentTypeNotSupportedError,
        -32006: InvalidAgentResponseError,
        -32007: ExtendedCardNotConfiguredError,
        -32008: ExtensionSupportRequiredError,
        -32009: VersionNotSupportedError,
    },
    error_data=error_details,  # an ErrorInfo, whatever the metadata
    tenant="tenant",
    extension_headers=("A2A-Extensions",),
)
