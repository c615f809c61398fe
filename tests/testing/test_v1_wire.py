"""FakeAgent speaking A2A v1.0, JSON-RPC and HTTP+JSON, checked with raw httpx requests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from a2a_anyio.testing import FakeAgent, SkillContext, artifact, reply, status
from a2a_anyio.testing._skills import Emit

from ._helpers import V1, Gate, connect, read_sse, rpc, rpc_stream, scrub, v1_message, wait_until

pytestmark = pytest.mark.anyio

HISTORY = [
    {
        "messageId": "m1",
        "role": "ROLE_USER",
        "parts": [{"text": "hi"}],
        "contextId": "<id>",
        "taskId": "<id>",
    },
]
ECHO_TASK = {
    "id": "<id>",
    "contextId": "<id>",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "<ts>"},
    "artifacts": [{"artifactId": "<id>", "name": "echo", "parts": [{"text": "hi"}]}],
    "history": HISTORY,
}
INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def error_info(reason: str, **metadata: str) -> list[dict[str, Any]]:
    return [{"@type": INFO, "reason": reason, "domain": "a2a-protocol.org", "metadata": metadata}]


async def test_card(mode: str) -> None:
    agent = FakeAgent(binding="both", extended_card={"description": "more"})
    async with connect(agent, mode) as http:
        base = agent.url
        response = await http.get(base + "/.well-known/agent-card.json")
        assert (await http.get(base + "/.well-known/agent.json")).status_code == 404
    assert response.status_code == 200
    assert response.json() == {
        "name": "Fake Agent",
        "description": "A scriptable A2A agent for tests",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": base + "/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": base + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "capabilities": {"streaming": True, "pushNotifications": True, "extendedAgentCard": True},
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {"id": "echo", "name": "Echo", "description": "Echoes the text it receives", "tags": []}
        ],
    }
    assert agent.requests[0].op == "card"


async def test_send_and_stream(mode: str) -> None:
    agent = FakeAgent()
    async with connect(agent, mode) as http:
        sent = await rpc(http, agent.rpc_url, "SendMessage", {"message": v1_message()}, headers=V1)
        events = await rpc_stream(
            http, agent.rpc_url, "SendStreamingMessage", {"message": v1_message()}, headers=V1
        )
    assert scrub(sent) == {"jsonrpc": "2.0", "id": 1, "result": {"task": ECHO_TASK}}
    assert scrub(events) == [
        {
            "task": {
                "id": "<id>",
                "contextId": "<id>",
                "status": {"state": "TASK_STATE_SUBMITTED"},
                "history": HISTORY,
            }
        },
        {
            "statusUpdate": {
                "taskId": "<id>",
                "contextId": "<id>",
                "status": {"state": "TASK_STATE_WORKING", "timestamp": "<ts>"},
            }
        },
        {
            "artifactUpdate": {
                "taskId": "<id>",
                "contextId": "<id>",
                "artifact": {"artifactId": "<id>", "name": "echo", "parts": [{"text": "hi"}]},
            }
        },
        {
            "statusUpdate": {
                "taskId": "<id>",
                "contextId": "<id>",
                "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "<ts>"},
            }
        },
    ]
    task_id = events[0]["task"]["id"]
    assert {e[next(iter(e))].get("taskId", task_id) for e in events} == {task_id}


async def test_message_reply_chunks_and_input_required(mode: str) -> None:
    agent = FakeAgent()

    @agent.skill("ping")
    async def ping(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield reply(f"pong: {ctx.text}", data={"n": 1})

    @agent.skill("chunks")
    async def chunks(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield artifact("one", name="r", artifact_id="a-1")
        yield artifact(" two", append=True, last_chunk=True)

    @agent.skill("ask")
    async def ask(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("input-required", "size?")
        yield artifact(f"size {ctx.text}")

    async with connect(agent, mode) as http:
        ping_reply = await rpc(
            http,
            agent.rpc_url,
            "SendMessage",
            {"message": v1_message(), "metadata": {"skillId": "ping"}},
            headers=V1,
        )
        chunk_events = await rpc_stream(
            http,
            agent.rpc_url,
            "SendStreamingMessage",
            {"message": v1_message(metadata={"skillId": "chunks"})},
            headers=V1,
        )
        asked = await rpc(
            http,
            agent.rpc_url,
            "SendMessage",
            {"message": v1_message(), "metadata": {"skillId": "ask"}},
            headers=V1,
        )
        task = asked["result"]["task"]
        answer = v1_message("XL", messageId="m2", taskId=task["id"], contextId=task["contextId"])
        answered = await rpc(http, agent.rpc_url, "SendMessage", {"message": answer}, headers=V1)
    assert scrub(ping_reply["result"]) == {
        "message": {
            "messageId": "<id>",
            "role": "ROLE_AGENT",
            "contextId": "<id>",
            "parts": [{"text": "pong: hi"}, {"data": {"n": 1}}],
        }
    }
    assert [scrub(e.get("artifactUpdate")) for e in chunk_events[1:3]] == [
        {
            "taskId": "<id>",
            "contextId": "<id>",
            "artifact": {"artifactId": "a-1", "name": "r", "parts": [{"text": "one"}]},
        },
        {
            "taskId": "<id>",
            "contextId": "<id>",
            "append": True,
            "lastChunk": True,
            "artifact": {"artifactId": "a-1", "parts": [{"text": " two"}]},
        },
    ]
    assert scrub(task["status"]) == {
        "state": "TASK_STATE_INPUT_REQUIRED",
        "timestamp": "<ts>",
        "message": {
            "messageId": "<id>",
            "role": "ROLE_AGENT",
            "parts": [{"text": "size?"}],
            "contextId": "<id>",
            "taskId": "<id>",
        },
    }
    done = answered["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["artifacts"][0]["parts"] == [{"text": "size XL"}]
    assert [(m["role"], m["parts"][0]["text"]) for m in done["history"]] == [
        ("ROLE_USER", "hi"),
        ("ROLE_AGENT", "size?"),
        ("ROLE_USER", "XL"),
    ]


async def test_return_immediately_get_subscribe_cancel(mode: str) -> None:
    gate = Gate()
    agent = FakeAgent(skills={"gate": gate.skill})
    async with connect(agent, mode) as http:
        params = {"message": v1_message(), "configuration": {"returnImmediately": True}}
        sent = await rpc(http, agent.rpc_url, "SendMessage", params, headers=V1)
        task_id = sent["result"]["task"]["id"]
        assert sent["result"]["task"]["status"] == {"state": "TASK_STATE_SUBMITTED"}
        await gate.started.wait()
        got = await rpc(
            http, agent.rpc_url, "GetTask", {"id": task_id, "historyLength": 0}, headers=V1
        )
        busy = await rpc(
            http,
            agent.rpc_url,
            "SendMessage",
            {"message": v1_message(messageId="m2", taskId=task_id)},
            headers=V1,
        )
        assert busy["error"]["code"] == -32004  # working, not waiting for input
        assert got["result"]["status"]["state"] == "TASK_STATE_WORKING"
        assert "history" not in got["result"]

        async def cancel_soon() -> None:
            await wait_until(lambda: agent.streams(task_id) == 1)
            canceled = await rpc(http, agent.rpc_url, "CancelTask", {"id": task_id}, headers=V1)
            assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_soon)
            events = await rpc_stream(
                http, agent.rpc_url, "SubscribeToTask", {"id": task_id}, headers=V1
            )
        again = await rpc(http, agent.rpc_url, "CancelTask", {"id": task_id}, headers=V1)
        late = await rpc(http, agent.rpc_url, "SubscribeToTask", {"id": task_id}, headers=V1)
    assert events[0]["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert scrub(events[-1]["statusUpdate"]["status"]) == {
        "state": "TASK_STATE_CANCELED",
        "timestamp": "<ts>",
        "message": {
            "messageId": "<id>",
            "role": "ROLE_AGENT",
            "parts": [{"text": "canceled"}],
            "contextId": "<id>",
            "taskId": "<id>",
        },
    }
    assert len(events) == 2
    assert again["error"] == {
        "code": -32002,
        "message": "Task cannot be canceled",
        "data": error_info("TASK_NOT_CANCELABLE", taskId=task_id),
    }
    assert late["error"]["code"] == -32004
    assert late["error"]["data"][0]["reason"] == "UNSUPPORTED_OPERATION"
    assert not gate.opened.is_set()  # the skill was cancelled while it waited


async def test_list_tasks(mode: str) -> None:
    agent = FakeAgent()
    async with connect(agent, mode) as http:
        ids = []
        for i in range(3):
            params = {"message": v1_message(f"t{i}", contextId="ctx-a" if i < 2 else "ctx-b")}
            result = await rpc(http, agent.rpc_url, "SendMessage", params, headers=V1)
            ids.append(result["result"]["task"]["id"])
        page1 = await rpc(http, agent.rpc_url, "ListTasks", {"pageSize": 2}, headers=V1)
        token = page1["result"]["nextPageToken"]
        page2 = await rpc(
            http,
            agent.rpc_url,
            "ListTasks",
            {"pageSize": 2, "pageToken": token, "includeArtifacts": True},
            headers=V1,
        )
        ctx = await rpc(
            http,
            agent.rpc_url,
            "ListTasks",
            {"contextId": "ctx-a", "status": "TASK_STATE_COMPLETED"},
            headers=V1,
        )
        bad = await rpc(http, agent.rpc_url, "ListTasks", {"pageSize": 0}, headers=V1)
    r1, r2 = page1["result"], page2["result"]
    assert [t["id"] for t in r1["tasks"]] == [ids[2], ids[1]]
    assert (r1["pageSize"], r1["totalSize"]) == (2, 3)
    assert all("artifacts" not in t for t in r1["tasks"])
    assert [t["id"] for t in r2["tasks"]] == [ids[0]]
    assert r2["nextPageToken"] == ""
    assert r2["tasks"][0]["artifacts"][0]["parts"] == [{"text": "t0"}]
    assert [t["id"] for t in ctx["result"]["tasks"]] == [ids[1], ids[0]]
    assert bad["error"]["code"] == -32602


async def test_push_config_crud(mode: str) -> None:
    agent = FakeAgent()
    async with connect(agent, mode) as http:
        sent = await rpc(http, agent.rpc_url, "SendMessage", {"message": v1_message()}, headers=V1)
        task_id = sent["result"]["task"]["id"]
        config = {
            "taskId": task_id,
            "id": "hook-1",
            "url": "https://client.example.com/hook",
            "token": "tok",
            "authentication": {"scheme": "Bearer", "credentials": "sec"},
        }
        created = await rpc(
            http, agent.rpc_url, "CreateTaskPushNotificationConfig", config, headers=V1
        )
        unnamed = await rpc(
            http,
            agent.rpc_url,
            "CreateTaskPushNotificationConfig",
            {"taskId": task_id, "url": "https://client.example.com/other"},
            headers=V1,
        )
        got = await rpc(
            http,
            agent.rpc_url,
            "GetTaskPushNotificationConfig",
            {"taskId": task_id, "id": "hook-1"},
            headers=V1,
        )
        listed = await rpc(
            http, agent.rpc_url, "ListTaskPushNotificationConfigs", {"taskId": task_id}, headers=V1
        )
        deleted = await rpc(
            http,
            agent.rpc_url,
            "DeleteTaskPushNotificationConfig",
            {"taskId": task_id, "id": "hook-1"},
            headers=V1,
        )
        missing = await rpc(
            http,
            agent.rpc_url,
            "GetTaskPushNotificationConfig",
            {"taskId": task_id, "id": "hook-1"},
            headers=V1,
        )
    assert created["result"] == config
    assert scrub(unnamed["result"]) == {
        "taskId": "<id>",
        "id": "<id>",
        "url": "https://client.example.com/other",
    }
    assert got["result"] == config
    assert listed["result"] == {"configs": [config, unnamed["result"]]}
    assert deleted == {"jsonrpc": "2.0", "id": 1, "result": None}
    assert missing["error"]["code"] == -32001


async def test_errors(mode: str) -> None:
    agent = FakeAgent(push_notifications=False)
    async with connect(agent, mode) as http:
        url = agent.rpc_url
        not_found = await rpc(http, url, "GetTask", {"id": "nope"}, headers=V1)
        wrong_dialect = await rpc(http, url, "message/send", {"message": v1_message()}, headers=V1)
        no_version = await rpc(http, url, "SendMessage", {"message": v1_message()})
        old_version = await rpc(
            http, url, "SendMessage", {"message": v1_message()}, headers={"A2A-Version": "0.3"}
        )
        no_parts = await rpc(
            http, url, "SendMessage", {"message": v1_message() | {"parts": []}}, headers=V1
        )
        old_role = await rpc(
            http, url, "SendMessage", {"message": v1_message(role="user")}, headers=V1
        )
        unknown_skill = await rpc(
            http,
            url,
            "SendMessage",
            {"message": v1_message(), "metadata": {"skillId": "x"}},
            headers=V1,
        )
        sent = await rpc(http, url, "SendMessage", {"message": v1_message()}, headers=V1)
        task = sent["result"]["task"]
        follow_up = v1_message(messageId="m2", taskId=task["id"])
        terminal = await rpc(http, url, "SendMessage", {"message": follow_up}, headers=V1)
        push = await rpc(
            http, url, "ListTaskPushNotificationConfigs", {"taskId": task["id"]}, headers=V1
        )
        card = await rpc(http, url, "GetExtendedAgentCard", headers=V1)
        parse = await http.post(url, content=b"{not json", headers=V1)
        invalid = await http.post(url, json={"id": 3, "method": "GetTask"}, headers=V1)
        get = await http.get(url)
    assert not_found["error"] == {
        "code": -32001,
        "message": "Task not found",
        "data": error_info("TASK_NOT_FOUND", taskId="nope"),
    }
    assert wrong_dialect == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32601,
            "message": "Method not found",
            "data": error_info("METHOD_NOT_FOUND"),
        },
    }
    assert no_version["error"] == {
        "code": -32009,
        "message": "A2A version '0.3' is not supported by this handler. Expected version '1.0'.",
        "data": error_info("VERSION_NOT_SUPPORTED"),
    }
    assert old_version["error"]["code"] == -32009
    assert no_parts["error"]["code"] == -32602
    assert old_role["error"]["code"] == -32602
    assert unknown_skill["error"]["code"] == -32602
    assert terminal["error"]["code"] == -32004
    assert push["error"]["code"] == -32003
    assert card["error"]["code"] == -32004
    assert parse.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32700,
            "message": "Invalid JSON payload",
            "data": error_info("PARSE_ERROR"),
        },
    }
    assert invalid.json()["error"]["code"] == -32600
    assert invalid.json()["id"] == 3
    assert get.status_code == 405


# -- HTTP+JSON ------------------------------------------------------------------------------


async def test_rest_send_stream_get_list(mode: str) -> None:
    agent = FakeAgent(binding="rest")
    async with connect(agent, mode) as http:
        base = agent.rest_url
        sent = await http.post(base + "/message:send", json={"message": v1_message()}, headers=V1)
        task_id = sent.json()["task"]["id"]
        events = await read_sse(
            http, "POST", base + "/message:stream", json_body={"message": v1_message()}, headers=V1
        )
        got = await http.get(f"{base}/tasks/{task_id}", params={"historyLength": 0}, headers=V1)
        listed = await http.get(
            base + "/tasks", params={"pageSize": 1, "includeArtifacts": "true"}, headers=V1
        )
        card = await http.get(agent.card_url)
    assert sent.status_code == 200
    assert sent.headers["content-type"] == "application/a2a+json"
    assert scrub(sent.json()) == {"task": ECHO_TASK}
    assert [next(iter(e)) for e in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert scrub(got.json()) == {k: x for k, x in ECHO_TASK.items() if k != "history"}
    page = listed.json()
    assert (page["pageSize"], page["totalSize"], len(page["tasks"])) == (1, 2, 1)
    assert page["nextPageToken"]
    assert page["tasks"][0]["artifacts"]
    assert card.json()["supportedInterfaces"] == [
        {"url": base, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
    ]


@pytest.mark.parametrize("verb", ["POST", "GET"])
async def test_rest_cancel_subscribe_push(mode: str, verb: str) -> None:
    gate = Gate()
    agent = FakeAgent(binding="rest", skills={"gate": gate.skill}, extended_card={"name": "X"})
    async with connect(agent, mode) as http:
        base = agent.rest_url
        sent = await http.post(
            base + "/message:send",
            headers=V1,
            json={"message": v1_message(), "configuration": {"returnImmediately": True}},
        )
        task_id = sent.json()["task"]["id"]
        await gate.started.wait()
        hooks = f"{base}/tasks/{task_id}/pushNotificationConfigs"
        config = {"id": "h", "url": "https://client.example.com/hook", "token": "t"}
        created = await http.post(hooks, json=config, headers=V1)
        got = await http.get(hooks + "/h", headers=V1)
        listed = await http.get(hooks, headers=V1)
        deleted = await http.delete(hooks + "/h", headers=V1)
        card = await http.get(base + "/extendedAgentCard", headers=V1)

        async def cancel_soon() -> None:
            await wait_until(lambda: agent.streams(task_id) == 1)
            canceled = await http.post(f"{base}/tasks/{task_id}:cancel", json={}, headers=V1)
            assert canceled.json()["status"]["state"] == "TASK_STATE_CANCELED"

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_soon)
            body: dict[str, Any] | None = {} if verb == "POST" else None
            events = await read_sse(
                http, verb, f"{base}/tasks/{task_id}:subscribe", json_body=body, headers=V1
            )
        again = await http.post(f"{base}/tasks/{task_id}:cancel", json={}, headers=V1)
    assert created.json() == {**config, "taskId": task_id}
    assert got.json() == created.json()
    assert listed.json() == {"configs": [created.json()]}
    assert (deleted.status_code, deleted.json()) == (200, {})
    assert card.json()["name"] == "X"
    assert [next(iter(e)) for e in events] == ["task", "statusUpdate"]
    assert events[1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"
    assert again.status_code == 400
    assert again.json() == {
        "error": {
            "code": 400,
            "status": "FAILED_PRECONDITION",
            "message": "Task cannot be canceled",
            "details": error_info("TASK_NOT_CANCELABLE", taskId=task_id),
        }
    }


async def test_rest_errors(mode: str) -> None:
    agent = FakeAgent(binding="rest")
    async with connect(agent, mode) as http:
        base = agent.rest_url
        missing = await http.get(base + "/tasks/nope", headers=V1)
        no_version = await http.post(base + "/message:send", json={"message": v1_message()})
        invalid = await http.post(
            base + "/message:send", headers=V1, json={"message": v1_message() | {"parts": []}}
        )
        unknown = await http.post(base + "/tasks/x:pause", json={}, headers=V1)
        wrong_verb = await http.get(base + "/message:send", headers=V1)
        no_card = await http.get(base + "/extendedAgentCard", headers=V1)
        v03_path = await http.post(
            base + "/v1/message:send", json={"message": v1_message()}, headers=V1
        )
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/json"
    assert missing.json() == {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "Task not found",
            "details": error_info("TASK_NOT_FOUND", taskId="nope"),
        }
    }
    assert no_version.status_code == 400
    assert no_version.json()["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    assert invalid.status_code == 400
    assert invalid.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert (unknown.status_code, unknown.text) == (404, "Not Found")
    assert wrong_verb.status_code == 405
    assert no_card.json()["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"
    assert v03_path.status_code == 404


async def test_skill_failure_and_auto_complete(mode: str) -> None:
    agent = FakeAgent()

    @agent.skill("boom")
    async def boom(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        raise RuntimeError("exploded")

    @agent.skill("silent")
    async def silent(ctx: SkillContext) -> AsyncIterator[Emit]:
        for _ in ():
            yield status("working")

    async with connect(agent, mode) as http:
        failed = await rpc(
            http,
            agent.rpc_url,
            "SendMessage",
            {"message": v1_message(), "metadata": {"skillId": "boom"}},
            headers=V1,
        )
        done = await rpc(
            http,
            agent.rpc_url,
            "SendMessage",
            {"message": v1_message(), "metadata": {"skillId": "silent"}},
            headers=V1,
        )
    status_ = failed["result"]["task"]["status"]
    assert status_["state"] == "TASK_STATE_FAILED"
    assert status_["message"]["parts"] == [{"text": "RuntimeError: exploded"}]
    assert [str(e) for e in agent.skill_errors] == ["exploded"]
    assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
