"""FakeAgent speaking the legacy ``tasks/send`` dialect, checked with raw httpx requests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from a2a_anyio._dialects.card import parse_card
from a2a_anyio.testing import FakeAgent, SkillContext, artifact, reply, status
from a2a_anyio.testing._skills import Emit

from ._helpers import Gate, connect, legacy_message, rpc, rpc_stream, scrub, wait_until

pytestmark = pytest.mark.anyio


def test_no_rest_binding() -> None:
    with pytest.raises(ValueError, match="only the JSON-RPC binding"):
        FakeAgent(dialect="legacy", binding="rest")


async def test_card(mode: str) -> None:
    agent = FakeAgent(dialect="legacy", auth="Bearer t")
    async with connect(agent, mode) as http:
        base = agent.url
        card = await http.get(base + "/.well-known/agent.json")
        new = await http.get(base + "/.well-known/agent-card.json")
    assert new.status_code == 404
    assert card.json() == {
        "name": "Fake Agent",
        "description": "A scriptable A2A agent for tests",
        "url": base + "/a2a",
        "version": "1.0.0",
        "capabilities": {
            "streaming": True,
            "pushNotifications": True,
            "stateTransitionHistory": False,
        },
        "authentication": {"schemes": ["Bearer"]},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Echoes the text it receives"}],
    }
    assert parse_card(card.json()).interfaces[0].protocol_version == "legacy"


async def test_send_and_subscribe_with_client_ids(mode: str) -> None:
    agent = FakeAgent(dialect="legacy")

    @agent.skill("chunks")
    async def chunks(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        yield artifact("a", name="first")
        yield artifact("b", name="second")
        yield artifact("c", append=True, last_chunk=True)

    async with connect(agent, mode) as http:
        params = {
            "id": "task-1",
            "sessionId": "s-1",
            "message": legacy_message(),
            "historyLength": 5,
        }
        sent = await rpc(http, agent.rpc_url, "tasks/send", params)
        events = await rpc_stream(
            http,
            agent.rpc_url,
            "tasks/sendSubscribe",
            {"id": "task-2", "message": legacy_message()},
        )
        got = await rpc(http, agent.rpc_url, "tasks/get", {"id": "task-2", "historyLength": 0})
    assert sent["result"] == {
        "id": "task-1",
        "sessionId": "s-1",
        "status": {"state": "completed", "timestamp": sent["result"]["status"]["timestamp"]},
        "artifacts": [
            {"name": "first", "parts": [{"type": "text", "text": "a"}], "index": 0},
            {
                "name": "second",
                "parts": [{"type": "text", "text": "b"}, {"type": "text", "text": "c"}],
                "index": 1,
            },
        ],
        "history": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
    }
    assert scrub(events) == [
        {"id": "task-2", "status": {"state": "working", "timestamp": "<ts>"}, "final": False},
        {
            "id": "task-2",
            "artifact": {"name": "first", "parts": [{"type": "text", "text": "a"}], "index": 0},
        },
        {
            "id": "task-2",
            "artifact": {"name": "second", "parts": [{"type": "text", "text": "b"}], "index": 1},
        },
        {
            "id": "task-2",
            "artifact": {
                "parts": [{"type": "text", "text": "c"}],
                "index": 1,
                "append": True,
                "lastChunk": True,
            },
        },
        {"id": "task-2", "status": {"state": "completed", "timestamp": "<ts>"}, "final": True},
    ]
    assert scrub(got["result"]) == {
        "id": "task-2",
        "sessionId": "<id>",
        "status": {"state": "completed", "timestamp": "<ts>"},
        "artifacts": sent["result"]["artifacts"],
    }


async def test_continue_reply_cancel_resubscribe_push(mode: str) -> None:
    gate = Gate()
    agent = FakeAgent(dialect="legacy")

    @agent.skill("ask")
    async def ask(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("input-required", "how many?")
        yield reply(f"ok: {ctx.text}")

    agent.add_skill("gate", gate.skill)
    async with connect(agent, mode) as http:
        url = agent.rpc_url
        asked = await rpc(http, url, "tasks/send", {"id": "t", "message": legacy_message()})
        answered = await rpc(http, url, "tasks/send", {"id": "t", "message": legacy_message("3")})
        slow = {"id": "slow", "message": legacy_message(), "metadata": {"skillId": "gate"}}

        async def start() -> None:
            await rpc(http, url, "tasks/send", slow)

        async with anyio.create_task_group() as tg:
            tg.start_soon(start)
            await gate.started.wait()
            hook = {"url": "https://client.example.com/hook", "token": "tok"}
            set_push = await rpc(
                http,
                url,
                "tasks/pushNotification/set",
                {"id": "slow", "pushNotificationConfig": hook},
            )
            get_push = await rpc(http, url, "tasks/pushNotification/get", {"id": "slow"})

            async def cancel_soon() -> None:
                await wait_until(lambda: agent.streams("slow") == 2)  # the blocking send, then us
                await rpc(http, url, "tasks/cancel", {"id": "slow"})

            tg.start_soon(cancel_soon)
            events = await rpc_stream(http, url, "tasks/resubscribe", {"id": "slow"})
        wrong = await rpc(http, url, "message/send", {"message": legacy_message()})
        no_id = await rpc(http, url, "tasks/send", {"message": legacy_message()})
    assert asked["result"]["status"]["state"] == "input-required"
    assert asked["result"]["status"]["message"] == {
        "role": "agent",
        "parts": [{"type": "text", "text": "how many?"}],
    }
    assert answered["result"]["status"]["state"] == "completed"
    assert answered["result"]["status"]["message"]["parts"] == [{"type": "text", "text": "ok: 3"}]
    assert [m["role"] for m in answered["result"]["history"]] == ["user", "agent", "user"]
    assert (
        set_push["result"] == get_push["result"] == {"id": "slow", "pushNotificationConfig": hook}
    )
    assert [(e["status"]["state"], e["final"]) for e in events] == [("canceled", True)]
    assert wrong["error"]["code"] == -32601
    assert no_id["error"]["code"] == -32602


async def test_first_reply_makes_a_task(mode: str) -> None:
    agent = FakeAgent(dialect="legacy")

    @agent.skill("hello")
    async def hello(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield reply("hello!")

    async with connect(agent, mode) as http:
        sent = await rpc(
            http, agent.rpc_url, "tasks/send", {"id": "x", "message": legacy_message()}
        )
    assert sent["result"]["id"] == "x"
    assert sent["result"]["status"]["state"] == "completed"
    assert sent["result"]["status"]["message"]["parts"] == [{"type": "text", "text": "hello!"}]
