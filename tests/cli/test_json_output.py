"""What ``-o json`` prints: what the agent sent (``raw``), else the codec's v1.0 (``to_dict``);
push configs always the codec's v1.0, never with their token or credentials."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2a_anyio import A2AClient
from a2a_anyio._dialects.plain import dialect_of
from a2a_anyio._model import (
    Message,
    PushNotificationConfig,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPage,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_anyio.cli._render import push_config_wire, response, wire
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status

from ..unit._support import fold
from .conftest import run

TOKEN, CREDENTIALS = "tok-5ecret", "cred-5ecret"

# A v0.3 stream as an agent sends it: a snapshot, a status, an artifact in two chunks, the end.
V03_EVENTS: list[dict[str, Any]] = [
    {"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "submitted"},
     "extra": "kept"},
    {"kind": "status-update", "taskId": "t1", "contextId": "c1", "final": False,
     "status": {"state": "working"}},
    {"kind": "artifact-update", "taskId": "t1", "contextId": "c1",
     "artifact": {"artifactId": "a1", "name": "report", "parts": [{"kind": "text", "text": "1"}]}},
    {"kind": "artifact-update", "taskId": "t1", "contextId": "c1", "append": True,
     "artifact": {"artifactId": "a1", "parts": [{"kind": "text", "text": " 2"}]}},
    {"kind": "status-update", "taskId": "t1", "contextId": "c1", "final": True,
     "status": {"state": "completed"}},
]  # fmt: skip
CLASSES: dict[str, type[StreamEvent]] = {
    "task": Task,
    "status-update": TaskStatusUpdateEvent,
    "artifact-update": TaskArtifactUpdateEvent,
}
DECODED: list[StreamEvent] = [CLASSES[e["kind"]].from_dict(e) for e in V03_EVENTS]


def has_kind(doc: Any) -> bool:
    """Whether a JSON value has a ``kind`` member anywhere (a v0.3 mark)."""
    return '"kind"' in json.dumps(doc)


def test_a_decoded_object_is_printed_as_the_agent_sent_it() -> None:
    for event, sent in zip(DECODED, V03_EVENTS, strict=True):
        assert wire(event) is event.raw and wire(event) == sent  # its unknown members too
    page = TaskPage.from_dict({"tasks": [V03_EVENTS[0]], "nextPageToken": ""})
    assert wire(page) == {"tasks": [V03_EVENTS[0]], "nextPageToken": ""}


def test_a_folded_task_is_the_codecs_v1_json_not_a_mix_of_dialects() -> None:
    folded = fold(DECODED)
    assert folded is not None and folded.raw is None
    doc = wire(folded)
    assert doc == folded.to_dict("1.0")
    assert dialect_of(doc, Task) == "1.0" and not has_kind(doc)
    assert doc["status"] == {"state": "TASK_STATE_COMPLETED"}
    assert doc["artifacts"] == [
        {"artifactId": "a1", "name": "report", "parts": [{"text": "1"}, {"text": " 2"}]}
    ]
    assert "extra" not in doc  # the first snapshot's, no longer what the task is


def test_responses_wrap_each_object_in_its_member() -> None:
    built = Message(Role.AGENT, [TextPart("hi")], message_id="m1")
    assert response(built) == {"message": built.to_dict("1.0")}
    assert response(DECODED[0]) == {"task": V03_EVENTS[0]}
    assert response(DECODED[1]) == {"statusUpdate": V03_EVENTS[1]}
    assert response(DECODED[2]) == {"artifactUpdate": V03_EVENTS[2]}
    update = TaskStatusUpdateEvent("t1", None, TaskStatus(TaskState.WORKING))
    assert response(update) == {
        "statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_WORKING"}}
    }


@pytest.mark.parametrize(
    "sent",
    [
        {"url": "https://h.test/n", "id": "p1", "taskId": "t1", "token": TOKEN,
         "authentication": {"scheme": "Bearer", "credentials": CREDENTIALS}},
        {"taskId": "t1", "pushNotificationConfig": {"url": "https://h.test/n", "id": "p1",
         "token": TOKEN, "authentication": {"schemes": ["Bearer"], "credentials": CREDENTIALS}}},
    ],
    ids=["v1.0", "v0.3"],
)  # fmt: skip
def test_a_push_config_is_printed_without_its_secrets(sent: dict[str, Any]) -> None:
    config = PushNotificationConfig.from_dict(sent)
    doc = push_config_wire(config)
    assert doc == {
        "url": "https://h.test/n",
        "taskId": "t1",
        "id": "p1",
        "authentication": {"scheme": "Bearer"},
    }
    assert (config.token, config.auth_credentials) == (TOKEN, CREDENTIALS)  # left as it was


# -- the commands, against a FakeAgent ---------------------------------------------------------


def reporter(dialect: str) -> FakeAgent:
    agent = FakeAgent(name="Reporter", dialect=dialect)  # type: ignore[arg-type]

    @agent.skill("report")
    async def report(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working", "writing")
        yield artifact("part 1", name="report")
        yield artifact(" part 2", append=True, last_chunk=True)
        yield status("completed")

    return agent


@pytest.mark.anyio
async def test_fan_out_prints_a_v03_agents_folded_task_in_v1(anyio_backend: str) -> None:
    async with reporter("0.3").serve() as agent:
        fanned = await run(anyio_backend, "-a", agent.url, "-o", "json", "fan-out", "report")
    assert fanned.code == 0, fanned.err
    (result,) = fanned.json()["results"]
    task = result["response"]["task"]
    assert dialect_of(task, Task) == "1.0" and not has_kind(task)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["history"][0]["role"] == "ROLE_USER"
    assert Task.from_dict(task).text == "part 1 part 2"


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_push_config_json_never_holds_a_token_or_credentials(
    anyio_backend: str, dialect: str
) -> None:
    async with reporter(dialect).serve() as agent, A2AClient(agent.url) as client:
        task = await client.send_message("report")
        assert isinstance(task, Task)
        await client.create_push_config(
            task.id, "http://127.0.0.1:9/hook", config_id="by-lib", token=TOKEN,
            auth_scheme="Bearer", auth_credentials=CREDENTIALS,
        )  # fmt: skip
        a = ["-a", agent.url, "-o", "json", "push-config"]
        runs = [
            await run(anyio_backend, *a, "create", task.id, "http://127.0.0.1:9/hook",
                      "--config-id", "by-cli", "--token", TOKEN),
            await run(anyio_backend, *a, "get", task.id, "by-lib"),
            await run(anyio_backend, *a, "list", task.id),
        ]  # fmt: skip
        held = await client.get_push_config(task.id, "by-lib")
    assert (held.token, held.auth_credentials) == (TOKEN, CREDENTIALS)  # the agent sends them
    for result in runs:
        assert result.code == 0, result.err
        assert TOKEN not in result.out and CREDENTIALS not in result.out, result.out
    created, got, listed = (r.json() for r in runs)
    assert created == {"url": "http://127.0.0.1:9/hook", "taskId": task.id, "id": "by-cli"}
    assert got["id"] == "by-lib" and got["authentication"] == {"scheme": "Bearer"}
    assert sorted(c["id"] for c in listed["configs"]) == ["by-cli", "by-lib"]
    assert json.dumps(listed).count("authentication") == 1
