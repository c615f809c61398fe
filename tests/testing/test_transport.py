"""The in-process streaming transport, the hypercorn server helper, agent lifecycle, skills."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from a2a_anyio import A2AClient, Task, TaskState
from a2a_anyio._asgi import Receive, Scope, Send
from a2a_anyio.testing import (
    FakeAgent,
    SkillContext,
    StreamingASGITransport,
    artifact,
    reply,
    serve_app,
    status,
)
from a2a_anyio.testing._skills import Emit

from ._helpers import V1, Gate, connect, rpc, rpc_body, v1_message, wait_until

pytestmark = pytest.mark.anyio


def running(agent: FakeAgent) -> bool:  # a call, so that mypy does not pin the flag
    return agent.is_running


def cancelled(ctx: SkillContext) -> bool:
    return ctx.cancelled


async def test_events_arrive_before_the_stream_ends(mode: str) -> None:
    gate = Gate()
    agent = FakeAgent(skills={"gate": gate.skill})
    async with connect(agent, mode) as http:
        body = rpc_body("SendStreamingMessage", {"message": v1_message()})
        lines: list[str] = []
        async with http.stream("POST", agent.rpc_url, json=body, headers=V1) as response:
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                lines.append(line)
                if len(lines) == 2:  # the snapshot and "working" came while the skill waits
                    assert not gate.opened.is_set()
                    gate.open()
    assert len(lines) == 3


async def test_leaving_a_stream_early_keeps_the_task(mode: str) -> None:
    gate = Gate()
    agent = FakeAgent(skills={"gate": gate.skill})
    async with connect(agent, mode) as http:
        body = rpc_body("SendStreamingMessage", {"message": v1_message()})
        async with http.stream("POST", agent.rpc_url, json=body, headers=V1) as response:
            assert response.status_code == 200
            await gate.started.wait()  # then leave without reading
        (task_id,) = agent.tasks
        gate.open()
        await wait_until(lambda: agent.get_task(task_id).state is TaskState.COMPLETED)


async def test_transport_lifecycle() -> None:
    agent = FakeAgent()
    client = httpx.AsyncClient(transport=agent.transport())
    with pytest.raises(RuntimeError, match="not running"):
        await client.get(agent.card_url)
    await client.aclose()
    async with httpx.AsyncClient(transport=agent.transport()) as http:
        assert running(agent)
        assert (await http.get(agent.card_url)).status_code == 200
    assert not running(agent)
    async with agent:  # running() nests: the client's transport reuses the running agent
        async with httpx.AsyncClient(transport=agent.transport()) as http:
            assert (await http.get(agent.card_url)).status_code == 200
        assert agent.is_running
    with pytest.raises(RuntimeError, match="not running"):
        agent.spawn(anyio.sleep, 0)


async def test_raw_apps_through_the_transport() -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if path == "/boom":
            raise ValueError("before the response")
        if path == "/silent":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"part", "more_body": True})
        if path == "/cut":
            raise ValueError("mid-body")
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async with anyio.create_task_group() as tg:
        transport = StreamingASGITransport(app, lambda: tg)
        async with httpx.AsyncClient(transport=transport, base_url="http://app.test") as http:
            assert (await http.get("/ok")).content == b"part"
            with pytest.raises(ValueError, match="before the response"):
                await http.get("/boom")
            with pytest.raises(httpx.RemoteProtocolError):
                await http.get("/silent")
            with pytest.raises(httpx.RemoteProtocolError):
                await http.get("/cut")


async def test_serve_app_on_127_0_0_1() -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": scope["path"].encode()})

    async with serve_app(app) as url:
        assert url.startswith("http://127.0.0.1:")
        async with httpx.AsyncClient() as http:
            assert (await http.get(url + "/hello")).text == "/hello"


async def test_stopping_the_server_ends_open_streams() -> None:
    gate = Gate()
    agent = FakeAgent(skills={"gate": gate.skill})
    lines: list[str] = []

    async def read(http: httpx.AsyncClient, url: str) -> None:
        body = rpc_body("SendStreamingMessage", {"message": v1_message()})
        async with http.stream("POST", url, json=body, headers=V1) as response:
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    lines.append(line)

    # The reader runs in a task group outside serve(): leaving serve() must end its open
    # stream, or the task group would wait for it forever.
    with anyio.fail_after(10):
        async with (
            httpx.AsyncClient() as http,
            anyio.create_task_group() as tg,
            agent.serve() as served,
        ):
            tg.start_soon(read, http, served.rpc_url)
            await wait_until(lambda: len(lines) == 2)
    assert len(lines) == 2
    assert not gate.opened.is_set()


async def test_skill_context_and_cancellation() -> None:
    seen: list[SkillContext] = []
    cleaned = anyio.Event()
    agent = FakeAgent()

    @agent.skill("inspect")
    async def inspect(ctx: SkillContext) -> AsyncIterator[Emit]:
        seen.append(ctx)
        yield status("working")
        try:
            await ctx.wait_cancelled()
            await anyio.sleep_forever()
        finally:
            cleaned.set()

    async with (
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(agent.url, http_client=http, headers={"X-Trace": "t1"}) as client,
    ):
        task = await client.send_message(
            {
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}, {"kind": "data", "data": {"a": 1}}],
            },
            metadata={"skillId": "inspect", "extra": True},
            blocking=False,
        )
        assert isinstance(task, Task)
        await wait_until(lambda: bool(seen))
        ctx = seen[0]
        assert (ctx.text, ctx.data, ctx.skill_id) == ("hi", {"a": 1}, "inspect")
        assert ctx.metadata == {"skillId": "inspect", "extra": True}
        assert ctx.headers["x-trace"] == "t1"
        assert (ctx.task_id, ctx.context_id) == (task.id, task.context_id)
        assert len(ctx.parts) == 2
        assert not cancelled(ctx)
        canceled = await client.cancel_task(task.id)
        assert canceled.state is TaskState.CANCELED
        assert cancelled(ctx)
        with anyio.fail_after(5):
            await cleaned.wait()


async def test_bad_yields_fail_the_task() -> None:
    agent = FakeAgent()

    @agent.skill("bad")
    async def bad(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield "not an event"  # type: ignore[misc]

    async with connect(agent, "inproc") as http:
        sent = await rpc(http, agent.rpc_url, "SendMessage", {"message": v1_message()}, headers=V1)
    status_ = sent["result"]["task"]["status"]
    assert status_["state"] == "TASK_STATE_FAILED"
    assert "status(), artifact() or reply()" in status_["message"]["parts"][0]["text"]


def test_helpers_validate() -> None:
    with pytest.raises(ValueError, match="unknown task state"):
        status("sleeping")
    with pytest.raises(ValueError, match="needs"):
        artifact()
    with pytest.raises(ValueError, match="needs"):
        reply()
    assert status("TASK_STATE_WORKING").state is TaskState.WORKING
    chunk = artifact(file=b"x", url=None, media_type="image/png", filename="a.png")
    assert chunk.artifact.parts[0].media_type == "image/png"
    with pytest.raises(ValueError, match="dialect"):
        FakeAgent(dialect="2.0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="binding"):
        FakeAgent(binding="grpc")  # type: ignore[arg-type]


async def test_lenient_agent_reads_any_spelling() -> None:
    strict = FakeAgent()
    lenient = FakeAgent(strict=False)
    old_style = {"role": "user", "parts": [{"kind": "text", "text": "hi"}]}
    async with connect(strict, "inproc") as a, connect(lenient, "inproc") as b:
        refused = await rpc(a, strict.rpc_url, "SendMessage", {"message": old_style}, headers=V1)
        accepted = await rpc(b, lenient.rpc_url, "SendMessage", {"message": old_style})
    assert refused["error"]["code"] == -32602
    assert accepted["result"]["task"]["artifacts"][0]["parts"] == [{"text": "hi"}]


async def test_nesting_and_serving_twice() -> None:
    agent = FakeAgent()
    async with agent, agent:
        assert running(agent)
        async with agent.serve():
            with pytest.raises(RuntimeError, match="already served"):
                async with agent.serve():
                    pass  # pragma: no cover
        assert running(agent)
    assert not running(agent)


async def test_push_config_in_a_send_to_an_agent_without_push() -> None:
    agent = FakeAgent(push_notifications=False)
    config = {"url": "https://hooks.example.com/", "token": "t"}
    async with connect(agent, "inproc") as http:
        refused = await rpc(
            http,
            agent.rpc_url,
            "SendMessage",
            {"message": v1_message(), "configuration": {"taskPushNotificationConfig": config}},
            headers=V1,
        )
        fine = await rpc(http, agent.rpc_url, "SendMessage", {"message": v1_message()}, headers=V1)
    assert refused["error"]["code"] == -32003
    assert fine["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
