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
            role=v.role(d.get("role")),
            parts=[self.decode_part(p) for p in v.items(d, self.message_parts)],
            message_id=v.text(d, "messageId", "message_id") or "",
            context_id=v.text(d, "contextId", "context_id"),
            task_id=v.text(d, "taskId", "task_id"),
            metadata=v.optional_dict(d, "metadata"),
            extensions=v.str_list(d, "extensions"),
            reference_task_ids=v.str_list(d, "referenceTaskIds", "reference_task_ids"),
            raw=d,
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
        return Artifact(
            artifact_id=v.text(d, "artifactId", "artifact_id") or "",
            parts=[self.decode_part(p) for p in v.items(d, "parts")],
            name=v.text(d, "name"),
            description=v.text(d, "description"),
            metadata=v.optional_dict(d, "metadata"),
            extensions=v.str_list(d, "extensions"),
            raw=d,
        )

    def decode_task(self, value: Any) -> Task:
        d = v.obj(value, "task")
        status = d.get("status")
        if status is None:
            v.bad("task has no status")
        return Task(
            id=v.required_id(d, "id", None, "task"),
            context_id=v.text(d, "contextId", "context_id"),
            status=self.decode_status(status),
            artifacts=[self.decode_artifact(a) for a in v.items(d, "artifacts")],
            history=[self.decode_message(m) for m in v.items(d, "history")],
            metadata=v.optional_dict(d, "metadata"),
            raw=d,
        )
