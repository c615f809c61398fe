"""The early ``tasks/send`` dialect (spec <= v0.1): ``type``-discriminated parts, task ids
chosen by the client, ``sessionId`` for the context, artifact chunking inside the artifact."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects._shapes import put
from a2a_anyio._dialects.dialect import (
    Dialect,
    Payload,
    cancel_payload,
    push_ref_payload,
    same,
    subscribe_payload,
    task_payload,
)
from a2a_anyio._dialects.ops import Op, PushCreate, Send, SendConfig
from a2a_anyio._dialects.v03 import decode_part as decode_typed_part
from a2a_anyio._dialects.v03 import decode_push_config as decode_v03_push_config
from a2a_anyio._dialects.v03 import encode_part as encode_kind_part
from a2a_anyio._dialects.v03 import encode_push_config
from a2a_anyio._errors import TaskNotFoundError
from a2a_anyio._model import (
    Artifact,
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
    new_id,
)


def encode_part(part: Part) -> JSONDict:
    """A part with ``type`` where v0.2+ has ``kind`` (the payloads are otherwise alike)."""
    out = encode_kind_part(part)
    out["type"] = out.pop("kind")
    return out


def decode_message(value: Any) -> Message:
    d = v.obj(value, "message")
    return Message(
        role=v.role(d.get("role")),
        parts=[decode_typed_part(p) for p in v.items(d, "parts")],
        message_id="",  # legacy messages carry no id
        metadata=v.optional_dict(d, "metadata"),
        raw=d,
    )


def encode_message(message: Message) -> JSONDict:
    out: JSONDict = {
        "role": "agent" if message.role is Role.AGENT else "user",
        "parts": [encode_part(p) for p in message.parts],
    }
    return put(out, metadata=message.metadata)


def decode_status(value: Any) -> TaskStatus:
    d = v.obj(value, "status")
    wire = d.get("state")
    msg = d.get("message")
    return TaskStatus(
        v.state(wire),
        decode_message(msg) if msg is not None else None,
        v.text(d, "timestamp"),
        wire if isinstance(wire, str) else None,
        d,
    )


def encode_status(status: TaskStatus) -> JSONDict:
    out: JSONDict = {"state": status.state.value}
    if status.message is not None:
        out["message"] = encode_message(status.message)
    return put(out, timestamp=status.timestamp)


def decode_artifact(value: Any, position: int = 0) -> Artifact:
    d = v.obj(value, "artifact")
    index = d.get("index", position)
    return Artifact(
        # Legacy artifacts are keyed by their index (a2a-protocol §4.4).
        artifact_id=v.text(d, "artifactId") or str(index),
        parts=[decode_typed_part(p) for p in v.items(d, "parts")],
        name=v.text(d, "name"),
        description=v.text(d, "description"),
        metadata=v.optional_dict(d, "metadata"),
        raw=d,
    )


def encode_artifact(artifact: Artifact, index: int = 0) -> JSONDict:
    out = put({}, name=artifact.name, description=artifact.description)
    out["parts"] = [encode_part(p) for p in artifact.parts]
    out["index"] = index
    return put(out, metadata=artifact.metadata)


def decode_task(value: Any) -> Task:
    d = v.obj(value, "task")
    status = d.get("status")
    if status is None:
        v.bad("task has no status")
    return Task(
        id=v.required_id(d, "id", None, "task"),
        context_id=v.text(d, "sessionId"),
        status=decode_status(status),
        artifacts=[decode_artifact(a, i) for i, a in enumerate(v.items(d, "artifacts"))],
        history=[decode_message(m) for m in v.items(d, "history")],
        metadata=v.optional_dict(d, "metadata"),
        raw=d,
    )


def encode_task(task: Task) -> JSONDict:
    out = put({"id": task.id}, sessionId=task.context_id)
    out["status"] = encode_status(task.status)
    return put(
        out,
        artifacts=[encode_artifact(a, i) for i, a in enumerate(task.artifacts)],
        history=[encode_message(m) for m in task.history],
        metadata=task.metadata,
    )


def decode_event(value: Any) -> StreamEvent:
    """Events are told apart by shape: a whole task (some servers stream nothing else),
    ``artifact`` or ``status``."""
    d = v.obj(value, "event")
    task_id = v.required_id(d, "id", None, "event")
    if "sessionId" in d or "artifacts" in d or "history" in d:
        return decode_task(d)  # a status event carries none of these
    if "artifact" in d:
        art = v.obj(d["artifact"], "artifact")
        return TaskArtifactUpdateEvent(
            task_id=task_id,
            context_id=None,
            artifact=decode_artifact(art),
            append=v.boolean(art, "append"),
            last_chunk=v.boolean(art, "lastChunk"),
            metadata=v.optional_dict(d, "metadata"),
            raw=d,
        )
    if "status" in d:
        status = decode_status(d["status"])
        return TaskStatusUpdateEvent(
            task_id=task_id,
            context_id=None,
            status=status,
            final=v.boolean(d, "final") or status.state.is_terminal,
            metadata=v.optional_dict(d, "metadata"),
            raw=d,
        )
    v.bad("legacy event has neither status nor artifact")


def encode_event(event: StreamEvent, task: Task | None = None) -> JSONDict:
    """What ``decode_event`` reads; an artifact's index is its place among ``task``'s."""
    if isinstance(event, TaskStatusUpdateEvent):
        out = {"id": event.task_id, "status": encode_status(event.status), "final": event.final}
        return put(out, metadata=event.metadata)
    if isinstance(event, TaskArtifactUpdateEvent):
        ids = [a.artifact_id for a in task.artifacts] if task is not None else []
        aid = event.artifact.artifact_id
        art = encode_artifact(event.artifact, ids.index(aid) if aid in ids else 0)
        put(art, append=event.append, lastChunk=event.last_chunk)
        return put({"id": event.task_id, "artifact": art}, metadata=event.metadata)
    if isinstance(event, Task):
        return encode_task(event)
    return encode_message(event)


def decode_push_config(value: Any) -> PushNotificationConfig:
    """``{id (the task), pushNotificationConfig}``: the v0.2 shape with the task's id as ``id``."""
    config = decode_v03_push_config(value)
    config.task_id = v.text(v.obj(value, "push notification config"), "id")
    return config


def send_params(args: Send) -> JSONDict:
    message, config = args.message, args.config
    # No blocking flag on this wire: the agent answers when it chooses, and whether the
    # client follows an unfinished task up (``blocking``) is the client's affair.
    # The client names the task: a new one for a new task, the same to continue one.
    params: JSONDict = {
        "id": message.task_id or new_id(),
        "sessionId": message.context_id or new_id(),
        "message": encode_message(message),
    }
    if config.history_length is not None:
        params["historyLength"] = config.history_length
    if config.push_config is not None:
        params["pushNotification"] = encode_push_config(config.push_config)
    if config.metadata:
        params["metadata"] = config.metadata
    return params


def read_send_params(params: Any) -> Send:
    d = v.obj(params, "params")
    message = decode_message(d.get("message"))
    message.task_id = v.required_id(d, "id", None, "params")  # the client names the task
    message.context_id = v.text(d, "sessionId") or None
    push = d.get("pushNotification")
    if push is not None:
        push = decode_push_config({"id": message.task_id, "pushNotificationConfig": push})
    metadata = v.optional_dict(d, "metadata")
    return Send(message, SendConfig(True, v.integer(d, "historyLength"), None, push, metadata))


def write_push_config(args: PushCreate) -> JSONDict:
    config = args.config
    if not config.task_id:
        raise ValueError("a push notification config needs a task_id")
    return {"id": config.task_id, "pushNotificationConfig": encode_push_config(config)}


def encode_task_push_config(config: PushNotificationConfig) -> JSONDict:
    inner = encode_push_config(config)
    inner.pop("id", None)  # one config per task: no config ids
    return {"id": config.task_id, "pushNotificationConfig": inner}


def _notification(event: StreamEvent, task: Task) -> JSONDict:
    return encode_task(task)


_EVENTS = Payload(same, same, decode_event, encode_event)

LEGACY = Dialect(
    "legacy",
    {
        # A task: legacy agents answer nothing else.
        Op.SEND: Payload(send_params, read_send_params, decode_task, encode_event),
        Op.STREAM: _EVENTS._replace(write=send_params, read=read_send_params),
        Op.GET: task_payload(decode_task, encode_task),
        Op.CANCEL: cancel_payload(decode_task, encode_task),
        Op.SUBSCRIBE: subscribe_payload(_EVENTS),
        Op.PUSH_CREATE: Payload(
            write_push_config,
            lambda params: PushCreate(decode_push_config(params)),
            decode_push_config,
            encode_task_push_config,
        ),
        Op.PUSH_GET: push_ref_payload("id", None, decode_push_config, encode_task_push_config),
    },
    encode_message,
    decode_message,
    encode_event,
    _notification,
    headers={},
)


def _working(task: Task) -> Task:
    """``waiting``, python-a2a's word for a task at work, read as working."""
    if task.status.wire_state != "waiting":
        return task
    return replace(task, status=replace(task.status, state=TaskState.WORKING))


def _decode_working_task(value: Any) -> Task:
    return _working(decode_task(value))


def _decode_working_event(value: Any) -> StreamEvent:
    event = decode_event(value)
    return _working(event) if isinstance(event, Task) else event


#: The ``tasks/send`` dialect as python-a2a's server speaks it (``python-a2a`` on PyPI):
#: send, stream, get and cancel only; ``waiting`` for working; -32000 for an unknown task.
PYTHON_A2A = LEGACY._replace(
    version="python-a2a",
    payloads={
        Op.SEND: LEGACY.payloads[Op.SEND]._replace(decode=_decode_working_task),
        Op.STREAM: LEGACY.payloads[Op.STREAM]._replace(decode=_decode_working_event),
        Op.GET: LEGACY.payloads[Op.GET]._replace(decode=_decode_working_task),
        Op.CANCEL: LEGACY.payloads[Op.CANCEL]._replace(decode=_decode_working_task),
    },
    errors={-32000: TaskNotFoundError},  # its only error of its own
)
