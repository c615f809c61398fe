"""Per-call headers (``headers=`` on every operation) and context-local ones
(``client.request_headers``): they reach the agent on every request of the call, go over the
client's own, follow a stream's re-attaches and polls, and a block covers the calls begun in
it, in its task and the tasks it starts, and no others. Against the testing kit's FakeAgent
through its in-process transport, on the virtual clocks where a skill takes time; the origins
they are bound to are tested over sockets in tests/security/test_origins.py."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from anyio.from_thread import start_blocking_portal

from a2a_anyio import (
    A2AClient,
    AgentPool,
    Bearer,
    SyncA2AClient,
    SyncAgentPool,
    Task,
    TaskState,
    fan_out,
)
from a2a_anyio.testing import FakeAgent, RecordedRequest, SkillContext, artifact, status
from a2a_anyio.testing._skills import Emit

from ._support import RPC_URL, on_mock_clock, rpc_result

pytestmark = pytest.mark.anyio

USER = {"X-User": "u1"}
CLIENT_HEADERS = {"X-Tenant": "t", "x-user": "the client's"}


def slow_agent(**options: Any) -> FakeAgent:
    """An agent whose "slow" task works for a (virtual) second before it completes, with an
    extended card and two extension methods, one that streams."""
    agent = FakeAgent(extended_card={"description": "more"}, **options)

    @agent.skill("slow")
    async def slow(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        await anyio.sleep(1)
        yield artifact("done", last_chunk=True)
        yield status("completed")

    @agent.method("ext/count")
    async def count(params: Any) -> AsyncIterator[int]:
        for n in range(2):
            yield n

    agent.add_method("ext/echo", lambda params: params)

    return agent


SLOW = {"skillId": "slow"}


@asynccontextmanager
async def client_of(agent: FakeAgent, **options: Any) -> AsyncIterator[A2AClient]:
    async with (
        agent,
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(agent.url, http_client=http, **options) as client,
    ):
        yield client


def users(requests: list[RecordedRequest]) -> list[str | None]:
    return [r.headers.get("x-user") for r in requests]


async def _read(stream: Any) -> None:
    async with stream:
        async for _ in stream:
            pass


# Each operation, given a client and a working task ("slow") with a push config "p1".
OPERATIONS: dict[str, Callable[[A2AClient, Task], Awaitable[Any]]] = {
    "get_card": lambda c, t: c.get_card(refresh=True, headers=USER),
    "get_extended_card": lambda c, t: c.get_extended_card(headers=USER),
    "send_message": lambda c, t: c.send_message("hi", metadata=SLOW, headers=USER),
    "send_message_on_event": lambda c, t: c.send_message(
        "hi", metadata=SLOW, on_event=lambda _: None, headers=USER
    ),
    "stream_message": lambda c, t: _read(c.stream_message("hi", metadata=SLOW, headers=USER)),
    "subscribe": lambda c, t: _read(c.subscribe(t.id, headers=USER)),
    "wait": lambda c, t: c.wait(t.id, headers=USER),
    "get_task": lambda c, t: c.get_task(t.id, headers=USER),
    "list_tasks": lambda c, t: c.list_tasks(headers=USER),
    "cancel_task": lambda c, t: c.cancel_task(t.id, headers=USER),
    "create_push_config": lambda c, t: c.create_push_config(
        t.id, "https://hooks.example.com/a2a", headers=USER
    ),
    "get_push_config": lambda c, t: c.get_push_config(t.id, "p1", headers=USER),
    "list_push_configs": lambda c, t: c.list_push_configs(t.id, headers=USER),
    "delete_push_config": lambda c, t: c.delete_push_config(t.id, "p1", headers=USER),
    "call": lambda c, t: c.call("ext/echo", {"a": 1}, headers=USER),
    "call_on_event": lambda c, t: c.call("ext/count", on_event=lambda _: None, headers=USER),
    "ping": lambda c, t: c.ping(headers=USER),
}
# What each operation sends, beyond its own request: a blocking send's follow-up re-attaches.
SENT = {
    "get_card": ["card"],
    "get_extended_card": ["extended_card"],
    "send_message": ["send", "subscribe"],
    "send_message_on_event": ["stream"],
    "stream_message": ["stream"],
    "subscribe": ["subscribe"],
    "wait": ["get", "subscribe"],
    "get_task": ["get"],
    "list_tasks": ["list"],
    "cancel_task": ["cancel"],
    "create_push_config": ["push_create"],
    "get_push_config": ["push_get"],
    "list_push_configs": ["push_list"],
    "delete_push_config": ["push_delete"],
    "call": ["call"],
    "call_on_event": ["call"],
    "ping": ["card"],
}


@on_mock_clock()
@pytest.mark.parametrize("operation", list(OPERATIONS))
async def test_every_operation_sends_its_headers_over_the_clients(operation: str) -> None:
    agent = slow_agent(answers_at_once=True)  # a blocking send is followed up
    async with client_of(agent, headers=CLIENT_HEADERS) as client:
        task = await client.send_message("work", metadata=SLOW, blocking=False)
        assert isinstance(task, Task)
        await client.create_push_config(task.id, "https://hooks.example.com/a2a", config_id="p1")
        agent.clear_requests()
        await OPERATIONS[operation](client, task)
        sent = list(agent.requests)
        await client.get_task(task.id)  # the next call has the client's own again
    assert [r.op for r in sent] == SENT[operation]
    assert users(sent) == ["u1"] * len(sent)
    assert {r.headers.get("x-tenant") for r in sent} == {"t"}
    assert users(agent.requests[len(sent) :]) == ["the client's"]


async def test_a_calls_headers_go_over_the_clients_and_its_scheme_s_never_twice() -> None:
    requests: list[httpx.Request] = []

    async def handle(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        task = {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}
        return httpx.Response(200, json=rpc_result(json.loads(request.content)["id"], task))

    http = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    options: dict[str, Any] = {"auth": Bearer("client"), "headers": CLIENT_HEADERS}
    async with A2AClient(endpoint=RPC_URL, protocol="1.0", http_client=http, **options) as c:
        await c.get_task("t", headers={"X-USER": "u1", "authorization": "Bearer u1"})
        with c.request_headers({"X-Tenant": "t2"}):
            await c.get_task("t")
        await c.get_task("t")
    first, scoped, after = (r.headers for r in requests)
    assert first.get_list("x-user") == ["u1"] and first.get_list("authorization") == ["Bearer u1"]
    assert first["x-tenant"] == "t"
    assert first["content-type"] == "application/json" and first["a2a-version"] == "1.0"
    assert scoped.get_list("x-tenant") == ["t2"] and scoped["authorization"] == "Bearer client"
    assert after["x-tenant"] == "t" and after["x-user"] == "the client's"
    assert after["authorization"] == "Bearer client"


@on_mock_clock()
async def test_a_streams_re_attaches_and_polls_carry_the_headers_that_opened_it() -> None:
    agent = slow_agent()
    async with client_of(agent) as client:
        with client.request_headers(USER):
            reattached = client.stream_message("hi", metadata=SLOW)
            polled = client.stream_message("hi", metadata=SLOW, headers={"X-User": "u2"})
        # read after the block: a stream keeps the headers of the call that opened it
        agent.fault("stream", cut_after=1, times=1)  # cut: re-attached
        await _read(reattached)
        agent.fault("stream", cut_after=1, times=1)  # cut,
        agent.fault("subscribe", error=-32004, times=1)  # and the re-attach refused: polled
        await _read(polled)
        tasks = [stream.task for stream in (reattached, polled)]
        assert all(t is not None and t.status.state is TaskState.COMPLETED for t in tasks)
        await client.list_tasks()
    sent = [(r.op, r.headers.get("x-user")) for r in agent.requests]
    polls = sent.count(("get", "u2"))
    assert polls >= 1
    assert sent == [
        ("card", "u1"),
        ("stream", "u1"),
        ("subscribe", "u1"),
        ("stream", "u2"),
        ("subscribe", "u2"),
        *[("get", "u2")] * polls,
        ("list", None),  # a call begun after the block: the client's own headers
    ]


@on_mock_clock()
async def test_a_block_covers_its_calls_and_the_tasks_it_starts_and_no_others() -> None:
    agent = slow_agent()
    async with client_of(agent) as client, client_of(agent) as other:
        task = await client.send_message("hi")
        assert isinstance(task, Task)
        agent.clear_requests()
        entered, done = anyio.Event(), anyio.Event()

        async def get(c: A2AClient, tag: int) -> None:
            await c.get_task(task.id, history_length=tag)

        async def inside() -> None:
            with client.request_headers({"X-User": "outer", "X-Team": "a"}):
                await get(client, 1)
                with client.request_headers({"X-User": "inner"}):
                    await client.get_task(task.id, history_length=2, headers={"X-Trace": "x"})
                async with anyio.create_task_group() as group:
                    group.start_soon(get, client, 3)  # a task started in the block
                await get(other, 4)  # another client: not its block
                entered.set()
                await done.wait()  # the block stays open while the task outside calls
            await get(client, 6)  # after the block

        async def outside() -> None:
            await entered.wait()
            await get(client, 5)
            done.set()

        async with anyio.create_task_group() as group:
            group.start_soon(inside)
            group.start_soon(outside)
    seen = {
        r.params["historyLength"]: (r.headers.get("x-user"), r.headers.get("x-team"))
        for r in agent.requests
        if r.op == "get"
    }
    assert seen == {
        1: ("outer", "a"),
        2: ("inner", "a"),
        3: ("outer", "a"),
        4: (None, None),
        5: (None, None),
        6: (None, None),
    }
    assert [r.headers.get("x-trace") for r in agent.requests if r.headers.get("x-trace")] == ["x"]


@pytest.mark.parametrize(
    ("headers", "error", "says"),
    [
        ({"X-Key": "a\r\nX-Evil: 1"}, ValueError, "headers['X-Key'] holds a character"),
        ({"X-Key": "caf\u00e9"}, ValueError, "headers['X-Key'] holds a character"),
        ({"Bad Name": "v"}, ValueError, "not an HTTP token"),
        ({"content-type": "text/plain"}, ValueError, "cannot set 'content-type'"),
        ({"A2A-Version": "0.3"}, ValueError, "cannot set 'A2A-Version'"),
        ({"Accept": "*/*"}, ValueError, "the client sets it for the protocol"),
        ([("X-Key", "v")], TypeError, "must be a mapping"),
    ],
)
async def test_headers_a_request_cannot_carry_are_refused(
    headers: Any, error: type[Exception], says: str
) -> None:
    agent = slow_agent()
    says = re.escape(says)
    async with client_of(agent) as client:
        with pytest.raises(error, match=says):
            await client.get_task("t", headers=headers)
        with pytest.raises(error, match=says.replace("headers", "request_headers")):
            client.request_headers(headers)
        with pytest.raises(error, match=says):
            client.stream_message("hi", headers=headers)
        with pytest.raises(error, match=says):
            await fan_out([client], "hi", headers=headers)
    with pytest.raises(error, match=says):
        A2AClient(agent.url, headers=headers)
    assert agent.requests == []


async def test_a_pool_sends_and_fans_out_with_the_calls_headers() -> None:
    agent = FakeAgent()
    async with (
        agent,
        httpx.AsyncClient(transport=agent.transport()) as http,
        AgentPool(http_client=http, headers={"X-Tenant": "t"}) as pool,
    ):
        assert await pool.send(agent.url, text="hi", headers=USER) == {"text": "hi"}
        [result] = await pool.fan_out([agent.url], "hi", headers={"X-User": "u2"})
        assert result.ok
    assert users(agent.requests) == ["u1", "u1", "u2"]  # the card, then each send
    assert {r.headers["x-tenant"] for r in agent.requests} == {"t"}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_sync_facade_takes_headers_and_the_calling_threads_block(backend: str) -> None:
    agent = FakeAgent()
    with (
        start_blocking_portal(backend) as server,  # the agent on 127.0.0.1, in a thread
        server.wrap_async_context_manager(agent.serve()),
        SyncA2AClient(agent.url, backend=backend) as client,
    ):
        task = client.send_message("hi", headers=USER)
        assert isinstance(task, Task)

        def elsewhere() -> None:  # another thread, while the block below is open
            client.get_task(task.id, history_length=3)

        with client.request_headers({"X-User": "u2"}):
            client.get_task(task.id, history_length=1)
            with client.stream_message("hi") as stream:
                assert stream.result().status.state is TaskState.COMPLETED  # type: ignore[union-attr]
            thread = threading.Thread(target=elsewhere)
            thread.start()
            thread.join()
            client.get_task(task.id, history_length=2, headers={"X-User": "u3"})
        client.get_task(task.id, history_length=4)
    assert [(r.op, r.headers.get("x-user")) for r in agent.requests] == [
        ("card", "u1"),
        ("send", "u1"),
        ("get", "u2"),
        ("stream", "u2"),
        ("get", None),
        ("get", "u3"),
        ("get", None),
    ]
    assert [r.params.get("historyLength") for r in agent.requests if r.op == "get"] == [1, 3, 2, 4]
    with (
        start_blocking_portal(backend) as server,
        server.wrap_async_context_manager(agent.serve()),
        SyncAgentPool(backend=backend) as pool,
    ):
        assert pool.send(agent.url, text="hi", headers=USER) == {"text": "hi"}
    assert users(agent.requests[-2:]) == ["u1", "u1"]
