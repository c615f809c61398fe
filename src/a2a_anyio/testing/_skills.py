"""What skills receive (``SkillContext``) and yield (``status``, ``artifact``, ``reply``)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from a2a_anyio._dialects import _values as v
from a2a_anyio._model import (
    Artifact,
    DataPart,
    FilePart,
    JSONDict,
    Message,
    Part,
    Role,
    TaskState,
    TextPart,
)

if TYPE_CHECKING:
    from a2a_anyio.testing._agent import FakeAgent


@dataclass(slots=True)
class Status:
    """A status update a skill emits (made by ``status()``)."""

    state: TaskState
    message: Message | None = None
    metadata: JSONDict | None = None


@dataclass(slots=True)
class ArtifactChunk:
    """An artifact, or a chunk of one, a skill emits (made by ``artifact()``)."""

    artifact: Artifact
    append: bool = False
    last_chunk: bool = False
    #: True when no id was given: an ``append`` chunk then continues the previous artifact.
    auto_id: bool = False


Emit = Status | ArtifactChunk | Message
"""What a skill yields: ``status(...)``, ``artifact(...)`` or ``reply(...)``."""
Skill = Callable[["SkillContext"], AsyncIterator[Emit]]
"""A skill: an async generator function of a ``SkillContext`` that yields ``Emit`` items."""


def _parts(
    text: str | None,
    data: Any,
    file: bytes | None,
    url: str | None,
    media_type: str | None,
    filename: str | None,
    parts: Sequence[Part] | None,
) -> list[Part]:
    out: list[Part] = list(parts or [])
    if text is not None:
        out.append(TextPart(text))
    if data is not None:
        out.append(DataPart(data))
    if file is not None or url is not None:
        out.append(FilePart(file, url, media_type, filename))
    return out


def agent_message(
    text: str | None = None,
    *,
    data: Any = None,
    parts: Sequence[Part] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Message:
    """A message from the agent with a text and/or data part."""
    return Message(
        Role.AGENT,
        _parts(text, data, None, None, None, None, parts),
        metadata=dict(metadata) if metadata else None,
    )


def status(
    state: TaskState | str,
    text: str | None = None,
    *,
    data: Any = None,
    metadata: Mapping[str, Any] | None = None,
) -> Status:
    """A status update: ``state`` ("working", "input-required", "completed", a ``TaskState``...)
    with an optional agent message made of ``text`` and/or ``data``.

    Raises:
        ValueError: an unknown task state.
    """
    parsed = state if isinstance(state, TaskState) else v.state(state)
    if parsed is TaskState.UNKNOWN and state not in ("unknown", TaskState.UNKNOWN):
        raise ValueError(f"unknown task state {state!r}")
    message = agent_message(text, data=data) if text is not None or data is not None else None
    return Status(parsed, message, dict(metadata) if metadata else None)


def artifact(
    text: str | None = None,
    *,
    data: Any = None,
    file: bytes | None = None,
    url: str | None = None,
    media_type: str | None = None,
    filename: str | None = None,
    parts: Sequence[Part] | None = None,
    name: str | None = None,
    description: str | None = None,
    artifact_id: str | None = None,
    append: bool = False,
    last_chunk: bool = False,
    metadata: Mapping[str, Any] | None = None,
) -> ArtifactChunk:
    """An artifact (or a chunk of one) made of text, data, a file and/or ``parts``.

    Without ``artifact_id`` a chunk with ``append=True`` continues the skill's previous
    artifact; any other artifact gets a fresh id.

    Raises:
        ValueError: no text, data, file, url or parts.
    """
    content = _parts(text, data, file, url, media_type, filename, parts)
    if not content:
        raise ValueError("an artifact needs text=, data=, file=, url= or parts=")
    art = Artifact(
        artifact_id=artifact_id or str(uuid.uuid4()),
        parts=content,
        name=name,
        description=description,
        metadata=dict(metadata) if metadata else None,
    )
    return ArtifactChunk(art, append, last_chunk, auto_id=artifact_id is None)


def reply(
    text: str | None = None,
    *,
    data: Any = None,
    parts: Sequence[Part] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Message:
    """The agent's message. Yielded first, it is the whole answer (no task is made); later, it
    completes the task with this message as its status message.

    Raises:
        ValueError: no text, data or parts.
    """
    message = agent_message(text, data=data, parts=parts, metadata=metadata)
    if not message.parts:
        raise ValueError("a reply needs text=, data= or parts=")
    return message


@dataclass(eq=False)
class SkillContext:
    """What a skill is called with: the request and the task it works on.

    ``message`` is the latest user message (a follow-up to an input-required task replaces
    it, and is also sent into the generator as the value of its ``yield``).
    """

    message: Message
    task_id: str
    context_id: str
    skill_id: str
    metadata: JSONDict
    headers: dict[str, str]
    agent: FakeAgent
    _cancel: anyio.Event = field(default_factory=anyio.Event, repr=False)

    @property
    def text(self) -> str:
        """The text of the user message."""
        return self.message.text

    @property
    def data(self) -> Any:
        """The value of the user message's first data part, or None."""
        for part in self.message.parts:
            if isinstance(part, DataPart):
                return part.data
        return None

    @property
    def parts(self) -> list[Part]:
        """The parts of the user message."""
        return self.message.parts

    @property
    def cancelled(self) -> bool:
        """True once the task was canceled (the skill is then cancelled at its next await)."""
        return self._cancel.is_set()

    async def wait_cancelled(self) -> None:
        """Return when the task is canceled."""
        await self._cancel.wait()
