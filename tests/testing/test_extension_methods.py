"""Extension methods: FakeAgent serves them whole or as an event stream, and
``A2AClient.call(..., on_event=fn)`` reads such a stream through the client's one SSE path.
Over 127.0.0.1 and in-process, on both backends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from anyio.from_thread import start_blocking_portal

from a2a_anyio import A2AProtocolError, A2ATimeoutError, InvalidParamsError, SyncA2AClient
from a2a_anyio.testing import AgentError, FakeAgent
from tests.unit._support import on_mock_clock

from ._helpers import client_for, connect, read_sse, rpc, rpc_body

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Progress:
    done: int
    of: int


def counting_agent(dialect: Any = "1.0") -> FakeAgent:
    agent = FakeAgent(dialect=dialect)

    @agent.method("ext/count")
    async def count(params: Any) -> AsyncIterator[Any]:
        """Streams {done, of} up to ``n``; refuses ``n`` over 10 after the first event."""
        n = params["n"]
        for done in range(1, n + 1):
            if done == 2 and n > 10:
                raise AgentError(-32602, "n is at most 10")
            yield {"done": done, "of": n}
            await anyio.lowlevel.checkpoint()

    @agent.method("ext/echo")
    def echo(params: Any) -> Any:
        return {"echo": params}

    @agent.method("ext/silent")
    async def silent(params: Any) -> AsyncIterator[Any]:
        for _ in ():
            yield None

    return agent


async def test_the_agent_serves_a_method_whole_or_as_a_stream(mode: str) -> None:
    agent = counting_agent()
    async with connect(agent, mode) as http:
        whole = await rpc(http, agent.rpc_url, "ext/echo", {"x": 1}, req_id=7)
        events = await read_sse(
            http, "POST", agent.rpc_url, json_body=rpc_body("ext/count", {"n": 2}, 8)
        )
    assert whole == {"jsonrpc": "2.0", "id": 7, "result": {"echo": {"x": 1}}}
    assert events == [
        {"jsonrpc": "2.0", "id": 8, "result": {"done": 1, "of": 2}},
        {"jsonrpc": "2.0", "id": 8, "result": {"done": 2, "of": 2}},
    ]
    assert [r.op for r in agent.requests] == ["call", "call"]


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_call_on_event_sees_each_result_and_returns_the_last(dialect: str, mode: str) -> None:
    agent = counting_agent(dialect)
    seen: list[Any] = []

    async def note(result: Any) -> None:  # async callbacks are awaited
        seen.append(result)

    async with client_for(agent, mode) as client:
        last = await client.call("ext/count", {"n": 3}, on_event=note, result_type=Progress)
        whole = await client.call("ext/echo", {"x": 1}, on_event=seen.append)
    assert seen == [
        {"done": 1, "of": 3},
        {"done": 2, "of": 3},
        {"done": 3, "of": 3},
        {"echo": {"x": 1}},  # a plain answer is its one event
    ]
    assert last == Progress(3, 3)  # the last event's result, decoded as result_type
    assert whole == {"echo": {"x": 1}}
    [streamed, plain] = agent.requests_for("call")
    for request in (streamed, plain):
        assert request.headers["accept"] == "application/json, text/event-stream"


async def test_an_error_event_is_the_calls_typed_error(mode: str) -> None:
    agent = counting_agent()
    seen: list[Any] = []
    async with client_for(agent, mode) as client:
        with pytest.raises(InvalidParamsError) as info:
            await client.call("ext/count", {"n": 11}, on_event=seen.append)
        with pytest.raises(A2AProtocolError, match="carried no result"):
            await client.call("ext/silent", None, on_event=seen.append)
    assert seen == [{"done": 1, "of": 11}]
    assert info.value.message == "n is at most 10" and info.value.method == "ext/count"
    assert info.value.request_id == agent.requests_for("call")[0].body["id"]


def stalling_agent() -> FakeAgent:
    """Serves ``ext/stall``: one event, then a stream held open in silence."""
    agent = FakeAgent()
    stalled = anyio.Event()

    @agent.method("ext/stall")
    async def stall(params: Any) -> AsyncIterator[Any]:
        yield {"started": True}
        await stalled.wait()  # never set: the server holds the stream open, silent
        yield {"done": True}

    return agent


async def test_a_streamed_call_that_falls_silent_ends_at_the_idle_limit() -> None:
    # Over real sockets: the idle limit is httpx's read timeout on the client's own
    # connections, which a virtual clock does not drive; 0.3 s of real time.
    seen: list[Any] = []
    async with client_for(stalling_agent(), "served", idle_timeout=0.3) as client:
        with pytest.raises(A2ATimeoutError) as caught:
            await client.call("ext/stall", None, on_event=seen.append, timeout=None)
    assert seen == [{"started": True}]
    assert caught.value.timeout == "stream-idle"
    assert "timeout" in caught.value.message


@on_mock_clock()
async def test_a_silent_streamed_call_ends_at_the_idle_limit_through_an_injected_client() -> None:
    # An injected client's transport (here the agent's in-process one) may not bound its
    # reads: the connection keeps the idle limit with a cancel scope of its own.
    seen: list[Any] = []
    async with client_for(stalling_agent(), "inproc", idle_timeout=30) as client:
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as caught:
            await client.call("ext/stall", None, on_event=seen.append, timeout=None)
    assert anyio.current_time() - start == pytest.approx(30)
    assert seen == [{"started": True}]
    assert caught.value.timeout == "stream-idle" and caught.value.method == "ext/stall"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_sync_facade_streams_a_call(backend: str) -> None:
    agent = counting_agent()
    seen: list[Any] = []
    with (
        start_blocking_portal(backend) as portal,  # the agent's own loop, on 127.0.0.1
        portal.wrap_async_context_manager(agent.serve()),
        SyncA2AClient(agent.url, backend=backend) as client,
    ):
        last = client.call("ext/count", {"n": 2}, on_event=seen.append, result_type=Progress)
    assert seen == [{"done": 1, "of": 2}, {"done": 2, "of": 2}]
    assert last == Progress(2, 2)


def test_a_method_of_the_dialect_cannot_be_replaced() -> None:
    agent = FakeAgent()
    with pytest.raises(ValueError, match="an A2A method"):
        agent.add_method("GetTask", lambda params: None)
    with pytest.raises(TypeError):
        agent.add_method("ext/x", "not callable")  # type: ignore[arg-type]


async def test_call_streams_a_method_of_the_dialect_too(mode: str) -> None:
    agent = FakeAgent()
    seen: list[Any] = []
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    async with client_for(agent, mode) as client:
        last = await client.call("SendStreamingMessage", {"message": message}, on_event=seen.append)
    assert "task" in seen[0]  # the raw StreamResponse JSON, as the agent sent it
    assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
