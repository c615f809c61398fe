"""Model objects as plain dicts (``to_dict`` / ``from_dict``): the A2A JSON of a version,
written and read by the same encoders and decoders as the wire."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects import card, legacy, v03, v03_rest, v1
from a2a_anyio._dialects._shapes import decode_page, encode_page
from a2a_anyio._dialects.v03_rest import SHAPES as V03_REST
from a2a_anyio._model import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    Artifact,
    DataPart,
    FilePart,
    JSONDict,
    Message,
    PlainDicts,
    PushNotificationConfig,
    SecurityScheme,
    Task,
    TaskArtifactUpdateEvent,
    TaskPage,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

_M = TypeVar("_M", bound=PlainDicts)
_Codec = Callable[[Any], Any]

#: The versions ``to_dict`` writes.
VERSIONS = ("1.0", "0.3")


def _card_writers(version: str) -> dict[type[Any], _Codec]:
    return {
        AgentCard: partial(card.encode_card, version=version),
        AgentInterface: partial(card.encode_interface, version=version),
        AgentCapabilities: partial(card.encode_capabilities, version=version),
        AgentExtension: card.encode_extension,
        AgentSkill: partial(card.encode_skill, version=version),
        AgentProvider: card.encode_provider,
        SecurityScheme: partial(card.encode_scheme, version=version),
    }


_WRITERS: dict[str, dict[type[Any], _Codec]] = {
    "1.0": {
        TextPart: v1.encode_part,
        FilePart: v1.encode_part,
        DataPart: v1.encode_part,
        Message: v1.encode_message,
        TaskStatus: v1.encode_status,
        Artifact: v1.encode_artifact,
        Task: v1.encode_task,
        TaskStatusUpdateEvent: v1.encode_status_update,
        TaskArtifactUpdateEvent: v1.encode_artifact_update,
        TaskPage: partial(encode_page, encode_task=v1.encode_task),
        PushNotificationConfig: v1.encode_push_config,
        **_card_writers("1.0"),
    },
    "0.3": {
        TextPart: v03.encode_part,
        FilePart: v03.encode_part,
        DataPart: v03.encode_part,
        Message: v03.encode_message,
        TaskStatus: v03.encode_status,
        Artifact: v03.encode_artifact,
        Task: v03.encode_task,
        TaskStatusUpdateEvent: v03.encode_result,
        TaskArtifactUpdateEvent: v03.encode_result,
        # v0.3 lists no tasks: its page is v1.0's layout, with v0.3 tasks.
        TaskPage: partial(encode_page, encode_task=v03.encode_task),
        PushNotificationConfig: v03.encode_task_push_config,
        **_card_writers("0.3"),
    },
}


def _interface(d: JSONDict) -> AgentInterface:
    iface = card.read_interface(d)
    if iface is None:
        v.bad("interface has no url")
    return iface


# The members of a card are alike in every version: one reader each.
_CARD_READERS: dict[type[Any], _Codec] = {
    AgentCard: card.parse_card,
    AgentInterface: _interface,
    AgentCapabilities: card.read_capabilities,
    AgentExtension: card.read_extension,
    AgentSkill: card.read_skill,
    AgentProvider: card.read_provider,
    SecurityScheme: card.read_scheme,
}
_READERS: dict[str, dict[type[Any], _Codec]] = {
    "1.0": {
        TextPart: v1.decode_part,
        FilePart: v1.decode_part,
        DataPart: v1.decode_part,
        Message: v1.decode_message,
        TaskStatus: v1.decode_status,
        Artifact: v1.decode_artifact,
        Task: v1.decode_task,
        TaskStatusUpdateEvent: v1.decode_status_update,
        TaskArtifactUpdateEvent: v1.decode_artifact_update,
        TaskPage: partial(decode_page, decode_task=v1.decode_task),
        PushNotificationConfig: v1.decode_push_config,
    },
    "0.3": {
        TextPart: v03.decode_part,
        FilePart: v03.decode_part,
        DataPart: v03.decode_part,
        Message: v03.decode_message,
        TaskStatus: v03.decode_status,
        Artifact: v03.decode_artifact,
        Task: v03.decode_task,
        TaskStatusUpdateEvent: v03.decode_status_update,
        TaskArtifactUpdateEvent: v03.decode_artifact_update,
        TaskPage: partial(decode_page, decode_task=v03.decode_task),
        PushNotificationConfig: v03.decode_push_config,
    },
    "0.3-rest": {  # the v0.3 HTTP+JSON binding's ProtoJSON
        TextPart: V03_REST.decode_part,
        FilePart: V03_REST.decode_part,
        DataPart: V03_REST.decode_part,
        Message: V03_REST.decode_message,
        TaskStatus: V03_REST.decode_status,
        Artifact: V03_REST.decode_artifact,
        Task: V03_REST.decode_task,
        TaskStatusUpdateEvent: V03_REST.decode_status_update,
        TaskArtifactUpdateEvent: V03_REST.decode_artifact_update,
        TaskPage: partial(decode_page, decode_task=V03_REST.decode_task),
        PushNotificationConfig: v03_rest.decode_push_config,
    },
    "legacy": {  # tasks/send
        TextPart: v03.decode_part,
        FilePart: v03.decode_part,
        DataPart: v03.decode_part,
        Message: legacy.decode_message,
        TaskStatus: legacy.decode_status,
        Artifact: legacy.decode_artifact,
        Task: legacy.decode_task,
        TaskStatusUpdateEvent: legacy.decode_event,
        TaskArtifactUpdateEvent: legacy.decode_event,
        TaskPage: partial(decode_page, decode_task=legacy.decode_task),
        PushNotificationConfig: legacy.decode_push_config,
    },
}
# Objects that say what they are (v0.3 ``kind``; a StreamResponse such as {"task": {...}})
# are read as a stream's events are, then checked to be of the class asked for.
_TAGGED: dict[str, _Codec] = {
    "1.0": v1.decode_stream_response,
    "0.3": v03.decode_result,
    "0.3-rest": v03_rest.decode_event,
}
_EVENTS = (Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent)
_WRAPPERS = frozenset(
    {"task", "message", "msg", "statusUpdate", "status_update", "artifactUpdate", "artifact_update"}
)

# Members only one dialect writes (a2a-protocol §4), looked for in an object's structure;
# a dialect earlier in _PRIORITY wins (legacy parts have ``type``, and lowercase states too).
_MARKERS = {
    "sessionId": "legacy",
    "type": "legacy",
    "content": "0.3-rest",
    "kind": "0.3",
    "final": "0.3",
    "file": "0.3",
}
_PRIORITY = ("legacy", "0.3-rest", "0.3")
# Roles and states as v0.3 JSON-RPC (and tasks/send) spell them.
_SPELLED = frozenset({"role", "state"})
_V03_SPELLINGS = frozenset({"user", "agent", "cancelled", *(s.value for s in TaskState)})
_OPAQUE = frozenset({"metadata", "data"})  # the user's values: any member may be in them


def dialect_of(d: JSONDict, cls: type[Any]) -> str:
    """Which dialect wrote ``d``, an object of class ``cls``: "1.0", "0.3", "0.3-rest"
    (the v0.3 HTTP+JSON binding) or "legacy" (tasks/send)."""
    if cls in (TaskStatusUpdateEvent, TaskArtifactUpdateEvent):
        if "id" in d and "taskId" not in d and "task_id" not in d:
            return "legacy"  # its events name the task "id"
    elif cls is PushNotificationConfig:
        if "pushNotificationConfig" not in d:
            return "1.0"  # flat
        if "name" in d:
            return "0.3-rest"  # tasks/{id}/pushNotificationConfigs/{id}
        return "legacy" if "id" in d and "taskId" not in d else "0.3"
    found: set[str] = set()
    stack: list[Any] = [d]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            for key, value in item.items():
                if key in _OPAQUE:
                    continue
                if key in _MARKERS:
                    found.add(_MARKERS[key])
                elif key in _SPELLED and isinstance(value, str) and value in _V03_SPELLINGS:
                    found.add("0.3")
                stack.append(value)
    return next((dialect for dialect in _PRIORITY if dialect in found), "1.0")


def _codec(table: Mapping[type[Any], _Codec], cls: type[Any]) -> _Codec:
    for klass in cls.__mro__:
        if klass in table:
            return table[klass]
    raise TypeError(f"{cls.__name__} is not an A2A model class")


def to_dict(obj: PlainDicts, version: str = "1.0") -> JSONDict:
    """``obj`` as the A2A JSON of ``version`` (one of ``VERSIONS``)."""
    writers = _WRITERS.get(version)
    if writers is None:
        raise ValueError(
            f"A2A JSON is written for version {' or '.join(map(repr, VERSIONS))}, not {version!r}"
        )
    out: JSONDict = _codec(writers, type(obj))(obj)
    return out


def from_dict(cls: type[_M], data: Mapping[str, Any]) -> _M:
    """An object of class ``cls`` read from its A2A JSON in any dialect."""
    if not isinstance(data, Mapping):
        v.bad(f"a {cls.__name__} is a JSON object, not {type(data).__name__}")
    d = data if isinstance(data, dict) else dict(data)
    reader = _CARD_READERS.get(cls)
    if reader is None:
        dialect = dialect_of(d, cls)
        reader = _codec(_READERS[dialect], cls)
        tagged = ("kind" in d and dialect == "0.3") or (len(d) == 1 and d.keys() <= _WRAPPERS)
        if tagged and issubclass(cls, _EVENTS) and dialect in _TAGGED:
            reader = _TAGGED[dialect]
    value = reader(d)
    if not isinstance(value, cls):
        v.bad(f"a {type(value).__name__} is not a {cls.__name__}")
    return value
