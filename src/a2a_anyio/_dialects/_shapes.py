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

    def decode_message(self, value: Any) -> Message:
        d = v.obj(value, "message")
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
        out[self.message_parts] = [self.encode_part(p) for p in message.parts]
        for key, value in (
            ("contextId", message.context_id),
            ("taskId", message.task_id),
            ("metadata", message.metadata),
            ("extensions", message.extensions),
            ("referenceTaskIds", message.reference_task_ids),
        ):
            if value:
                out[key] = value
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
        d = v.obj(value, "artifact")
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
        return Task(
            v.required_id(d, "id", None, "task"),
            v.text(d, "contextId", "context_id"),
            self.decode_status(status),
            list(map(self.decode_artifact, v.items(d, "artifacts"))),
            list(map(self.decode_message, v.items(d, "history"))),
            v.optional_dict(d, "metadata"),
            d,
        )
