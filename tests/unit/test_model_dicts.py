"""Model objects as plain dicts: ``to_dict(version)`` writes the A2A JSON of v1.0 or v0.3 with
the codecs' own encoders, ``from_dict`` reads any dialect back with their decoders, and the
round trip loses nothing (except what a version cannot say, excluded below and documented)."""

from __future__ import annotations

import json
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import a2a_anyio
from a2a_anyio import (
    A2ADiscoveryError,
    A2AProtocolError,
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    Artifact,
    DataPart,
    FilePart,
    Message,
    PushNotificationConfig,
    Role,
    SecurityScheme,
    Task,
    TaskArtifactUpdateEvent,
    TaskPage,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_anyio._model import PlainDicts

from .test_card_parse import V03_CARD, V1_CARD

VERSIONS = ["1.0", "0.3"]
ROUND_TRIPS = settings(max_examples=40, deadline=None)

# -- models, as each version can carry them ----------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
# Unset values are left out of the JSON, so an empty one reads back as unset: None, or not empty.
maybe_text = st.none() | st.text(min_size=1, max_size=6)
ids = st.text(min_size=1, max_size=6)
metadata = st.none() | st.dictionaries(
    st.text(max_size=5).filter(lambda k: k != "data_part_compat"),
    json_values,
    min_size=1,
    max_size=3,
)
maybe_strings = st.none() | st.lists(st.text(max_size=4), min_size=1, max_size=2)
# Security scheme names; not "schemes": the card reader takes a v0.3 requirement naming it
# for one of v1.0's ({"schemes": {...}}), as some servers send.
names = st.text(alphabet="abcxyz", min_size=1, max_size=4)


def _models(version: str) -> dict[type[Any], st.SearchStrategy[Any]]:
    v1 = version == "1.0"
    # v0.3 text and data parts have no media type; it has no unspecified role.
    part_media = maybe_text if v1 else st.none()
    roles = st.sampled_from(Role if v1 else [Role.USER, Role.AGENT])
    text_part = st.builds(TextPart, st.text(max_size=6), part_media, metadata)
    file_fields = {"media_type": maybe_text, "name": maybe_text, "metadata": metadata}
    file_part = st.builds(FilePart, data=st.binary(max_size=8), **file_fields) | st.builds(
        FilePart, url=ids, **file_fields
    )
    data_part = st.builds(DataPart, json_values, part_media, metadata)
    parts = st.lists(text_part | file_part | data_part, max_size=3)
    message = st.builds(
        Message,
        roles,
        parts,
        st.text(max_size=6),
        maybe_text,
        maybe_text,
        metadata,
        maybe_strings,
        maybe_strings,
    )
    status = st.builds(TaskStatus, st.sampled_from(TaskState), st.none() | message, maybe_text)
    artifact = st.builds(
        Artifact, st.text(max_size=6), parts, maybe_text, maybe_text, metadata, maybe_strings
    )
    task = st.builds(
        Task,
        ids,
        maybe_text,
        status,
        st.lists(artifact, max_size=2),
        st.lists(message, max_size=2),
        metadata,
    )

    @st.composite
    def status_update(draw: st.DrawFn) -> TaskStatusUpdateEvent:
        s = draw(status)
        # v1.0 has no final flag: read back, it is set for terminal and interrupted states;
        # v0.3 carries it, but a terminal state always reads as final.
        final = s.state.is_final if v1 else s.state.is_terminal or draw(st.booleans())
        return TaskStatusUpdateEvent(draw(ids), draw(maybe_text), s, final, draw(metadata))

    @st.composite
    def push_config(draw: st.DrawFn) -> PushNotificationConfig:
        scheme = draw(maybe_text)  # credentials go with a scheme
        credentials = draw(maybe_text) if scheme else None
        return PushNotificationConfig(
            draw(ids), draw(maybe_text), draw(maybe_text), draw(maybe_text), scheme, credentials
        )

    bindings = st.sampled_from(["JSONRPC", "HTTP+JSON", "GRPC"])
    protocol_versions = st.sampled_from(["1.0", "0.3", "0.2"])
    # A v0.3 interface entry is a URL and a transport: the card states the version.
    interface = st.builds(
        AgentInterface,
        ids,
        bindings,
        (st.none() | protocol_versions) if v1 else st.none(),
        maybe_text if v1 else st.none(),
    )
    extension = st.builds(AgentExtension, st.text(max_size=6), maybe_text, st.booleans(), metadata)
    extensions = st.lists(extension, max_size=2)
    # v1.0 has no stateTransitionHistory; v0.3's extended-card flag is the card's.
    history_flag = st.just(False) if v1 else st.booleans()
    capabilities = st.builds(
        AgentCapabilities,
        st.booleans(),
        st.booleans(),
        st.booleans() if v1 else st.just(False),
        history_flag,
        extensions,
    )
    card_capabilities = st.builds(
        AgentCapabilities, st.booleans(), st.booleans(), st.booleans(), history_flag, extensions
    )
    strings = st.lists(st.text(max_size=4), max_size=2)
    skill = st.builds(
        AgentSkill,
        st.text(max_size=6),
        st.text(max_size=6),
        maybe_text,
        strings,
        strings,
        st.none() | strings,
        st.none() | strings,
    )
    provider = st.builds(AgentProvider, st.text(max_size=6), maybe_text)
    scheme = st.one_of(
        st.builds(
            SecurityScheme,
            st.just("apiKey"),
            location=maybe_text,
            name=maybe_text,
            description=maybe_text,
        ),
        st.builds(
            SecurityScheme,
            st.just("http"),
            scheme=maybe_text,
            bearer_format=maybe_text,
            description=maybe_text,
        ),
        st.builds(SecurityScheme, st.just("oauth2"), flows=metadata, description=maybe_text),
        st.builds(
            SecurityScheme,
            st.just("openIdConnect"),
            open_id_connect_url=maybe_text,
            description=maybe_text,
        ),
        st.builds(SecurityScheme, st.just("mutualTLS"), description=maybe_text),
    )

    @st.composite
    def card_interfaces(draw: st.DrawFn) -> list[AgentInterface]:
        if v1:
            return draw(st.lists(interface, min_size=1, max_size=3))
        # One version for all (the card's), each endpoint once.
        version = draw(protocol_versions)
        pairs = draw(st.lists(st.tuples(ids, bindings), min_size=1, max_size=3, unique=True))
        return [AgentInterface(url, binding, version) for url, binding in pairs]

    card = st.builds(
        AgentCard,
        name=ids,
        description=st.text(max_size=6),
        version=maybe_text,
        interfaces=card_interfaces(),
        capabilities=card_capabilities,
        skills=st.lists(skill, max_size=2),
        security_schemes=st.dictionaries(names, scheme, max_size=2),
        security_requirements=st.lists(st.dictionaries(names, strings, max_size=2), max_size=2),
        provider=st.none() | provider,
        default_input_modes=strings,
        default_output_modes=strings,
        documentation_url=maybe_text,
        icon_url=maybe_text,
    )
    return {
        TextPart: text_part,
        FilePart: file_part,
        DataPart: data_part,
        Message: message,
        TaskStatus: status,
        Artifact: artifact,
        Task: task,
        TaskStatusUpdateEvent: status_update(),
        TaskArtifactUpdateEvent: st.builds(
            TaskArtifactUpdateEvent,
            ids,
            maybe_text,
            artifact,
            st.booleans(),
            st.booleans(),
            metadata,
        ),
        TaskPage: st.builds(
            TaskPage,
            st.lists(task, max_size=2),
            maybe_text,
            st.none() | st.integers(0, 99),
            st.none() | st.integers(0, 99),
        ),
        PushNotificationConfig: push_config(),
        AgentInterface: interface,
        AgentExtension: extension,
        AgentCapabilities: capabilities,
        AgentSkill: skill,
        AgentProvider: provider,
        SecurityScheme: scheme,
        AgentCard: card,
    }


MODELS = {version: _models(version) for version in VERSIONS}


def test_every_public_model_is_covered() -> None:
    public = {
        obj
        for obj in (getattr(a2a_anyio, name) for name in a2a_anyio.__all__)
        if isinstance(obj, type) and issubclass(obj, PlainDicts)
    }
    assert public == set(MODELS["1.0"]) == set(MODELS["0.3"])


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("cls", list(MODELS["1.0"]), ids=lambda cls: cls.__name__)
@ROUND_TRIPS
@given(data=st.data())
def test_to_dict_then_from_dict_loses_nothing(
    version: str, cls: type[Any], data: st.DataObject
) -> None:
    obj = data.draw(MODELS[version][cls])
    written = obj.to_dict(version)
    assert json.loads(json.dumps(written)) == written  # plain JSON
    back = cls.from_dict(written)
    assert back == obj
    assert back.to_dict(version) == written


# -- the JSON of each version, field by field (a2a-protocol §4) --------------------------------

PNG = b"\x89PNG"
TASK = Task(
    "t-1",
    "c-1",
    TaskStatus(
        TaskState.INPUT_REQUIRED,
        Message(Role.AGENT, [TextPart("Which size?")], "m-2", "c-1", "t-1"),
        "2026-04-01T10:05:00.000Z",
    ),
    artifacts=[
        Artifact(
            "a-1",
            [
                TextPart("draft"),
                FilePart(data=PNG, media_type="image/png", name="a.png"),
                FilePart(url="https://files.example/r.pdf", media_type="application/pdf"),
                DataPart({"width": 800}),
            ],
            name="draft",
        )
    ],
    history=[Message(Role.USER, [TextPart("resize")], "m-1", "c-1", "t-1")],
    metadata={"skillId": "image.resize"},
)
TASK_V1: dict[str, Any] = {
    "id": "t-1",
    "contextId": "c-1",
    "status": {
        "state": "TASK_STATE_INPUT_REQUIRED",
        "message": {
            "messageId": "m-2",
            "role": "ROLE_AGENT",
            "parts": [{"text": "Which size?"}],
            "contextId": "c-1",
            "taskId": "t-1",
        },
        "timestamp": "2026-04-01T10:05:00.000Z",
    },
    "artifacts": [
        {
            "artifactId": "a-1",
            "name": "draft",
            "parts": [
                {"text": "draft"},
                {"raw": "iVBORw==", "mediaType": "image/png", "filename": "a.png"},
                {"url": "https://files.example/r.pdf", "mediaType": "application/pdf"},
                {"data": {"width": 800}},
            ],
        }
    ],
    "history": [
        {
            "messageId": "m-1",
            "role": "ROLE_USER",
            "parts": [{"text": "resize"}],
            "contextId": "c-1",
            "taskId": "t-1",
        }
    ],
    "metadata": {"skillId": "image.resize"},
}
TASK_V03: dict[str, Any] = {
    "kind": "task",
    "id": "t-1",
    "contextId": "c-1",
    "status": {
        "state": "input-required",
        "message": {
            "kind": "message",
            "messageId": "m-2",
            "role": "agent",
            "parts": [{"kind": "text", "text": "Which size?"}],
            "contextId": "c-1",
            "taskId": "t-1",
        },
        "timestamp": "2026-04-01T10:05:00.000Z",
    },
    "artifacts": [
        {
            "artifactId": "a-1",
            "name": "draft",
            "parts": [
                {"kind": "text", "text": "draft"},
                {
                    "kind": "file",
                    "file": {"bytes": "iVBORw==", "mimeType": "image/png", "name": "a.png"},
                },
                {
                    "kind": "file",
                    "file": {"uri": "https://files.example/r.pdf", "mimeType": "application/pdf"},
                },
                {"kind": "data", "data": {"width": 800}},
            ],
        }
    ],
    "history": [
        {
            "kind": "message",
            "messageId": "m-1",
            "role": "user",
            "parts": [{"kind": "text", "text": "resize"}],
            "contextId": "c-1",
            "taskId": "t-1",
        }
    ],
    "metadata": {"skillId": "image.resize"},
}


def test_a_task_in_each_version() -> None:
    assert TASK.to_dict() == TASK.to_dict("1.0") == TASK_V1
    assert TASK.to_dict("0.3") == TASK_V03


def test_events_and_push_configs_in_each_version() -> None:
    done = TaskStatusUpdateEvent("t-1", "c-1", TaskStatus(TaskState.CANCELED), final=True)
    assert done.to_dict() == {
        "taskId": "t-1",
        "contextId": "c-1",
        "status": {"state": "TASK_STATE_CANCELED"},
    }
    assert done.to_dict("0.3") == {
        "kind": "status-update",
        "taskId": "t-1",
        "contextId": "c-1",
        "status": {"state": "canceled"},
        "final": True,
    }
    chunk = TaskArtifactUpdateEvent("t-1", None, Artifact("a-1", [DataPart(7)]), append=True)
    assert chunk.to_dict() == {
        "taskId": "t-1",
        "artifact": {"artifactId": "a-1", "parts": [{"data": 7}]},
        "append": True,
    }
    # v0.3 data is an object: other values are wrapped, and marked, as the a2a-sdk does.
    assert chunk.to_dict("0.3")["artifact"]["parts"] == [
        {"kind": "data", "data": {"value": 7}, "metadata": {"data_part_compat": True}}
    ]
    hook = PushNotificationConfig("https://hook.example/h", "t-1", "h-1", "tok", "Bearer", "secret")
    assert hook.to_dict() == {
        "url": "https://hook.example/h",
        "taskId": "t-1",
        "id": "h-1",
        "token": "tok",
        "authentication": {"scheme": "Bearer", "credentials": "secret"},
    }
    assert hook.to_dict("0.3") == {
        "taskId": "t-1",
        "pushNotificationConfig": {
            "url": "https://hook.example/h",
            "id": "h-1",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
        },
    }


def test_cards_in_each_version() -> None:
    assert AgentCard.from_dict(V1_CARD).to_dict() == V1_CARD
    card = AgentCard.from_dict(V03_CARD)
    assert card.to_dict("0.3") == {**V03_CARD, "protocolVersion": "0.3"}  # kept as Major.Minor
    # Across versions: the same interfaces, schemes and requirements in the other shape.
    v1 = card.to_dict("1.0")
    assert v1["supportedInterfaces"][1] == {
        "url": "https://jokes.example.com/rest",
        "protocolBinding": "HTTP+JSON",
        "protocolVersion": "0.3",
    }
    assert v1["securitySchemes"]["key"] == {
        "apiKeySecurityScheme": {"location": "query", "name": "key"}
    }
    assert v1["securityRequirements"] == [
        {"schemes": {"bearer": {"list": []}}},
        {"schemes": {"oauth": {"list": ["read", "write"]}}},
    ]
    assert v1["capabilities"] == {
        "streaming": True,
        "pushNotifications": False,
        "extendedAgentCard": True,
    }
    # v1.0 has no stateTransitionHistory: all else comes back.
    assert AgentCard.from_dict(v1) == replace(
        card, capabilities=replace(card.capabilities, state_transition_history=False)
    )


# -- from_dict reads every dialect -------------------------------------------------------------


@pytest.mark.parametrize("data", [TASK_V1, TASK_V03], ids=["v1.0", "v0.3"])
def test_from_dict_reads_both_versions(data: dict[str, Any]) -> None:
    task = Task.from_dict(data)
    assert task == TASK
    assert task.raw is data


def test_from_dict_reads_the_other_dialects() -> None:
    rest = {  # v0.3 HTTP+JSON: ProtoJSON of the v0.3 proto
        "id": "t-1",
        "contextId": "c-1",
        "status": {"state": "TASK_STATE_CANCELLED"},
        "history": [
            {
                "messageId": "m-1",
                "role": "ROLE_USER",
                "content": [
                    {"text": "resize"},
                    {"file": {"fileWithBytes": "iVBORw==", "mimeType": "image/png"}},
                    {"data": {"data": {"width": 800}}},
                ],
            }
        ],
    }
    task = Task.from_dict(rest)
    assert task.state is TaskState.CANCELED
    assert task.history[0].parts == [
        TextPart("resize"),
        FilePart(data=PNG, media_type="image/png"),
        DataPart({"width": 800}),
    ]
    legacy = {  # tasks/send
        "id": "t-1",
        "sessionId": "s-1",
        "status": {"state": "completed"},
        "artifacts": [{"name": "joke", "index": 0, "parts": [{"type": "text", "text": "Ha"}]}],
    }
    task = Task.from_dict(legacy)
    assert (task.context_id, task.state, task.text) == ("s-1", TaskState.COMPLETED, "Ha")
    assert task.artifacts[0].artifact_id == "0"
    event = TaskStatusUpdateEvent.from_dict({"id": "t-1", "status": {"state": "working"}})
    assert (event.task_id, event.status.state) == ("t-1", TaskState.WORKING)
    hook = PushNotificationConfig.from_dict(
        {"id": "t-1", "pushNotificationConfig": {"url": "https://hook.example/h"}}
    )
    assert (hook.task_id, hook.url) == ("t-1", "https://hook.example/h")


def test_from_dict_reads_stream_responses() -> None:
    assert Task.from_dict({"task": TASK_V1}) == TASK
    update = TaskStatusUpdateEvent.from_dict(
        {"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_WORKING"}}}
    )
    assert (update.task_id, update.status.state, update.final) == ("t-1", TaskState.WORKING, False)
    assert Message.from_dict(TASK_V03["history"][0]) == TASK.history[0]


def test_from_dict_takes_any_mapping() -> None:
    assert Task.from_dict(MappingProxyType(TASK_V1)) == TASK


# -- bad input -----------------------------------------------------------------------------------


def nested(depth: int) -> list[Any]:
    """A list in a list... ``depth`` deep: more than ``repr`` can write."""
    outer: list[Any] = []
    inner = outer
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return outer


@pytest.mark.parametrize(
    ("cls", "data"),
    [
        (Task, ["not", "an", "object"]),
        (Task, "task"),
        (Task, {"id": "t-1"}),  # no status
        (Task, {"id": "t-1", "status": {"state": "working"}, "artifacts": {"a": 1}}),
        (Task, {"status": {"state": "TASK_STATE_WORKING"}}),  # no id
        (Message, TASK_V03),  # a task, by its kind
        (Task, {"message": TASK_V1["history"][0]}),  # a message, by its wrapper
        (TextPart, {"data": {"n": 1}}),
        (FilePart, {"raw": "not base64!"}),
        (FilePart, {"kind": "file", "file": {"mimeType": "image/png"}}),  # neither bytes nor uri
        (DataPart, {"kind": "mystery"}),
        (TaskStatusUpdateEvent, {"status": {"state": "TASK_STATE_WORKING"}}),  # no taskId
        (TaskArtifactUpdateEvent, {"kind": "status-update", "taskId": "t", "status": {}}),
        (TaskPage, {"tasks": [{"id": 3.5}]}),
        (PushNotificationConfig, {"token": "tok"}),  # no url
        (AgentInterface, {"transport": "JSONRPC"}),  # no url
        (AgentSkill, {"id": "s", "tags": "fun"}),
        (AgentProvider, {"organization": 7}),
        (SecurityScheme, {"type": "http", "scheme": ["bearer"]}),
        # values no JSON text holds, quoted short in the message
        (DataPart, {"kind": nested(10_000)}),
        (DataPart, {"kind": 10**5000}),
        (Task, {"id": 10**5000, "status": {"state": "TASK_STATE_WORKING"}}),
    ],
)
def test_bad_input_is_a_protocol_error(cls: type[Any], data: Any) -> None:
    with pytest.raises(A2AProtocolError) as info:
        cls.from_dict(data)
    assert len(info.value.message) < 200


def test_a_bad_card_is_a_discovery_error_as_when_fetched() -> None:
    with pytest.raises(A2ADiscoveryError, match="no name"):
        AgentCard.from_dict({"description": "nameless"})
    with pytest.raises(A2ADiscoveryError, match="no endpoint"):
        AgentCard.from_dict({"name": "Agent"})


@pytest.mark.parametrize("version", ["1", "0.2", "v1.0", "legacy", ""])
def test_an_unknown_version_is_a_value_error(version: str) -> None:
    with pytest.raises(ValueError, match=r"version '1\.0' or '0\.3', not"):
        TASK.to_dict(version)
