"""Message, status, artifact and task shapes shared by the JSON dialects.

v1.0 and v0.2/v0.3 lay these objects out alike; they differ in parts, role spellings and the
``kind`` discriminator, which each dialect supplies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from a2a_anyio._dialects import _values as v
from a2a_anyio._model import Artifact, JSONDict, Message, Part, Role, Task, TaskStatus


class Shapes:
    """Decoders and encoders of the shared objects, built on one dialect's Part codec."""

    def __init__(
        self,
        decode_part: Callable[[Any], Part],
        encode_part: Callable[[Part], JSONDict],
        roles: Mapping[Role, str],
        message_kind: str | None = None,
        message_parts: str = "parts",
    ) -> None:
        self.decode_part = decode_part
        self.encode_part = encode_part
        self.roles = roles
        self.message_kind = message_kind
        self.message_parts = message_parts  # v0.3 REST calls a message's parts "content"
        # The members nearly every message carries: a message with no others skips the
        # lookups of the rest (and of their snake_case spellings).
        self._message_keys = frozenset(
            {"messageId", "role", message_parts, "contextId", "taskId", "kind"}
        )

    def decode_message(self, value: Any) -> Message:
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
                return Message(role, decoded, mid or "", ctx, tid, None, None, None, d)
        return Message(
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

    def encode_message(self, message: Message) -> JSONDict:
        out: JSONDict = {"kind": self.message_kind} if self.message_kind else {}
        out["messageId"] = message.message_id
        out["role"] = self.roles[message.role]
        out[self.message_parts] = list(map(self.encode_part, message.parts))
        if message.context_id:
            out["contextId"] = message.context_id
        if message.task_id:
            out["taskId"] = message.task_id
        if message.metadata:
            out["metadata"] = message.metadata
        if message.extensions:
            out["extensions"] = message.extensions
        if message.reference_task_ids:
            out["referenceTaskIds"] = message.reference_task_ids
        return out

    def decode_status(self, value: Any) -> TaskStatus:
        d = v.obj(value, "status")
        wire = d.get("state")
        msg = d.get("message")
        return TaskStatus(
            v.state(wire),
            self.decode_message(msg) if msg is not None else None,
            v.text(d, "timestamp"),
            wire if isinstance(wire, str) else None,
            d,
        )

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
                    tid,
                    ctx,
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


_ARTIFACT_KEYS = frozenset({"artifactId", "name", "parts"})
_TASK_KEYS = frozenset({"id", "contextId", "status", "artifacts", "history", "kind"})
