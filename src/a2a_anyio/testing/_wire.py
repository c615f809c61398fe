"""Server-side codecs of the fake agent: the model encoded in each dialect's wire shapes, and
requests decoded from them.

One ``Wire`` per (dialect, binding): v1.0 ProtoJSON (JSON-RPC and REST alike), v0.2/v0.3
JSON-RPC (``kind`` discriminators, ``final``), v0.3 REST (ProtoJSON of the v0.3 proto:
``content``, ``ROLE_*``, ``TASK_STATE_CANCELLED``) and the legacy ``tasks/send`` dialect
(parts with ``type``, ``sessionId``, artifact chunking inside the artifact).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects import v03, v1
from a2a_anyio._errors import A2AProtocolError
from a2a_anyio._model import (
    Artifact,
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
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)


class InvalidParams(Exception):
    """A request that does not have the dialect's shape (answered with -32602 / HTTP 400)."""


def _proto_state(state: TaskState, cancelled: str) -> str:
    if state is TaskState.UNKNOWN:
        return "TASK_STATE_UNSPECIFIED"
    if state is TaskState.CANCELED:
        return cancelled
    return "TASK_STATE_" + str(state.value).upper().replace("-", "_")


def _put(out: JSONDict, key: str, value: Any) -> None:
    if value:
        out[key] = value


@dataclass(slots=True)
class SendRequest:
    """A decoded send / stream request."""

    message: Message
    blocking: bool = True
    history_length: int | None = None
    push_config: PushNotificationConfig | None = None
    metadata: JSONDict = field(default_factory=dict)
    #: legacy only: the task id the client chose, and its session id.
    task_id: str | None = None
    session_id: str | None = None


class Wire:
    """Encoders and request decoders of one dialect and binding."""

    #: "1.0", "0.3", "0.2" or "legacy"; the version used to read error codes.
    version = "1.0"
    #: True for the HTTP+JSON binding.
    rest = False
    #: True when streams end with a ``final`` flag (all but v1.0).
    has_final = True
    #: False for the legacy dialect, whose streams carry no task snapshot.
    snapshots = True
    #: ``historyLength: 0`` means "no history" (v1.0, legacy) rather than "all" (v0.2/v0.3).
    zero_history_is_none = False
    #: Refuse requests in another dialect's spelling (roles, ``kind``, ``type``, ``content``)
    #: and messages without ``messageId``; off, the agent reads any spelling it knows.
    strict = True

    def check(self, ok: bool, problem: str) -> None:
        """Refuse a request that is off the dialect's spelling (when strict)."""
        if self.strict and not ok:
            raise InvalidParams(problem)

    # -- encoders -----------------------------------------------------------------------

    def part(self, part: Part) -> JSONDict:
        raise NotImplementedError

    def message(self, message: Message) -> JSONDict:
        raise NotImplementedError

    def status(self, status: TaskStatus) -> JSONDict:
        raise NotImplementedError

    def artifact(self, artifact: Artifact, index: int = 0) -> JSONDict:
        out: JSONDict = {"artifactId": artifact.artifact_id}
        _put(out, "name", artifact.name)
        _put(out, "description", artifact.description)
        out["parts"] = [self.part(p) for p in artifact.parts]
        _put(out, "metadata", artifact.metadata)
        _put(out, "extensions", artifact.extensions)
        return out

    def task(self, task: Task) -> JSONDict:
        raise NotImplementedError

    def event(self, event: StreamEvent, task: Task | None) -> JSONDict:
        """One stream event (``task`` is the task it belongs to, for artifact positions)."""
        raise NotImplementedError

    def send_result(self, result: Task | Message) -> JSONDict:
        raise NotImplementedError

    def push_config(self, config: PushNotificationConfig) -> JSONDict:
        raise NotImplementedError

    def push_configs(self, configs: list[PushNotificationConfig]) -> Any:
        raise NotImplementedError

    def push_body(self, event: StreamEvent, task: Task) -> JSONDict:
        """The body of a push notification about ``event``: v1.0 posts the event, older
        versions the whole task."""
        return self.task(task)

    # -- decoders -----------------------------------------------------------------------

    def send_request(self, params: Any) -> SendRequest:
        raise NotImplementedError

    #: The client-side decoder of a push-notification config in this wire's shape.
    push_config_decoder: ClassVar[Callable[[Any], PushNotificationConfig]]

    def decode_push_config(self, params: Any, task_id: str | None = None) -> PushNotificationConfig:
        config: PushNotificationConfig = _decoded(
            type(self).push_config_decoder, _params(params), "push config"
        )
        if task_id is not None:
            config.task_id = task_id
        return config


def _params(value: Any) -> JSONDict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidParams("params must be an object")
    return value


def _decoded(fn: Any, value: Any, what: str) -> Any:
    try:
        return fn(value)
    except (A2AProtocolError, ValueError) as exc:
        raise InvalidParams(f"{what}: {getattr(exc, 'message', exc)}") from None


def _int(d: Mapping[str, Any], camel: str, snake: str | None = None) -> int | None:
    value = d.get(camel, d.get(snake) if snake else None)
    if value is None:
        return None
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InvalidParams(f"{camel} is not an integer")


def _check_message(message: Message, strict: bool, what: str = "message") -> None:
    if strict and not message.message_id:
        raise InvalidParams(f"{what}.messageId is required")
    if message.role is Role.UNSPECIFIED:
        raise InvalidParams(f"{what}.role is missing or not a role of this dialect")
    if not message.parts:
        raise InvalidParams(f"{what}.parts must contain at least one part")


# -- v1.0 ------------------------------------------------------------------------------------


class V1Wire(Wire):
    """v1.0 ProtoJSON, the same for JSON-RPC and HTTP+JSON."""

    push_config_decoder = v1.decode_push_config

    version = "1.0"
    has_final = False
    zero_history_is_none = True

    def __init__(self, rest: bool = False) -> None:
        self.rest = rest

    def part(self, part: Part) -> JSONDict:
        return v1.encode_part(part)

    def message(self, message: Message) -> JSONDict:
        return v1.encode_message(message)

    def status(self, status: TaskStatus) -> JSONDict:
        out: JSONDict = {"state": _proto_state(status.state, "TASK_STATE_CANCELED")}
        if status.message is not None:
            out["message"] = self.message(status.message)
        _put(out, "timestamp", status.timestamp)
        return out

    def task(self, task: Task) -> JSONDict:
        out: JSONDict = {"id": task.id}
        _put(out, "contextId", task.context_id)
        out["status"] = self.status(task.status)
        _put(out, "artifacts", [self.artifact(a) for a in task.artifacts])
        _put(out, "history", [self.message(m) for m in task.history])
        _put(out, "metadata", task.metadata)
        return out

    def _status_update(self, event: TaskStatusUpdateEvent) -> JSONDict:
        out: JSONDict = {"taskId": event.task_id}
        _put(out, "contextId", event.context_id)
        out["status"] = self.status(event.status)
        _put(out, "metadata", event.metadata)
        return out

    def _artifact_update(self, event: TaskArtifactUpdateEvent) -> JSONDict:
        out: JSONDict = {"taskId": event.task_id}
        _put(out, "contextId", event.context_id)
        out["artifact"] = self.artifact(event.artifact)
        _put(out, "append", event.append)
        _put(out, "lastChunk", event.last_chunk)
        _put(out, "metadata", event.metadata)
        return out

    def event(self, event: StreamEvent, task: Task | None) -> JSONDict:
        if isinstance(event, Task):
            return {"task": self.task(event)}
        if isinstance(event, Message):
            return {"message": self.message(event)}
        if isinstance(event, TaskStatusUpdateEvent):
            return {"statusUpdate": self._status_update(event)}
        return {"artifactUpdate": self._artifact_update(event)}

    def send_result(self, result: Task | Message) -> JSONDict:
        if isinstance(result, Task):
            return {"task": self.task(result)}
        return {"message": self.message(result)}

    def push_config(self, config: PushNotificationConfig) -> JSONDict:
        return v1.encode_push_config(config)

    def push_configs(self, configs: list[PushNotificationConfig]) -> Any:
        return {"configs": [self.push_config(c) for c in configs]}

    def push_body(self, event: StreamEvent, task: Task) -> JSONDict:
        return self.event(event, task)

    def send_request(self, params: Any) -> SendRequest:
        d = _params(params)
        raw = d.get("message")
        if not isinstance(raw, dict):
            raise InvalidParams("message is required")
        self.check(
            raw.get("role") in ("ROLE_USER", "ROLE_AGENT"),
            'message.role must be "ROLE_USER" or "ROLE_AGENT"',
        )
        message = _decoded(v1.decode_message, raw, "message")
        _check_message(message, self.strict)
        conf = _params(d.get("configuration"))
        push = conf.get("taskPushNotificationConfig", conf.get("task_push_notification_config"))
        return SendRequest(
            message=message,
            blocking=not v.boolean(conf, "returnImmediately", "return_immediately"),
            history_length=_int(conf, "historyLength", "history_length"),
            push_config=self.decode_push_config(push) if push is not None else None,
            metadata=_params(d.get("metadata")),
        )


# -- v0.2 / v0.3 JSON-RPC ----------------------------------------------------------------------


def _v03_task(wire: Wire, task: Task, kind: bool) -> JSONDict:
    out: JSONDict = {"kind": "task"} if kind else {}
    out["id"] = task.id
    _put(out, "contextId", task.context_id)
    out["status"] = wire.status(task.status)
    _put(out, "artifacts", [wire.artifact(a) for a in task.artifacts])
    _put(out, "history", [wire.message(m) for m in task.history])
    _put(out, "metadata", task.metadata)
    return out


class V03Wire(Wire):
    """v0.2 / v0.3 JSON-RPC: ``kind`` on every object, ``final`` on status updates."""

    push_config_decoder = v03.decode_push_config

    def __init__(self, version: str = "0.3") -> None:
        self.version = version

    def part(self, part: Part) -> JSONDict:
        return v03.encode_part(part)

    def message(self, message: Message) -> JSONDict:
        return v03.encode_message(message)

    def status(self, status: TaskStatus) -> JSONDict:
        state = status.state
        out: JSONDict = {"state": state.value}
        if status.message is not None:
            out["message"] = self.message(status.message)
        _put(out, "timestamp", status.timestamp)
        return out

    def task(self, task: Task) -> JSONDict:
        return _v03_task(self, task, kind=True)

    def event(self, event: StreamEvent, task: Task | None) -> JSONDict:
        if isinstance(event, Task):
            return self.task(event)
        if isinstance(event, Message):
            return self.message(event)
        if isinstance(event, TaskStatusUpdateEvent):
            out: JSONDict = {"kind": "status-update", "taskId": event.task_id}
            _put(out, "contextId", event.context_id)
            out["status"] = self.status(event.status)
            out["final"] = event.final
            _put(out, "metadata", event.metadata)
            return out
        out = {"kind": "artifact-update", "taskId": event.task_id}
        _put(out, "contextId", event.context_id)
        out["artifact"] = self.artifact(event.artifact)
        _put(out, "append", event.append)
        _put(out, "lastChunk", event.last_chunk)
        _put(out, "metadata", event.metadata)
        return out

    def send_result(self, result: Task | Message) -> JSONDict:
        return self.task(result) if isinstance(result, Task) else self.message(result)

    def push_config(self, config: PushNotificationConfig) -> JSONDict:
        return {"taskId": config.task_id, "pushNotificationConfig": v03.encode_push_config(config)}

    def push_configs(self, configs: list[PushNotificationConfig]) -> Any:
        return [self.push_config(c) for c in configs]

    def send_request(self, params: Any) -> SendRequest:
        d = _params(params)
        raw = d.get("message")
        if not isinstance(raw, dict):
            raise InvalidParams("message is required")
        self.check(raw.get("kind") == "message", 'message.kind must be "message"')
        for i, p in enumerate(raw.get("parts") or []):
            self.check(isinstance(p, dict) and "kind" in p, f"message.parts[{i}].kind is required")
        self.check(raw.get("role") in ("user", "agent"), 'message.role must be "user" or "agent"')
        message = _decoded(v03.decode_message, raw, "message")
        _check_message(message, self.strict)
        conf = _params(d.get("configuration"))
        push = conf.get("pushNotificationConfig")
        blocking = conf.get("blocking")
        return SendRequest(
            message=message,
            blocking=blocking is not False,
            history_length=_int(conf, "historyLength"),
            push_config=self.decode_push_config(push) if push is not None else None,
            metadata=_params(d.get("metadata")),
        )


# -- v0.3 REST (ProtoJSON of the v0.3 proto) ---------------------------------------------------

_V03_REST_ROLE = {
    Role.USER: "ROLE_USER",
    Role.AGENT: "ROLE_AGENT",
    Role.UNSPECIFIED: "ROLE_UNSPECIFIED",
}


def _v03_rest_part_in(value: Any) -> Part:
    d = v.obj(value, "part")
    metadata = v.optional_dict(d, "metadata")
    if "text" in d:
        t = d["text"]
        if not isinstance(t, str):
            v.bad("text part is not a string")
        return TextPart(t, None, metadata, d)
    if "file" in d:
        f = v.obj(d["file"], "file part")
        media_type = v.text(f, "mimeType", "mime_type")
        name = v.text(f, "name")
        raw = f.get("fileWithBytes", f.get("file_with_bytes"))
        if raw is not None:
            return FilePart(v.b64decode(raw), None, media_type, name, metadata, d)
        uri = v.text(f, "fileWithUri", "file_with_uri")
        if not uri:
            v.bad("file part has neither fileWithBytes nor fileWithUri")
        return FilePart(None, uri, media_type, name, metadata, d)
    if "data" in d:
        inner = v.obj(d["data"], "data part")
        return DataPart(inner.get("data"), None, metadata, d)
    v.bad("part has none of text, file, data")


class V03RestWire(Wire):
    """v0.3 HTTP+JSON: ``content`` instead of ``parts``, ``ROLE_*``, ``TASK_STATE_CANCELLED``."""

    rest = True

    def __init__(self, version: str = "0.3") -> None:
        self.version = version

    def part(self, part: Part) -> JSONDict:
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
            _put(f, "mimeType", part.media_type)
            _put(f, "name", part.name)
            out = {"file": f}
        _put(out, "metadata", part.metadata)
        return out

    def message(self, message: Message) -> JSONDict:
        out: JSONDict = {"messageId": message.message_id}
        _put(out, "contextId", message.context_id)
        _put(out, "taskId", message.task_id)
        out["role"] = _V03_REST_ROLE[message.role]
        out["content"] = [self.part(p) for p in message.parts]
        _put(out, "metadata", message.metadata)
        _put(out, "extensions", message.extensions)
        return out

    def status(self, status: TaskStatus) -> JSONDict:
        out: JSONDict = {"state": _proto_state(status.state, "TASK_STATE_CANCELLED")}
        if status.message is not None:
            out["message"] = self.message(status.message)
        _put(out, "timestamp", status.timestamp)
        return out

    def task(self, task: Task) -> JSONDict:
        return _v03_task(self, task, kind=False)

    def event(self, event: StreamEvent, task: Task | None) -> JSONDict:
        if isinstance(event, Task):
            return {"task": self.task(event)}
        if isinstance(event, Message):
            return {"message": self.message(event)}
        if isinstance(event, TaskStatusUpdateEvent):
            out: JSONDict = {"taskId": event.task_id}
            _put(out, "contextId", event.context_id)
            out["status"] = self.status(event.status)
            out["final"] = event.final
            _put(out, "metadata", event.metadata)
            return {"statusUpdate": out}
        out = {"taskId": event.task_id}
        _put(out, "contextId", event.context_id)
        out["artifact"] = self.artifact(event.artifact)
        _put(out, "append", event.append)
        _put(out, "lastChunk", event.last_chunk)
        _put(out, "metadata", event.metadata)
        return {"artifactUpdate": out}

    def send_result(self, result: Task | Message) -> JSONDict:
        if isinstance(result, Task):
            return {"task": self.task(result)}
        return {"message": self.message(result)}

    def push_config(self, config: PushNotificationConfig) -> JSONDict:
        return {
            "name": f"tasks/{config.task_id}/pushNotificationConfigs/{config.id}",
            "pushNotificationConfig": v03.encode_push_config(config),
        }

    def push_configs(self, configs: list[PushNotificationConfig]) -> Any:
        return {"configs": [self.push_config(c) for c in configs], "nextPageToken": ""}

    def push_body(self, event: StreamEvent, task: Task) -> JSONDict:
        return V03Wire(self.version).task(task)

    def decode_message(self, value: Any) -> Message:
        d = v.obj(value, "message")
        return Message(
            role=v.role(d.get("role")),
            parts=[_v03_rest_part_in(p) for p in v.items(d, "content")],
            message_id=v.text(d, "messageId", "message_id") or "",
            context_id=v.text(d, "contextId", "context_id") or None,
            task_id=v.text(d, "taskId", "task_id") or None,
            metadata=v.optional_dict(d, "metadata"),
            extensions=v.str_list(d, "extensions"),
            raw=d,
        )

    def send_request(self, params: Any) -> SendRequest:
        d = _params(params)
        raw = d.get("message", d.get("request"))
        if not isinstance(raw, dict):
            raise InvalidParams("message is required")
        self.check(
            raw.get("role") in ("ROLE_USER", "ROLE_AGENT"),
            'message.role must be "ROLE_USER" or "ROLE_AGENT"',
        )
        self.check(
            "parts" not in raw or "content" in raw,
            "v0.3 HTTP+JSON messages carry their parts in content",
        )
        message = _decoded(self.decode_message, raw, "message")
        _check_message(message, self.strict)
        conf = _params(d.get("configuration"))
        push = conf.get("pushNotification", conf.get("push_notification"))
        return SendRequest(
            message=message,
            blocking=conf.get("blocking") is not False,
            history_length=_int(conf, "historyLength", "history_length"),
            push_config=self.decode_push_config(push) if push is not None else None,
            metadata=_params(d.get("metadata")),
        )

    def decode_push_config(self, params: Any, task_id: str | None = None) -> PushNotificationConfig:
        d = _params(params)
        # The Python clients post the whole CreateTaskPushNotificationConfigRequest.
        config_id = v.text(d, "configId", "config_id")
        if isinstance(d.get("config"), dict):
            d = d["config"]
        config: PushNotificationConfig = _decoded(v03.decode_push_config, d, "push config")
        if config_id and not config.id:
            config.id = config_id
        if task_id is not None:
            config.task_id = task_id
        return config


# -- legacy tasks/send ------------------------------------------------------------------------


class LegacyWire(Wire):
    """The legacy ``tasks/send`` dialect (spec <= 0.1)."""

    version = "legacy"
    snapshots = False
    zero_history_is_none = True

    def part(self, part: Part) -> JSONDict:
        out = v03.encode_part(part)
        out["type"] = out.pop("kind")
        return out

    def message(self, message: Message) -> JSONDict:
        out: JSONDict = {"role": "agent" if message.role is Role.AGENT else "user"}
        out["parts"] = [self.part(p) for p in message.parts]
        _put(out, "metadata", message.metadata)
        return out

    def status(self, status: TaskStatus) -> JSONDict:
        out: JSONDict = {"state": status.state.value}
        if status.message is not None:
            out["message"] = self.message(status.message)
        _put(out, "timestamp", status.timestamp)
        return out

    def artifact(self, artifact: Artifact, index: int = 0) -> JSONDict:
        out: JSONDict = {}
        _put(out, "name", artifact.name)
        _put(out, "description", artifact.description)
        out["parts"] = [self.part(p) for p in artifact.parts]
        out["index"] = index
        _put(out, "metadata", artifact.metadata)
        return out

    def task(self, task: Task) -> JSONDict:
        out: JSONDict = {"id": task.id}
        _put(out, "sessionId", task.context_id)
        out["status"] = self.status(task.status)
        _put(out, "artifacts", [self.artifact(a, i) for i, a in enumerate(task.artifacts)])
        _put(out, "history", [self.message(m) for m in task.history])
        _put(out, "metadata", task.metadata)
        return out

    def event(self, event: StreamEvent, task: Task | None) -> JSONDict:
        if isinstance(event, TaskStatusUpdateEvent):
            out: JSONDict = {"id": event.task_id, "status": self.status(event.status)}
            out["final"] = event.final
            _put(out, "metadata", event.metadata)
            return out
        if isinstance(event, TaskArtifactUpdateEvent):
            index = 0
            if task is not None:
                ids = [a.artifact_id for a in task.artifacts]
                if event.artifact.artifact_id in ids:
                    index = ids.index(event.artifact.artifact_id)
            art = self.artifact(event.artifact, index)
            _put(art, "append", event.append)
            _put(art, "lastChunk", event.last_chunk)
            out = {"id": event.task_id, "artifact": art}
            _put(out, "metadata", event.metadata)
            return out
        if isinstance(event, Task):
            return self.task(event)
        return self.message(event)

    def send_result(self, result: Task | Message) -> JSONDict:
        if isinstance(result, Message):  # never happens: legacy agents always answer a task
            return self.message(result)
        return self.task(result)

    def push_config(self, config: PushNotificationConfig) -> JSONDict:
        inner = v03.encode_push_config(config)
        inner.pop("id", None)
        return {"id": config.task_id, "pushNotificationConfig": inner}

    def push_configs(self, configs: list[PushNotificationConfig]) -> Any:
        return [self.push_config(c) for c in configs]

    def send_request(self, params: Any) -> SendRequest:
        d = _params(params)
        task_id = d.get("id")
        if not isinstance(task_id, str) or not task_id:
            raise InvalidParams("id (the task id the client chose) is required")
        raw = d.get("message")
        if not isinstance(raw, dict):
            raise InvalidParams("message is required")
        for i, p in enumerate(raw.get("parts") or []):
            self.check(isinstance(p, dict) and "type" in p, f"message.parts[{i}].type is required")
        self.check(raw.get("role") in ("user", "agent"), 'message.role must be "user" or "agent"')
        message = _decoded(v03.decode_message, raw, "message")
        if not message.parts:
            raise InvalidParams("message.parts must contain at least one part")
        session = d.get("sessionId")
        push = d.get("pushNotification")
        return SendRequest(
            message=message,
            blocking=True,
            history_length=_int(d, "historyLength"),
            push_config=self.decode_push_config({"pushNotificationConfig": push}, task_id)
            if push is not None
            else None,
            metadata=_params(d.get("metadata")),
            task_id=task_id,
            session_id=session if isinstance(session, str) and session else None,
        )

    def decode_push_config(self, params: Any, task_id: str | None = None) -> PushNotificationConfig:
        d = _params(params)
        config: PushNotificationConfig = _decoded(v03.decode_push_config, d, "push config")
        config.task_id = task_id if task_id is not None else v.text(d, "id")
        return config


def wire_for(dialect: str, rest: bool) -> Wire:
    """The codec of ``dialect`` ("1.0", "0.3", "0.2", "legacy") over JSON-RPC or REST."""
    if dialect == "1.0":
        return V1Wire(rest)
    if dialect in ("0.3", "0.2"):
        return V03RestWire(dialect) if rest else V03Wire(dialect)
    if dialect == "legacy":
        if rest:
            raise ValueError("the legacy tasks/send dialect has no HTTP+JSON binding")
        return LegacyWire()
    raise ValueError(f'dialect must be "1.0", "0.3", "0.2" or "legacy", not {dialect!r}')
