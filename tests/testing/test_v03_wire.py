"""FakeAgent speaking A2A v0.3 and v0.2, JSON-RPC and HTTP+JSON, checked with raw httpx."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

import anyio
import pytest

from a2a_anyio import Message
from a2a_anyio.testing import FakeAgent, SkillContext, artifact, reply, status
from a2a_anyio.testing._skills import Emit

from ._helpers import (
    Gate,
    connect,
    read_sse,
    rpc,
    rpc_stream,
    scrub,
    v03_message,
    v03_rest_message,
    wait_until,
)

pytestmark = pytest.mark.anyio

HISTORY = [
    {
        "kind": "message",
        "messageId": "m1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
        "contextId": "<id>",
        "taskId": "<id>",
    },
]
ECHO_TASK = {
    "kind": "task",
    "id": "<id>",
    "contextId": "<id>",
    "status": {"state": "completed", "timestamp": "<ts>"},
    "artifacts": [
        {"artifactId": "<id>", "name": "echo", "parts": [{"kind": "text", "text": "hi"}]}
    ],
    "history": HISTORY,
}
SKILLS = [{"id": "echo", "name": "Echo", "description": "Echoes the text it receives", "tags": []}]
MODES = ["text/plain", "application/json"]


async def test_v03_card_on_both_paths(mode: str) -> None:
    agent = FakeAgent(dialect="0.3", binding="both", extended_card={})
    async with connect(agent, mode) as http:
        base = agent.url
        new = await http.get(base + "/.well-known/agent-card.json")
        old = await http.get(base + "/.well-known/agent.json")
    assert (
        new.json()
        == old.json()
        == {
            "protocolVersion": "0.3.0",
            "name": "Fake Agent",
            "description": "A scriptable A2A agent for tests",
            "url": base + "/a2a",
            "preferredTransport": "JSONRPC",
            "additionalInterfaces": [
                {"url": base + "/a2a", "transport": "JSONRPC"},
                {"url": base + "/rest", "transport": "HTTP+JSON"},
            ],
            "version": "1.0.0",
            "capabilities": {"streaming": True, "pushNotifications": True},
            "defaultInputModes": MODES,
            "defaultOutputModes": MODES,
            "skills": SKILLS,
            "supportsAuthenticatedExtendedCard": True,
        }
    )


async def test_v02_card_and_extended_card(mode: str) -> None:
    agent = FakeAgent(dialect="0.2", auth="Bearer s3cret", extended_card={"name": "Secret"})
    async with connect(agent, mode) as http:
        base = agent.url
        new = await http.get(base + "/.well-known/agent-card.json")
        card = await http.get(base + "/.well-known/agent.json")
        anonymous = await http.get(base + "/agent/authenticatedExtendedCard")
        auth = {"Authorization": "Bearer s3cret"}
        extended = await http.get(base + "/agent/authenticatedExtendedCard", headers=auth)
        no_method = await rpc(
            http, agent.rpc_url, "agent/getAuthenticatedExtendedCard", headers=auth
        )
    assert new.status_code == 404
    assert card.json() == {
        "protocolVersion": "0.2.5",
        "name": "Fake Agent",
        "description": "A scriptable A2A agent for tests",
        "url": base + "/a2a",
        "preferredTransport": "JSONRPC",
        "version": "1.0.0",
        "capabilities": {"streaming": True, "pushNotifications": True},
        "defaultInputModes": MODES,
        "defaultOutputModes": MODES,
        "skills": SKILLS,
        "supportsAuthenticatedExtendedCard": True,
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "security": [{"bearer": []}],
    }
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"] == "Bearer"
    assert extended.json()["name"] == "Secret"
    assert no_method["error"] == {"code": -32601, "message": "Method not found"}


@pytest.mark.parametrize("dialect", ["0.3", "0.2"])
async def test_send_stream_reply(mode: str, dialect: str) -> None:
    agent = FakeAgent(dialect=dialect)  # type: ignore[arg-type]

    @agent.skill("echo")
    async def echo(ctx: SkillContext) -> AsyncIterator[Emit]:
        if ctx.text == "ping":
            yield reply("pong")
            return
        yield status("working")
        yield artifact(ctx.text, name="echo")

    async with connect(agent, mode) as http:
        sent = await rpc(http, agent.rpc_url, "message/send", {"message": v03_message()})
        events = await rpc_stream(http, agent.rpc_url, "message/stream", {"message": v03_message()})
        pong = await rpc(http, agent.rpc_url, "message/send", {"message": v03_message("ping")})
        pong_events = await rpc_stream(
            http, agent.rpc_url, "message/stream", {"message": v03_message("ping")}
        )
    assert scrub(sent) == {"jsonrpc": "2.0", "id": 1, "result": ECHO_TASK}
    assert scrub(events) == [
        {
            "kind": "task",
            "id": "<id>",
            "contextId": "<id>",
            "status": {"state": "submitted"},
            "history": HISTORY,
        },
        {
            "kind": "status-update",
            "taskId": "<id>",
            "contextId": "<id>",
            "status": {"state": "working", "timestamp": "<ts>"},
            "final": False,
        },
        {
            "kind": "artifact-update",
            "taskId": "<id>",
            "contextId": "<id>",
            "artifact": {
                "artifactId": "<id>",
                "name": "echo",
                "parts": [{"kind": "text", "text": "hi"}],
            },
        },
        {
            "kind": "status-update",
            "taskId": "<id>",
            "contextId": "<id>",
            "status": {"state": "completed", "timestamp": "<ts>"},
            "final": True,
        },
    ]
    message = {
        "kind": "message",
        "messageId": "<id>",
        "role": "agent",
        "contextId": "<id>",
        "parts": [{"kind": "text", "text": "pong"}],
    }
    assert scrub(pong["result"]) == message
    assert scrub(pong_events) == [message]


async def test_non_blocking_get_resubscribe_cancel_push(mode: str) -> None:
    gate = Gate()
    agent = FakeAgent(dialect="0.3", skills={"gate": gate.skill})
    async with connect(agent, mode) as http:
        url = agent.rpc_url
        params = {"message": v03_message(), "configuration": {"blocking": False}}
        sent = await rpc(http, url, "message/send", params)
        task_id = sent["result"]["id"]
        await gate.started.wait()
        got = await rpc(http, url, "tasks/get", {"id": task_id, "historyLength": 1})
        hook = {
            "url": "https://client.example.com/hook",
            "token": "tok",
            "id": "hook-1",
            "authentication": {"schemes": ["Bearer"], "credentials": "sec"},
        }
        created = await rpc(
            http,
            url,
            "tasks/pushNotificationConfig/set",
            {"taskId": task_id, "pushNotificationConfig": hook},
        )
        fetched = await rpc(
            http,
            url,
            "tasks/pushNotificationConfig/get",
            {"id": task_id, "pushNotificationConfigId": "hook-1"},
        )
        first = await rpc(http, url, "tasks/pushNotificationConfig/get", {"id": task_id})
        listed = await rpc(http, url, "tasks/pushNotificationConfig/list", {"id": task_id})
        deleted = await rpc(
            http,
            url,
            "tasks/pushNotificationConfig/delete",
            {"id": task_id, "pushNotificationConfigId": "hook-1"},
        )

        async def cancel_soon() -> None:
            await wait_until(lambda: agent.streams(task_id) == 1)
            canceled = await rpc(http, url, "tasks/cancel", {"id": task_id})
            assert scrub(canceled["result"]["status"]) == {
                "state": "canceled",
                "timestamp": "<ts>",
                "message": {
                    "kind": "message",
                    "messageId": "<id>",
                    "role": "agent",
                    "parts": [{"kind": "text", "text": "canceled"}],
                    "contextId": "<id>",
                    "taskId": "<id>",
                },
            }

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_soon)
            events = await rpc_stream(http, url, "tasks/resubscribe", {"id": task_id})
        again = await rpc(http, url, "tasks/cancel", {"id": task_id})
        late = await rpc(http, url, "tasks/resubscribe", {"id": task_id})
        follow = await rpc(
            http, url, "message/send", {"message": v03_message(messageId="m2", taskId=task_id)}
        )
    assert scrub(sent["result"]) == {
        "kind": "task",
        "id": "<id>",
        "contextId": "<id>",
        "status": {"state": "submitted"},
        "history": HISTORY,
    }
    assert got["result"]["status"]["state"] == "working"
    expected = {"taskId": task_id, "pushNotificationConfig": hook}
    assert created["result"] == fetched["result"] == first["result"] == expected
    assert listed["result"] == [expected]
    assert deleted == {"jsonrpc": "2.0", "id": 1, "result": None}
    assert [e["kind"] for e in events] == ["task", "status-update"]
    assert (events[1]["status"]["state"], events[1]["final"]) == ("canceled", True)
    assert again["error"] == {
        "code": -32002,
        "message": "Task cannot be canceled",
        "data": {"taskId": task_id},
    }
    assert late["error"]["code"] == -32004
    assert follow["error"]["code"] == -32602


async def test_input_required_continuation(mode: str) -> None:
    agent = FakeAgent(dialect="0.3")

    @agent.skill("ask")
    async def ask(ctx: SkillContext) -> AsyncGenerator[Emit, Message | None]:
        answer = yield status("input-required", "which city?")
        assert answer is not None
        yield artifact(f"weather in {answer.text}")

    async with connect(agent, mode) as http:
        url = agent.rpc_url
        events = await rpc_stream(http, url, "message/stream", {"message": v03_message()})
        task = events[0]
        follow = v03_message(
            "Paris", messageId="m2", taskId=task["id"], contextId=task["contextId"]
        )
        wrong_context = await rpc(
            http,
            url,
            "message/send",
            {"message": v03_message(messageId="m3", taskId=task["id"], contextId="other")},
        )
        rest = await rpc_stream(http, url, "message/stream", {"message": follow})
        terminal = await rpc(http, url, "message/send", {"message": follow})
    assert [(e["kind"], e.get("status", {}).get("state"), e.get("final")) for e in events] == [
        ("task", "submitted", None),
        ("status-update", "input-required", True),
    ]
    assert [(e["kind"], e.get("status", {}).get("state"), e.get("final")) for e in rest] == [
        ("task", "input-required", None),
        ("status-update", "working", False),
        ("artifact-update", None, None),
        ("status-update", "completed", True),
    ]
    assert rest[2]["artifact"]["parts"] == [{"kind": "text", "text": "weather in Paris"}]
    assert wrong_context["error"] == {
        "code": -32602,
        "message": "contextId does not match the task's",
    }
    assert terminal["error"]["code"] == -32602  # v0.3: a message to a terminal task


async def test_v03_errors(mode: str) -> None:
    agent = FakeAgent(dialect="0.3")
    async with connect(agent, mode) as http:
        url = agent.rpc_url
        not_found = await rpc(http, url, "tasks/get", {"id": "nope"})
        v1_method = await rpc(http, url, "SendMessage", {"message": v03_message()})
        no_kind = await rpc(
            http,
            url,
            "message/send",
            {"message": {k: x for k, x in v03_message().items() if k != "kind"}},
        )
        v1_role = await rpc(http, url, "message/send", {"message": v03_message(role="ROLE_USER")})
        card = await rpc(http, url, "agent/getAuthenticatedExtendedCard")
    assert not_found == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32001, "message": "Task not found", "data": {"taskId": "nope"}},
    }
    assert v1_method["error"] == {"code": -32601, "message": "Method not found"}
    assert no_kind["error"]["code"] == -32602
    assert v1_role["error"]["code"] == -32602
    assert card["error"] == {
        "code": -32007,
        "message": "Authenticated Extended Card is not configured",
    }


# -- HTTP+JSON (ProtoJSON of the v0.3 proto, under /v1) ----------------------------------


@pytest.mark.parametrize("dialect", ["0.3", "0.2"])
async def test_rest_shapes(mode: str, dialect: str) -> None:
    agent = FakeAgent(dialect=dialect, binding="rest", extended_card={})  # type: ignore[arg-type]

    @agent.skill("files")
    async def files(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        yield artifact(file=b"\x89PNG", media_type="image/png", filename="a.png", name="img")
        yield artifact(data={"n": ctx.data["n"] + 1}, name="data")

    async with connect(agent, mode) as http:
        base = agent.rest_url + "/v1"
        message = v03_rest_message(content=[{"text": "hi"}, {"data": {"data": {"n": 1}}}])
        sent = await http.post(base + "/message:send", json={"message": message})
        events = await read_sse(
            http,
            "POST",
            base + "/message:stream",
            json_body={"message": message, "configuration": {"blocking": True}},
        )
        task_id = sent.json()["task"]["id"]
        got = await http.get(f"{base}/tasks/{task_id}", params={"historyLength": 1})
        card = await http.get(base + "/card")
        rest_url = agent.rest_url
        v1_path = await http.post(rest_url + "/message:send", json={"message": message})
    assert sent.status_code == 200
    assert sent.headers["content-type"] == "application/json"
    assert scrub(sent.json()) == {
        "task": {
            "id": "<id>",
            "contextId": "<id>",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "<ts>"},
            "artifacts": [
                {
                    "artifactId": "<id>",
                    "name": "img",
                    "parts": [
                        {
                            "file": {
                                "fileWithBytes": "iVBORw==",
                                "mimeType": "image/png",
                                "name": "a.png",
                            }
                        }
                    ],
                },
                {"artifactId": "<id>", "name": "data", "parts": [{"data": {"data": {"n": 2}}}]},
            ],
            "history": [
                {
                    "messageId": "m1",
                    "role": "ROLE_USER",
                    "contextId": "<id>",
                    "taskId": "<id>",
                    "content": [{"text": "hi"}, {"data": {"data": {"n": 1}}}],
                }
            ],
        }
    }
    assert [next(iter(e)) for e in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert events[1]["statusUpdate"]["final"] is False
    assert events[-1]["statusUpdate"]["final"] is True
    assert got.json()["id"] == task_id
    assert card.json()["protocolVersion"] == ("0.3.0" if dialect == "0.3" else "0.2.5")
    assert (card.json()["url"], card.json()["preferredTransport"]) == (rest_url, "HTTP+JSON")
    assert v1_path.status_code == 404


async def test_rest_cancel_subscribe_push_and_errors(mode: str) -> None:
    gate = Gate()
    agent = FakeAgent(dialect="0.3", binding="rest", skills={"gate": gate.skill})
    async with connect(agent, mode) as http:
        base = agent.rest_url + "/v1"
        sent = await http.post(
            base + "/message:send",
            json={"message": v03_rest_message(), "configuration": {"blocking": False}},
        )
        task_id = sent.json()["task"]["id"]
        await gate.started.wait()
        hooks = f"{base}/tasks/{task_id}/pushNotificationConfigs"
        created = await http.post(
            hooks,
            json={
                "parent": f"tasks/{task_id}",
                "configId": "c1",
                "config": {
                    "name": f"tasks/{task_id}/pushNotificationConfigs/c1",
                    "pushNotificationConfig": {
                        "url": "https://client.example.com/hook",
                        "token": "tok",
                    },
                },
            },
        )
        listed = await http.get(hooks)
        got = await http.get(hooks + "/c1")
        deleted = await http.delete(hooks + "/c1")

        async def cancel_soon() -> None:
            await wait_until(lambda: agent.streams(task_id) == 1)
            canceled = await http.post(f"{base}/tasks/{task_id}:cancel", json={})
            assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELLED"

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_soon)
            events = await read_sse(http, "GET", f"{base}/tasks/{task_id}:subscribe")
        again = await http.post(f"{base}/tasks/{task_id}:cancel", json={})
        missing = await http.get(f"{base}/tasks/nope")
        parts = await http.post(
            base + "/message:send",
            json={"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}},
        )
        no_card = await http.get(base + "/card")
    config = {
        "name": f"tasks/{task_id}/pushNotificationConfigs/c1",
        "pushNotificationConfig": {
            "id": "c1",
            "url": "https://client.example.com/hook",
            "token": "tok",
        },
    }
    assert created.json() == got.json() == config
    assert listed.json() == {"configs": [config], "nextPageToken": ""}
    assert (deleted.status_code, deleted.json()) == (200, {})
    assert [next(iter(e)) for e in events] == ["task", "statusUpdate"]
    assert events[1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELLED"
    assert (again.status_code, again.json()) == (409, {"message": "Task cannot be canceled"})
    assert (missing.status_code, missing.json()) == (404, {"message": "Task not found"})
    assert parts.status_code == 422
    assert no_card.status_code == 404


# -- listing tasks (the spec's draft after v0.3: tasks/list, GET /v1/tasks) --------------


async def test_v03_lists_tasks_over_both_bindings(mode: str) -> None:
    agent = FakeAgent(dialect="0.3", binding="both")
    async with connect(agent, mode) as http:
        ids = []
        for i, context in enumerate(("ctx-a", "ctx-a", "ctx-b")):
            sent = await rpc(
                http, agent.rpc_url, "message/send", {"message": v03_message(f"t{i}", contextId=context)}
            )  # fmt: skip
            ids.append(sent["result"]["id"])
        first = await rpc(http, agent.rpc_url, "tasks/list", {"pageSize": 2})
        token = first["result"]["nextPageToken"]
        second = await rpc(
            http, agent.rpc_url, "tasks/list", {"pageSize": 2, "pageToken": token, "lastUpdatedAfter": 0}
        )  # fmt: skip
        ctx = await rpc(
            http,
            agent.rpc_url,
            "tasks/list",
            {"contextId": "ctx-a", "status": "completed", "includeArtifacts": True},
        )
        later = await rpc(http, agent.rpc_url, "tasks/list", {"lastUpdatedAfter": 4102444800000})
        bad = await rpc(http, agent.rpc_url, "tasks/list", {"status": "running"})
        base = agent.rest_url + "/v1"
        query = {"contextId": "ctx-b", "status": "TASK_STATE_COMPLETED", "historyLength": "0"}
        rest = await http.get(base + "/tasks", params=query)
        too_big = await http.get(base + "/tasks", params={"pageSize": "101"})
    r1, r2 = first["result"], second["result"]
    assert [t["id"] for t in r1["tasks"]] == [ids[2], ids[1]]
    assert (r1["pageSize"], r1["totalSize"]) == (2, 3) and token
    assert all(t["kind"] == "task" and "artifacts" not in t for t in r1["tasks"])
    assert ([t["id"] for t in r2["tasks"]], r2["nextPageToken"]) == ([ids[0]], "")
    assert [t["id"] for t in ctx["result"]["tasks"]] == [ids[1], ids[0]]
    assert ctx["result"]["tasks"][0]["artifacts"][0]["parts"] == [{"kind": "text", "text": "t1"}]
    assert later["result"]["tasks"] == []
    assert bad["error"]["code"] == -32602
    assert rest.status_code == 200
    assert scrub(rest.json()) == {
        "tasks": [
            {
                "id": "<id>",
                "contextId": "ctx-b",
                "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "<ts>"},
            }
        ],
        "nextPageToken": "",
        "pageSize": 50,
        "totalSize": 1,
    }
    assert rest.json()["tasks"][0]["id"] == ids[2]
    assert (too_big.status_code, too_big.json()) == (
        422,
        {"message": "pageSize must be between 1 and 100"},
    )


async def test_a_v02_agent_has_no_tasks_list(mode: str) -> None:
    agent = FakeAgent(dialect="0.2")
    async with connect(agent, mode) as http:
        answer = await rpc(http, agent.rpc_url, "tasks/list", {})
    assert answer["error"] == {"code": -32601, "message": "Method not found"}
