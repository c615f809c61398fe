"""Message, status, artifact, task and update-event shapes shared by the JSON dialects.

v1.0 and v0.2/v0.3 lay these objects out alike; they differ in parts, role and state
spellings, the ``kind`` discriminator and the ``final`` flag, which each dialect supplies.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from a2a_anyio._dialects import _values as v
from a2a_anyio._model import (
    Artifact,
    JSONDict,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPage,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)


def _text_alone(part: Any) -> bool:
    """Whether ``part`` is the JSON of a text part that holds its text alone: one a lean
    dialect's part decoder keeps no copy of (v1.0's ``decode_part``)."""
    return type(part) is dict and len(part) == 1 and type(part.get("text")) is str


def put(out: JSONDict, **members: Any) -> JSONDict:
    """``out`` with the members whose values are set (not None, empty or false) added."""
    out.update((k, x) for k, x in members.items() if x)
    return out


class Shapes:
    """Decoders and encoders of the shared objects, built on one dialect's Part codec.

    ``roles`` and ``states`` spell roles and task states; ``kinds``: messages and tasks
    carry ``kind``; ``final``: status updates carry ``final``; ``lean``: this dialect's JSON
    is what ``to_dict("1.0")`` writes, and a message or status decoded from JSON that holds
    exactly that keeps no copy of it (``RawMadeAgain``). The task and context ids of tasks
    and messages are interned: a task's status and history then share its ids.
    """

    def __init__(
        self,
        decode_part: Callable[[Any], Part],
        encode_part: Callable[[Part], JSONDict],
        roles: Mapping[Role, str],
        states: Callable[[TaskState], str],
        *,
        kinds: bool = False,
        final: bool = False,
        message_parts: str = "parts",
        lean: bool = False,
    ) -> None:
        self.decode_part = decode_part
        self.encode_part = encode_part
        self.roles = roles
        self.states = states
        self.kinds = kinds
        self.final = final
        self.message_parts = message_parts  # v0.3 REST calls a message's parts "content"
        self.lean = lean
        self._spelled = {state: states(state) for state in TaskState}  # states' own, at hand
        # The members nearly every message carries: a message with no others skips the
        # lookups of the rest (and of their snake_case spellings).
        self._message_keys = frozenset(
            {"messageId", "role", message_parts, "contextId", "taskId", "kind"}
        )

    def decode_message(self, value: Any) -> Message:
        return self._message(value)[0]

    def _message(self, value: Any) -> tuple[Message, bool]:
        """The message, and whether it keeps no copy of its JSON (made again when read)."""
        d = v.obj(value, "message")
        if d.keys() <= self._message_keys:
            mid, ctx, tid = d.get("messageId"), d.get("contextId"), d.get("taskId")
            parts = d.get(self.message_parts)
            if (
                type(parts) is list
                and (mid is None or type(mid) is str)
                and (ctx is None or type(ctx) is str)
                and (tid is None or type(tid) is str)
            ):
                role = v.role(d.get("role"))
                decoded = list(map(self.decode_part, parts))
                if ctx is not None:
                    ctx = sys.intern(ctx)
                if tid is not None:
                    tid = sys.intern(tid)
                message = Message(role, decoded, mid or "", ctx, tid, None, None, None, d)
                lean = (
                    self.lean
                    and bool(mid)
                    and ctx != ""
                    and tid != ""
                    and len(d) == 3 + (ctx is not None) + (tid is not None)  # no kind, no null
                    and d.get("role") == self.roles[role]
                    and all(map(_text_alone, parts))
                )
                if lean:
                    del message.raw
                return message, lean
        message = Message(
            v.role(d.get("role")),
            list(map(self.decode_part, v.items(d, self.message_parts))),
            v.text(d, "messageId", "message_id") or "",
            v.text(d, "contextId", "context_id"),
            v.text(d, "taskId", "task_id"),
            v.optional_dict(d, "metadata"),
            v.str_list(d, "extensions"),
            v.str_list(d, "referenceTaskIds", "reference_task_ids"),
            d,
        )
        return message, False

    def encode_message(self, message: Message) -> JSONDict:
        out: JSONDict = {"kind": "message"} if self.kinds else {}
        out["messageId"] = message.message_id
        out["role"] = self.roles[message.role]
        out[self.message_parts] = list(map(self.encode_part, message.parts))
        if not (
            message.context_id
            or message.task_id
            or message.metadata
            or message.extensions
            or message.reference_task_ids
        ):
            return out  # a new message, as most sends are: none of the others to add
        return put(
            out,
            contextId=message.context_id,
            taskId=message.task_id,
            metadata=message.metadata,
            extensions=message.extensions,
            referenceTaskIds=message.reference_task_ids,
        )

    def decode_status(self, value: Any) -> TaskStatus:
        d = v.obj(value, "status")
        wire = d.get("state")
        msg = d.get("message")
        message, lean = self._message(msg) if msg is not None else (None, True)
        stamp = v.text(d, "timestamp")
        state = v.state(wire)
        status = TaskStatus(state, message, stamp, wire if isinstance(wire, str) else None, d)
        if (
            lean
            and self.lean
            and stamp != ""
            and len(d) == 1 + (msg is not None) + (stamp is not None)  # no null, no other
            and wire == self._spelled[state]
        ):
            del status.raw
        return status

    def encode_status(self, status: TaskStatus) -> JSONDict:
        out: JSONDict = {"state": self.states(status.state)}
        if status.message is not None:
            out["message"] = self.encode_message(status.message)
        return put(out, timestamp=status.timestamp)

    def decode_artifact(self, value: Any) -> Artifact:
        d = value if type(value) is dict else v.obj(value, "artifact")
        if d.keys() <= _ARTIFACT_KEYS:
            aid, name, parts = d.get("artifactId"), d.get("name"), d.get("parts")
            if (
                type(parts) is list
                and (aid is None or type(aid) is str)
                and (name is None or type(name) is str)
            ):
                decoded = list(map(self.decode_part, parts))
                return Artifact(aid or "", decoded, name, None, None, None, d)
        # Positional: keyword construction costs twice as much, and chunks come by thousands.
        return Artifact(
            v.text(d, "artifactId", "artifact_id") or "",
            list(map(self.decode_part, v.items(d, "parts"))),
            v.text(d, "name"),
            v.text(d, "description"),
            v.optional_dict(d, "metadata"),
            v.str_list(d, "extensions"),
            d,
        )

    def encode_artifact(self, artifact: Artifact) -> JSONDict:
        out: JSONDict = {"artifactId": artifact.artifact_id}
        out["parts"] = list(map(self.encode_part, artifact.parts))
        return put(
            out,
            name=artifact.name,
            description=artifact.description,
            metadata=artifact.metadata,
            extensions=artifact.extensions,
        )

    def decode_task(self, value: Any) -> Task:
        d = v.obj(value, "task")
        status = d.get("status")
        if status is None:
            v.bad("task has no status")
        if d.keys() <= _TASK_KEYS:
            tid, ctx = d.get("id"), d.get("contextId")
            arts, hist = d.get("artifacts", []), d.get("history", [])
            fits = ctx is None or type(ctx) is str
            if isinstance(tid, str) and tid and fits and type(arts) is type(hist) is list:
                return Task(
                    sys.intern(tid),
                    ctx if ctx is None else sys.intern(ctx),
                    self.decode_status(status),
                    list(map(self.decode_artifact, arts)),
                    list(map(self.decode_message, hist)),
                    None,
                    d,
                )
        return Task(
            v.required_id(d, "id", None, "task"),
            v.text(d, "contextId", "context_id"),
            self.decode_status(status),
            list(map(self.decode_artifact, v.items(d, "artifacts"))),
            list(map(self.decode_message, v.items(d, "history"))),
            v.optional_dict(d, "metadata"),
            d,
        )

    def encode_task(self, task: Task) -> JSONDict:
        out: JSONDict = {"kind": "task"} if self.kinds else {}
        out["id"] = task.id
        put(out, contextId=task.context_id)
        out["status"] = self.encode_status(task.status)
        return put(
            out,
            artifacts=list(map(self.encode_artifact, task.artifacts)),
            history=list(map(self.encode_message, task.history)),
            metadata=task.metadata,
        )

    def decode_status_update(self, d: JSONDict) -> TaskStatusUpdateEvent:
        status = self.decode_status(d.get("status"))
        return TaskStatusUpdateEvent(
            v.required_id(d, "taskId", "task_id", "status update"),
            v.text(d, "contextId", "context_id"),
            status,
            # v1.0 has no flag: the stream ends after a terminal or interrupted state.
            status.state.is_final or v.boolean(d, "final"),
            v.optional_dict(d, "metadata"),
            d,
        )

    def encode_status_update(self, event: TaskStatusUpdateEvent) -> JSONDict:
        out = put({"taskId": event.task_id}, contextId=event.context_id)
        out["status"] = self.encode_status(event.status)
        if self.final:
            out["final"] = event.final
        return put(out, metadata=event.metadata)

    def decode_artifact_update(self, d: JSONDict) -> TaskArtifactUpdateEvent:
        if d.keys() <= _UPDATE_KEYS:  # the usual members only: no other spelling to look for
            tid, ctx = d.get("taskId"), d.get("contextId")
            append, last = d.get("append", False), d.get("lastChunk", False)
            fits = (ctx is None or type(ctx) is str) and type(append) is type(last) is bool
            if isinstance(tid, str) and tid and fits:
                artifact = self.decode_artifact(d.get("artifact"))
                return TaskArtifactUpdateEvent(tid, ctx, artifact, append, last, None, d)
        return TaskArtifactUpdateEvent(
            v.required_id(d, "taskId", "task_id", "artifact update"),
            v.text(d, "contextId", "context_id"),
            self.decode_artifact(d.get("artifact")),
            v.boolean(d, "append"),
            v.boolean(d, "lastChunk", "last_chunk"),
            v.optional_dict(d, "metadata"),
            d,
        )

    def encode_artifact_update(self, event: TaskArtifactUpdateEvent) -> JSONDict:
        out = put({"taskId": event.task_id}, contextId=event.context_id)
        out["artifact"] = self.encode_artifact(event.artifact)
        return put(out, append=event.append, lastChunk=event.last_chunk, metadata=event.metadata)

    def encode_stream_response(
        self, event: StreamEvent, write: Callable[[StreamEvent], JSONDict] | None = None
    ) -> JSONDict:
        """A ProtoJSON ``StreamResponse`` (a send result too): one of task, message,
        statusUpdate, artifactUpdate, holding ``event`` as ``write`` writes it (by default,
        this dialect's encoder of its class)."""
        if isinstance(event, TaskArtifactUpdateEvent):
            return {"artifactUpdate": (write or self.encode_artifact_update)(event)}
        if isinstance(event, TaskStatusUpdateEvent):
            return {"statusUpdate": (write or self.encode_status_update)(event)}
        if isinstance(event, Task):
            return {"task": (write or self.encode_task)(event)}
        return {"message": (write or self.encode_message)(event)}


def decode_page(value: Any, decode_task: Callable[[Any], Task]) -> TaskPage:
    """A ``ListTasksResponse`` (v1.0's layout, the v0.3-era ``tasks/list`` too) of tasks read
    by ``decode_task``."""
    d = v.obj(value, "ListTasks result")
    size = d.get("pageSize", d.get("page_size"))
    total = d.get("totalSize", d.get("total_size"))
    return TaskPage(
        tasks=[decode_task(t) for t in v.items(d, "tasks")],
        next_cursor=v.text(d, "nextPageToken", "next_page_token") or None,
        total_size=total if isinstance(total, int) and not isinstance(total, bool) else None,
        page_size=size if isinstance(size, int) and not isinstance(size, bool) else None,
        raw=d,
    )


def encode_page(page: TaskPage, encode_task: Callable[[Task], JSONDict]) -> JSONDict:
    """What ``decode_page`` reads."""
    out: JSONDict = {"tasks": [encode_task(t) for t in page.tasks]}
    out["nextPageToken"] = page.next_cursor or ""
    if page.page_size is not None:
        out["pageSize"] = page.page_size
    if page.total_size is not None:
        out["totalSize"] = page.total_size
    return out


_ARTIFACT_KEYS = frozenset({"artifactId", "name", "parts"})
_TASK_KEYS = frozenset({"id", "contextId", "status", "artifacts", "history", "kind"})
_UPDATE_KEYS = frozenset({"taskId", "contextId", "artifact", "append", "lastChunk"})
