"""Fault injection and recorded requests. Timing runs on the virtual clocks (in-process)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AHTTPError,
    A2AServerError,
    A2ATimeoutError,
    Task,
    TaskState,
    fan_out,
    merge_streams,
)
from a2a_anyio.testing import FakeAgent, Fault, SkillContext, artifact, status
from a2a_anyio.testing._skills import Emit
from tests.unit._support import on_mock_clock

from ._helpers import (
    V1,
    client_for,
    connect,
    read_sse,
    rpc,
    rpc_body,
    sse_payloads,
    v1_message,
    wait_until,
)

pytestmark = pytest.mark.anyio


def counting_agent(**kwargs: object) -> FakeAgent:
    agent = FakeAgent(**kwargs)  # type: ignore[arg-type]

    @agent.skill("count")
    async def count(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        for i in range(3):
            yield artifact(str(i), append=i > 0, last_chunk=i == 2)

    return agent


@on_mock_clock()
async def test_delays_on_the_mock_clock() -> None:
    agent = counting_agent(delay=2.0)
    once = agent.fault("send", delay=5.0, times=1)
    async with connect(agent, "inproc") as http:
        start = anyio.current_time()
        await rpc(http, agent.rpc_url, "SendMessage", {"message": v1_message()}, headers=V1)
        first = anyio.current_time() - start
        await rpc(http, agent.rpc_url, "SendMessage", {"message": v1_message()}, headers=V1)
        second = anyio.current_time() - start - first
        agent.fault("stream", event_delay=1.5)
        times = []
        body = rpc_body("SendStreamingMessage", {"message": v1_message()})
        async with http.stream("POST", agent.rpc_url, json=body, headers=V1) as response:
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    times.append(anyio.current_time())
    assert first == pytest.approx(7.0)
    assert second == pytest.approx(2.0)
    assert once.hits == 1
    assert once.exhausted
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(times)]
    assert gaps == [1.5] * 5  # task, working, three chunks, completed: six events


async def test_cut_after_close(mode: str) -> None:
    gate = anyio.Event()
    agent = FakeAgent()

    @agent.skill("slow")
    async def slow(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        await gate.wait()
        yield artifact("late")

    agent.fault("stream", cut_after=2, times=1)
    async with connect(agent, mode) as http:
        events = await read_sse(
            http,
            "POST",
            agent.rpc_url,
            headers=V1,
            json_body=rpc_body("SendStreamingMessage", {"message": v1_message()}),
        )
        task_id = events[0]["result"]["task"]["id"]
        assert agent.get_task(task_id).state is TaskState.WORKING  # the task goes on

        async def release() -> None:
            await wait_until(lambda: agent.streams(task_id) == 1)
            gate.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(release)
            rest = await read_sse(
                http,
                "POST",
                agent.rpc_url,
                headers=V1,
                json_body=rpc_body("SubscribeToTask", {"id": task_id}),
            )
    assert [next(iter(e["result"])) for e in events] == ["task", "statusUpdate"]
    assert next(iter(rest[0]["result"])) == "task"
    assert rest[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_client_resumes_after_a_cut(mode: str) -> None:
    agent = counting_agent()
    agent.fault("stream", cut_after=2, times=1)
    async with client_for(agent, mode) as client:
        async with client.stream_message("go") as stream:
            async for _ in stream:
                pass
        task = stream.task
    assert task is not None
    assert (task.state, task.text) == (TaskState.COMPLETED, "012")
    assert len(agent.requests_for("stream")) == 1
    assert agent.requests_for("subscribe") or agent.requests_for("get")  # it re-attached


async def test_cut_after_reset(mode: str) -> None:
    agent = counting_agent()
    agent.fault("stream", cut_after=1, cut="reset")
    async with connect(agent, mode) as http:
        body = rpc_body("SendStreamingMessage", {"message": v1_message()})
        received = b""
        with pytest.raises(httpx.RemoteProtocolError):
            async with http.stream("POST", agent.rpc_url, json=body, headers=V1) as response:
                async for chunk in response.aiter_bytes():
                    received += chunk
    assert [next(iter(e["result"])) for e in sse_payloads(received.decode())] == ["task"]


async def test_error_codes(mode: str) -> None:
    agent = FakeAgent(binding="both")
    agent.fault("send", error=-32603, message="boom", times=1)
    agent.fault("get", error=-32001)
    async with connect(agent, mode) as http:
        failed = await rpc(
            http, agent.rpc_url, "SendMessage", {"message": v1_message()}, headers=V1
        )
        ok = await rpc(http, agent.rpc_url, "SendMessage", {"message": v1_message()}, headers=V1)
        task_id = ok["result"]["task"]["id"]
        missing = await http.get(f"{agent.rest_url}/tasks/{task_id}", headers=V1)
    assert failed["error"] == {
        "code": -32603,
        "message": "boom",
        "data": [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "INTERNAL_ERROR",
                "domain": "a2a-protocol.org",
                "metadata": {},
            }
        ],
    }
    assert missing.status_code == 404
    assert missing.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"


async def test_client_sees_errors(mode: str) -> None:
    agent = FakeAgent(dialect="0.3")
    agent.fault("send", error=-32603, message="boom")
    agent.fault("get", http_status=503)
    async with client_for(agent, mode) as client:
        with pytest.raises(A2AServerError, match="boom"):
            await client.send_message("x")
        with pytest.raises(A2AHTTPError) as caught:
            await client.get_task("t")
    assert caught.value.status_code == 503
    assert len(agent.requests_for("get")) == 3  # 503 is retried for idempotent calls


@on_mock_clock()
async def test_rate_limit_with_retry_after() -> None:
    agent = FakeAgent()
    limit = agent.rate_limit(2, retry_after=3, op="get")
    async with client_for(agent, "inproc") as client:
        task = await client.send_message("x")
        assert isinstance(task, Task)
        start = anyio.current_time()
        got = await client.get_task(task.id)
        waited = anyio.current_time() - start
    assert got.id == task.id
    assert waited == pytest.approx(6.0)
    assert limit.hits == 2
    statuses = [r.op for r in agent.requests]
    assert statuses == ["card", "send", "get", "get", "get"]


async def test_rate_limit_raw(mode: str) -> None:
    agent = FakeAgent()
    agent.rate_limit(1, retry_after=7)
    async with connect(agent, mode) as http:
        limited = await http.get(agent.card_url)
        card = await http.get(agent.card_url)
    assert (limited.status_code, limited.headers["retry-after"], limited.text) == (
        429,
        "7",
        "Too Many Requests",
    )
    assert card.status_code == 200


def test_unknown_operation() -> None:
    with pytest.raises(ValueError, match="unknown operation"):
        Fault("sned")


async def test_recorded_requests(mode: str) -> None:
    agent = FakeAgent(binding="both")
    async with connect(agent, mode) as http:
        await http.get(agent.card_url)
        await rpc(
            http,
            agent.rpc_url,
            "SendMessage",
            {"message": v1_message()},
            headers={**V1, "X-Trace": "abc"},
        )
        await http.get(agent.rest_url + "/tasks", params={"pageSize": 5}, headers=V1)
        await http.get(agent.url + "/nowhere")
    card, send, listing, nowhere = agent.requests
    assert (card.method, card.path, card.op, card.body) == (
        "GET",
        "/.well-known/agent-card.json",
        "card",
        None,
    )
    assert (send.method, send.path, send.op, send.rpc_method) == (
        "POST",
        "/a2a",
        "send",
        "SendMessage",
    )
    assert send.headers["x-trace"] == "abc"
    assert send.params == {"message": v1_message()}
    assert send.body["id"] == 1
    assert (listing.path, listing.query, listing.op) == ("/rest/tasks", {"pageSize": "5"}, "list")
    assert listing.params is None
    assert (nowhere.path, nowhere.op) == ("/nowhere", None)
    assert agent.requests_for("send") == [send]
    agent.clear_requests()
    assert agent.requests == []


# -- every timeout says so -------------------------------------------------------------------


async def _timeout_of(call: Awaitable[object]) -> A2ATimeoutError:
    with pytest.raises(A2ATimeoutError) as info:
        await call
    return info.value


@on_mock_clock()
async def test_the_message_of_every_timeout_says_timeout() -> None:
    """The time limits a slow agent runs into, each from the place that builds its error:
    the call's deadline (no answer, an unfinished task, a Retry-After past it), a stream's
    idle limit and total deadline, a fan-out's deadline and a merged stream's."""
    agent = counting_agent()
    gate = anyio.Event()

    @agent.skill("slow")
    async def slow(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        await gate.wait()

    found: dict[str, A2ATimeoutError] = {}
    async with client_for(agent, "inproc", timeout=10) as client:
        agent.fault("send", delay=60, times=1)
        found["no answer"] = await _timeout_of(client.send_message("x"))
        started = await client.send_message("x", metadata={"skillId": "slow"}, blocking=False)
        assert isinstance(started, Task)
        found["unfinished"] = await _timeout_of(client.wait(started.id, timeout=5))
        agent.fault("get", http_status=503, retry_after=60, times=1)
        found["retry after"] = await _timeout_of(client.get_task("t"))
        agent.fault("stream", event_delay=30, times=2)
        found["idle"] = await _timeout_of(client.stream_message("x", idle_timeout=1).result())
        total = client.stream_message("x", idle_timeout=60, total_timeout=40)
        found["stream deadline"] = await _timeout_of(total.result())
        agent.fault("stream", delay=60, times=1)  # a fan-out streams to an agent that can
        [result] = await fan_out([client], "x", timeout=1)
        assert isinstance(result.error, A2ATimeoutError)
        found["fan-out"] = result.error
        agent.fault("stream", event_delay=30, times=1)
        async with merge_streams({"a": client.stream_message("x")}, timeout=1) as merged:
            [item] = [item async for item in merged if item.error is not None]
        assert isinstance(item.error, A2ATimeoutError)
        found["merged"] = item.error
        gate.set()
    assert {k: e.timeout for k, e in found.items()} == {
        "no answer": "deadline",
        "unfinished": "deadline",
        "retry after": "deadline",
        "idle": "stream-idle",
        "stream deadline": "deadline",
        "fan-out": "deadline",
        "merged": "deadline",
    }
    for error in found.values():
        assert "timeout" in str(error), str(error)
    assert "the task was not finished" in str(found["unfinished"])
