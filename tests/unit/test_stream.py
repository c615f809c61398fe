"""MessageStream over streamed MockTransport bodies: framing, ends, errors, timeouts, release."""

from __future__ import annotations

import gc
import json
import warnings
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2AConnectionError,
    A2AHTTPError,
    A2AProtocolError,
    A2ATimeoutError,
    DataPart,
    Message,
    MessageStream,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)

from ._support import (
    RPC_URL,
    FakeAgent,
    ScriptedBody,
    causes,
    drain,
    load_frame,
    on_mock_clock,
    rpc_error_obj,
    rpc_result,
    split_chunks,
    sse_response,
    sse_text,
)

pytestmark = pytest.mark.anyio

# -- v1.0 results ---------------------------------------------------------------------------------


def v1_task(state: str = "SUBMITTED") -> dict[str, Any]:
    return {"task": {"id": "t-1", "contextId": "c-1", "status": {"state": f"TASK_STATE_{state}"}}}


def v1_status(state: str, text: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"state": f"TASK_STATE_{state}"}
    if text is not None:
        status["message"] = {"messageId": "s", "role": "ROLE_AGENT", "parts": [{"text": text}]}
    return {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": status}}


def v1_chunk(text: str, *, append: bool = False, last: bool = False) -> dict[str, Any]:
    return {
        "artifactUpdate": {
            "taskId": "t-1",
            "contextId": "c-1",
            "artifact": {"artifactId": "a", "parts": [{"text": text}]},
            "append": append,
            "lastChunk": last,
        }
    }


V1_HAPPY = [
    v1_task(),
    v1_status("WORKING", "on it"),
    v1_chunk("one"),
    v1_chunk(" two", append=True),
    v1_chunk(" three", append=True, last=True),
    v1_status("COMPLETED"),
]

# -- v0.3 results ---------------------------------------------------------------------------------


def v03_task(state: str = "submitted") -> dict[str, Any]:
    return {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": state}}


def v03_status(state: str, final: bool) -> dict[str, Any]:
    return {
        "kind": "status-update",
        "taskId": "t-1",
        "contextId": "c-1",
        "status": {"state": state},
        "final": final,
    }


def v03_chunk(text: str, *, append: bool = False) -> dict[str, Any]:
    return {
        "kind": "artifact-update",
        "taskId": "t-1",
        "contextId": "c-1",
        "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": text}]},
        "append": append,
    }


# -- plumbing -------------------------------------------------------------------------------------

Script = Callable[[Any], list[Any]]  # request id -> JSON-RPC payloads to stream


class StreamingAgent(FakeAgent):
    """A FakeAgent whose streaming methods answer with a ScriptedBody built per request."""

    def __init__(self) -> None:
        super().__init__(None)
        self.bodies: list[ScriptedBody] = []

    def stream(
        self,
        method: str,
        results: list[Any] | Callable[[Any], list[Any]],
        *,
        chunk: int | None = None,
        crlf: bool = False,
        multiline: bool = False,
        pings: bool = False,
        raw: bool = False,
        **body_options: Any,
    ) -> None:
        def respond(req_id: Any, params: Any) -> httpx.Response:
            items = results(req_id) if callable(results) else results
            payloads = items if raw else [rpc_result(req_id, r) for r in items]
            text = sse_text(payloads, crlf=crlf, multiline=multiline, pings=pings)
            chunks = split_chunks(text, chunk) if chunk else [e.encode() for e in _events_of(text)]
            body = ScriptedBody(chunks, **body_options)
            self.bodies.append(body)
            return sse_response(body)

        self.responders[method] = respond

    @property
    def body(self) -> ScriptedBody:
        [body] = self.bodies
        return body


def _events_of(text: str) -> list[str]:
    """One chunk per event (the separator stays with its event)."""
    sep = "\r\n\r\n" if "\r\n" in text else "\n\n"
    parts = text.split(sep)
    return [p + sep for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


@asynccontextmanager
async def connect(
    agent: FakeAgent, protocol: str = "1.0", **options: Any
) -> AsyncIterator[A2AClient]:
    async with (
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(endpoint=RPC_URL, protocol=protocol, http_client=http, **options) as client,
    ):
        yield client


def kinds(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]


# -- the happy paths ------------------------------------------------------------------------------


async def test_async_with_and_async_for() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY)
    async with connect(agent, keep_events=None) as client:
        async with client.stream_message("write") as stream:
            assert isinstance(stream, MessageStream)
            events = [event async for event in stream]
            assert stream.finished
            assert agent.body.closed
        task = stream.task
    assert kinds(events) == [
        "Task",
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    assert stream.events == events
    assert task is not None
    assert (task.id, task.state, task.text) == ("t-1", TaskState.COMPLETED, "one two three")
    [request] = agent.rpc_requests
    assert request.headers["accept"] == "text/event-stream"
    assert request.headers["A2A-Version"] == "1.0"
    assert agent.calls[0]["method"] == "SendStreamingMessage"
    assert agent.calls[0]["params"]["message"]["parts"] == [{"text": "write"}]


async def test_plain_async_for_releases_on_the_final_event() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY, hang=True)
    async with connect(agent) as client:
        stream = client.stream_message("write")
        states = []
        async for event in stream:
            if isinstance(event, TaskStatusUpdateEvent):
                states.append(event.status.state)
        assert states == [TaskState.WORKING, TaskState.COMPLETED]
        assert agent.body.closed
        assert agent.body.finally_ran
        assert [e async for e in stream] == []  # done stays done


async def test_a_plain_async_for_left_by_break_holds_the_connection_until_aclose() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY, hang=True)
    async with connect(agent) as client:
        stream = client.stream_message("write")
        async for _ in stream:
            break
        assert not agent.body.closed  # a loop's break does not close an iterator
        await stream.aclose()
        assert agent.body.closed


async def test_a_stream_dropped_open_warns_naming_the_agent() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY, hang=True)
    async with connect(agent) as client:
        stream = client.stream_message("write")
        async for _ in stream:
            break
        with pytest.warns(ResourceWarning, match=f"unclosed stream of {RPC_URL}") as warned:
            del stream  # its last reference: collected at once
        assert len(warned) == 1

        async with client.stream_message("write") as closed:
            async for _ in closed:
                break
        unopened = client.stream_message("write")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            del closed, unopened
            gc.collect()


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
@pytest.mark.parametrize("multiline", [False, True], ids=["oneline", "multiline"])
async def test_framing(chunk: int, crlf: bool, multiline: bool) -> None:
    agent = StreamingAgent()
    agent.stream(
        "SendStreamingMessage", V1_HAPPY, chunk=chunk, crlf=crlf, multiline=multiline, pings=True
    )
    text = sse_text(
        [rpc_result(1, r) for r in V1_HAPPY], crlf=crlf, multiline=multiline, pings=True
    )
    assert ": ping" in text
    if multiline:
        assert text.count("data: ") > 2 * len(V1_HAPPY)
    async with (
        connect(agent, keep_events=None) as client,
        client.stream_message("write") as stream,
    ):
        result = await stream.result()
    assert isinstance(result, Task)
    assert result.text == "one two three"
    assert len(stream.events) == len(V1_HAPPY)
    assert all(e.raw is not None for e in stream.events)


async def test_v1_stream_ends_after_a_terminal_state_even_if_the_server_goes_on() -> None:
    agent = StreamingAgent()
    agent.stream(
        "SendStreamingMessage",
        [v1_task(), v1_status("FAILED", "broken"), v1_status("WORKING"), v1_chunk("late")],
    )
    async with connect(agent) as client, client.stream_message("x") as stream:
        events = [e async for e in stream]
        body = agent.body
        assert body.closed
        assert body.finally_ran
        assert body.yielded == 4  # read to its end (for the connection), not delivered
    assert kinds(events) == ["Task", "TaskStatusUpdateEvent"]
    assert stream.task is not None
    assert stream.task.state is TaskState.FAILED


@pytest.mark.parametrize("state", ["INPUT_REQUIRED", "AUTH_REQUIRED", "REJECTED", "CANCELED"])
async def test_v1_interrupted_and_terminal_states_end_the_stream(state: str) -> None:
    agent = StreamingAgent()
    agent.stream(
        "SendStreamingMessage", [v1_task(), v1_status(state), v1_status("WORKING")], hang=True
    )
    async with connect(agent) as client:
        events = [e async for e in client.stream_message("x")]
    assert len(events) == 2
    assert agent.body.closed


async def test_v1_terminal_task_snapshot_ends_the_stream() -> None:
    agent = StreamingAgent()
    agent.stream("SubscribeToTask", [v1_task("COMPLETED"), v1_status("WORKING")], hang=True)
    async with connect(agent) as client, client.subscribe("t-1") as stream:
        events = [e async for e in stream]
    assert kinds(events) == ["Task"]
    assert agent.calls[0] == {
        "jsonrpc": "2.0",
        "id": agent.calls[0]["id"],
        "method": "SubscribeToTask",
        "params": {"id": "t-1"},
    }


async def test_v03_stream_ends_on_final_true() -> None:
    agent = StreamingAgent()
    agent.stream(
        "message/stream",
        [
            v03_task(),
            v03_status("working", False),
            v03_chunk("a"),
            v03_chunk("b", append=True),
            v03_status("input-required", True),
            v03_status("working", False),
        ],
        hang=True,
    )
    async with connect(agent, "0.3") as client:
        async with client.stream_message("x") as stream:
            events = [e async for e in stream]
        assert agent.body.closed
    assert len(events) == 5
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.final
    assert stream.task is not None
    assert (stream.task.state, stream.task.text) == (TaskState.INPUT_REQUIRED, "ab")
    assert agent.calls[0]["method"] == "message/stream"


async def test_v03_non_final_working_status_does_not_end() -> None:
    agent = StreamingAgent()
    agent.stream(
        "message/stream",
        [v03_task("working"), v03_status("working", False), v03_status("completed", True)],
    )
    async with connect(agent, "0.3") as client:
        events = [e async for e in client.stream_message("x")]
    assert len(events) == 3


async def test_message_reply_ends_the_stream() -> None:
    agent = StreamingAgent()
    reply = {"message": {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}
    agent.stream("SendStreamingMessage", [reply, v1_status("WORKING")], hang=True)
    async with connect(agent) as client, client.stream_message("x") as stream:
        result = await stream.result()
    assert isinstance(result, Message)
    assert result.text == "hi"
    assert stream.message is result
    assert stream.task is None


CLOSED_EARLY = (
    "the stream was closed before its end: call result() inside its block, before it is closed"
)


@pytest.mark.parametrize("how", ["block-left", "aclose", "never-read"])
async def test_result_of_a_stream_closed_before_its_end_says_so(how: str) -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY)
    async with connect(agent) as client:
        if how == "block-left":
            async with client.stream_message("x") as stream:
                async for _ in stream:
                    break  # the task is still submitted
        else:
            stream = client.stream_message("x")
            if how == "aclose":
                await stream.__anext__()
            await stream.aclose()
        with pytest.raises(RuntimeError) as info:
            await stream.result()
    assert str(info.value) == CLOSED_EARLY
    assert not stream.finished


async def test_result_after_the_block_of_a_stream_read_to_its_end() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY)
    async with connect(agent) as client:
        async with client.stream_message("x") as stream:
            async for _ in stream:
                pass
        result = await stream.result()  # the end was read: the result stands
    assert isinstance(result, Task)
    assert result.state is TaskState.COMPLETED


async def test_result_consumes_the_rest() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY)
    async with connect(agent, keep_events=None) as client:
        stream = client.stream_message("x")
        first = await stream.__anext__()
        assert isinstance(first, Task)
        result = await stream.result()
    assert isinstance(result, Task)
    assert result.state is TaskState.COMPLETED
    assert len(stream.events) == len(V1_HAPPY)


# -- recorded streams ----------------------------------------------------------------------------


def _replay(version: str, name: str) -> Callable[[Any], list[Any]]:
    """The recorded payloads of a frame, with the JSON-RPC id of the live request."""
    from ._support import sse_payloads

    payloads = sse_payloads(load_frame(version, name)["response"]["sse"])

    def script(req_id: Any) -> list[Any]:
        return [{**p, "id": req_id} for p in payloads]

    return script


@pytest.mark.parametrize(
    ("version", "name", "n_events", "state"),
    [
        ("v1_0", "stream_message", 6, TaskState.COMPLETED),
        ("v1_0", "stream_input_required", 2, TaskState.INPUT_REQUIRED),
        ("v1_0", "subscribe", 2, TaskState.CANCELED),
        ("v0_3", "stream_message", 6, TaskState.COMPLETED),
        ("v0_3", "stream_input_required", 2, TaskState.INPUT_REQUIRED),
        ("v0_3", "subscribe", 2, TaskState.CANCELED),
    ],
)
async def test_recorded_streams(version: str, name: str, n_events: int, state: TaskState) -> None:
    agent = StreamingAgent()
    protocol = "1.0" if version == "v1_0" else "0.3"
    method = {"stream": "SendStreamingMessage" if protocol == "1.0" else "message/stream"}
    method["subscribe"] = "SubscribeToTask" if protocol == "1.0" else "tasks/resubscribe"
    op = "subscribe" if name == "subscribe" else "stream"
    agent.stream(method[op], _replay(version, name), raw=True, chunk=5, crlf=True)
    async with connect(agent, protocol, keep_events=None) as client:
        stream = client.subscribe("t") if op == "subscribe" else client.stream_message("x")
        async with stream:
            result = await stream.result()
    assert isinstance(result, Task)
    assert result.state is state
    assert len(stream.events) == n_events
    assert stream.finished
    if name == "stream_message":
        assert result.text == "part 1 part 2 part 3"


async def test_recorded_message_reply() -> None:
    agent = StreamingAgent()
    agent.stream(
        "SendStreamingMessage", _replay("v1_0", "stream_message_reply"), raw=True, chunk=11
    )
    async with connect(agent) as client, client.stream_message("x") as stream:
        result = await stream.result()
    assert isinstance(result, Message)
    assert result.text == "pong: message via stream"


async def test_recorded_v03_error_event() -> None:
    agent = StreamingAgent()
    agent.stream("tasks/resubscribe", _replay("v0_3", "error_subscribe_terminal"), raw=True)
    async with connect(agent, "0.3") as client:
        with pytest.raises(UnsupportedOperationError) as info:
            async with client.subscribe("t") as stream:
                await stream.result()
    assert info.value.events == []
    assert agent.body.closed


# -- failures ----------------------------------------------------------------------------------


async def test_error_event_raises_with_the_events_before_it() -> None:
    agent = StreamingAgent()
    agent.stream(
        "SendStreamingMessage",
        lambda req_id: [
            rpc_result(req_id, v1_task()),
            rpc_result(req_id, v1_status("WORKING")),
            rpc_error_obj(
                req_id,
                -32001,
                "Task vanished",
                [{"@type": "google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND"}],
            ),
            rpc_result(req_id, v1_status("COMPLETED")),
        ],
        raw=True,
        hang=True,
    )
    received: list[Any] = []
    async with connect(agent) as client:
        with pytest.raises(TaskNotFoundError) as info:
            await drain(client.stream_message("x"), received)
        assert agent.body.closed
    err = info.value
    assert kinds(err.events) == ["Task", "TaskStatusUpdateEvent"]
    assert err.events == received
    assert err.reason == "TASK_NOT_FOUND"
    assert err.method == "SendStreamingMessage"
    assert err.agent == RPC_URL


async def test_eof_before_a_final_event() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task(), v1_status("WORKING")])
    async with connect(agent) as client:
        with pytest.raises(A2AConnectionError, match="ended before") as info:
            async with client.stream_message("x") as stream:
                await stream.result()
    assert type(info.value) is A2AConnectionError
    assert kinds(info.value.events) == ["Task", "TaskStatusUpdateEvent"]
    assert info.value.retryable


async def test_connection_reset_mid_stream() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task()], fail=httpx.ReadError("reset"))
    async with connect(agent) as client:
        with pytest.raises(A2AConnectionError) as info:
            async with client.stream_message("x") as stream:
                await stream.result()
    assert isinstance(causes(info.value)[-1], httpx.ReadError)
    assert kinds(info.value.events) == ["Task"]


@pytest.mark.parametrize(
    "payload",
    [
        "not json at all",
        json.dumps({"jsonrpc": "2.0", "id": 999, "result": v1_task()}),
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"weird": 1}}),
    ],
    ids=["not-json", "wrong-id", "bad-shape"],
)
async def test_bad_events_are_protocol_errors(payload: str) -> None:
    async def handle(request: httpx.Request) -> httpx.Response:
        body = ScriptedBody([f"data: {payload}\n\n".encode()], hang=True)
        bodies.append(body)
        return sse_response(body)

    bodies: list[ScriptedBody] = []
    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(handle)) as http,
        A2AClient(endpoint=RPC_URL, http_client=http) as client,
    ):
        with pytest.raises(A2AProtocolError):
            async with client.stream_message("x") as stream:
                await stream.result()
    assert bodies[0].closed


async def test_non_sse_jsonrpc_error_answer() -> None:
    agent = StreamingAgent()
    agent.errors["SendStreamingMessage"] = {"code": -32004, "message": "streaming is off"}
    async with connect(agent) as client:
        with pytest.raises(UnsupportedOperationError, match="streaming is off") as info:
            async with client.stream_message("x"):
                raise AssertionError("the block must not run")
        assert info.value.events == []
        with pytest.raises(UnsupportedOperationError):
            async for _ in client.stream_message("x"):
                pass


async def test_non_sse_plain_result_is_one_event() -> None:
    agent = StreamingAgent()
    agent.results["SendStreamingMessage"] = v1_task("COMPLETED")
    async with connect(agent) as client, client.stream_message("x") as stream:
        events = [e async for e in stream]
    assert kinds(events) == ["Task"]
    assert stream.finished


async def test_non_sse_http_error() -> None:
    async def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, html="<html>down for maintenance</html>")

    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(handle)) as http,
        A2AClient(endpoint=RPC_URL, http_client=http) as client,
    ):
        with pytest.raises(A2AHTTPError) as info:
            async with client.stream_message("x"):
                pass
    assert info.value.status_code == 503
    assert info.value.retryable


# -- time -----------------------------------------------------------------------------------------


@on_mock_clock()
async def test_idle_timeout() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task(), v1_status("WORKING")], hang=True)
    async with connect(agent, idle_timeout=30) as client:
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            await drain(client.stream_message("x"))
        assert anyio.current_time() - start == pytest.approx(30)
    assert info.value.timeout == "stream-idle"
    assert kinds(info.value.events) == ["Task", "TaskStatusUpdateEvent"]
    assert agent.body.closed
    assert agent.body.finally_ran


@on_mock_clock()
async def test_idle_timeout_per_stream_overrides_the_client() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY, gap=20)
    async with connect(agent, idle_timeout=10) as client:
        start = anyio.current_time()
        result = await client.stream_message("x", idle_timeout=25).result()
        assert anyio.current_time() - start == pytest.approx(20 * len(V1_HAPPY))
    assert isinstance(result, Task)
    assert result.state is TaskState.COMPLETED


@on_mock_clock()
async def test_slow_but_steady_stream_within_the_idle_limit() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY, gap=9)
    async with connect(agent, idle_timeout=10) as client:
        result = await client.stream_message("x").result()
    assert isinstance(result, Task)
    assert result.text == "one two three"


@on_mock_clock()
async def test_total_deadline() -> None:
    agent = StreamingAgent()
    agent.stream(
        "SendStreamingMessage",
        [v1_task(), v1_status("WORKING"), v1_status("WORKING"), v1_status("COMPLETED")],
        gap=5,
    )
    async with connect(agent, idle_timeout=10) as client:
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            await drain(client.stream_message("x", total_timeout=12))
        assert anyio.current_time() - start == pytest.approx(12)
    assert info.value.timeout == "deadline"
    assert len(info.value.events) == 2
    assert agent.body.closed


@on_mock_clock()
async def test_a_total_deadline_a_fan_outs_scope_keeps_sooner_makes_no_scope() -> None:
    from a2a_anyio._deadline import held

    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task(), v1_status("WORKING")], gap=5, hang=True)
    async with connect(agent, idle_timeout=None) as client:
        with anyio.move_on_after(8) as around, held(around):
            stream = client.stream_message("x", total_timeout=12)
            async with stream:
                await stream.__anext__()
                assert not stream._bounded()  # the fan-out's scope ends it first
                await drain(stream)
        assert around.cancelled_caught and anyio.current_time() == pytest.approx(8)
        # Its own limit the sooner: its own scope, and its own error.
        with anyio.move_on_after(20) as around, held(around):
            stream = client.stream_message("x", total_timeout=7)
            with pytest.raises(A2ATimeoutError) as info:
                async with stream:
                    await stream.__anext__()
                    assert stream._bounded()
                    await drain(stream)
        assert info.value.timeout == "deadline"


@on_mock_clock()
async def test_deadline_also_covers_the_response_headers() -> None:
    async def handle(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(100)
        raise AssertionError

    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(handle)) as http,
        A2AClient(endpoint=RPC_URL, http_client=http, idle_timeout=None) as client,
    ):
        with pytest.raises(A2ATimeoutError) as info:
            async with client.stream_message("x", total_timeout=7):
                pass
    assert info.value.timeout == "deadline"


# -- release ---------------------------------------------------------------------------------------


async def test_leaving_the_block_early_closes_at_once() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY[:3], hang=True)
    async with connect(agent) as client:
        async with client.stream_message("x") as stream:
            first = await stream.__anext__()
            assert isinstance(first, Task)
            assert agent.body.is_open()
        assert agent.body.closed
        assert agent.body.finally_ran
        assert not stream.finished
        assert [e async for e in stream] == []
        assert stream.task is not None
        assert stream.task.state is TaskState.SUBMITTED


async def test_break_then_aclose_releases() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY, hang=True)
    async with connect(agent) as client:
        stream = client.stream_message("x")
        async for event in stream:
            if isinstance(event, TaskArtifactUpdateEvent):
                break
        assert agent.body.is_open()
        await stream.aclose()
        assert agent.body.closed
        await stream.aclose()


@on_mock_clock()
async def test_users_cancel_scope_releases_the_stream() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task()], hang=True)
    async with connect(agent, idle_timeout=None) as client:
        with anyio.move_on_after(5) as scope:
            async with client.stream_message("x") as stream:
                async for _ in stream:
                    pass
        assert scope.cancelled_caught
        assert agent.body.closed
        assert agent.body.finally_ran


# -- how many events a stream keeps ---------------------------------------------------------------


def long_stream(chunks: int) -> list[dict[str, Any]]:
    tokens = [v1_chunk(f" {i}", append=i > 0) for i in range(chunks)]
    return [v1_task(), *tokens, v1_status("COMPLETED")]


@pytest.mark.parametrize(("keep", "kept"), [(None, 252), (100, 100), (3, 3), (0, 0)])
async def test_keep_events_bounds_what_the_stream_holds(keep: int | None, kept: int) -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", long_stream(250))
    options: dict[str, Any] = {} if keep == 3 else {"keep_events": keep}  # 3: the default
    async with connect(agent, **options) as client, client.stream_message("x") as stream:
        delivered = [event async for event in stream]
    assert len(delivered) == 252
    assert stream.events == delivered[len(delivered) - kept :]
    # the task still holds everything the events added up to
    assert stream.task is not None
    assert stream.task.text == "".join(f" {i}" for i in range(250))


async def test_an_error_carries_the_kept_events() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", long_stream(10)[:-1])
    async with connect(agent, keep_events=4, resume=False) as client:
        with pytest.raises(A2AConnectionError) as info:
            await drain(client.stream_message("x"))
    assert kinds(info.value.events) == ["TaskArtifactUpdateEvent"] * 4
    last = info.value.events[-1]
    assert isinstance(last, TaskArtifactUpdateEvent)
    assert last.artifact.text == " 9"


class Payload(dict[str, Any]):
    """A data part's value that can be watched with a weak reference."""


PROGRESS = "application/x-progress"


def v1_progress(step: int) -> dict[str, Any]:
    """A WORKING status update whose message holds a ``PROGRESS`` data part."""
    part = {"data": {"step": step}, "mediaType": PROGRESS}
    message = {"messageId": f"m{step}", "role": "ROLE_AGENT", "parts": [part]}
    status = {"state": "TASK_STATE_WORKING", "message": message}
    return {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": status}}


async def test_the_events_kept_are_held_as_received_and_typed_again_when_asked() -> None:
    agent = StreamingAgent()
    agent.stream(
        "SendStreamingMessage", [v1_task(), *map(v1_progress, (1, 2)), v1_status("COMPLETED")]
    )
    async with (
        connect(agent, types={PROGRESS: Payload}) as client,
        client.stream_message("x") as stream,
    ):
        await stream.__anext__()
        first = await stream.__anext__()
        assert isinstance(first, TaskStatusUpdateEvent) and first.status.message is not None
        part = first.status.message.parts[0]
        assert isinstance(part, DataPart)
        payload = part.data
        assert isinstance(payload, Payload)
        handed_out = weakref.ref(payload)
        del first, part, payload
        async for _ in stream:
            pass
    gc.collect()
    # Not the objects it handed out (the task holds the latest status, not this one)...
    assert handed_out() is None
    # ...but their data, typed again when asked: the latest 3 by default, registered types too.
    kept = stream.events
    sent = [*map(v1_progress, (1, 2)), v1_status("COMPLETED")]
    assert [e.raw for e in kept] == [event["statusUpdate"] for event in sent]
    assert kinds(kept) == ["TaskStatusUpdateEvent"] * 3
    first_kept = kept[0]
    assert isinstance(first_kept, TaskStatusUpdateEvent) and first_kept.status.message is not None
    kept_part = first_kept.status.message.parts[0]
    assert isinstance(kept_part, DataPart)
    assert isinstance(kept_part.data, Payload)
    assert kept_part.data == Payload(step=1)
    assert stream.events == kept  # equal each time, made anew


async def test_an_open_stream_lets_go_of_the_message_it_sent() -> None:
    # An idle stream holds what it reads on with, not the request that opened it.
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task()], hang=True)
    payload = Payload(report="x" * 1000)
    sent = weakref.ref(payload)
    async with (
        connect(agent) as client,
        client.stream_message(Message.user(data=payload)) as stream,
    ):
        del payload
        await stream.__anext__()
        gc.collect()
        assert sent() is None
        assert stream.task is not None


async def test_an_error_carries_the_latest_three_events_by_default() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", long_stream(10)[:-1])  # cut before the end
    async with connect(agent, resume=False) as client:
        with pytest.raises(A2AConnectionError) as info:
            await drain(client.stream_message("x"))
    events = info.value.events
    assert [e.artifact.text for e in events if isinstance(e, TaskArtifactUpdateEvent)] == [
        " 7",
        " 8",
        " 9",
    ]
    assert len(events) == 3


async def test_a_finished_stream_lets_go_of_what_it_sent() -> None:
    # A fan-out holds thousands of finished streams: each keeps its task and events, not the
    # request, its message or the ways it had of reading on.
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", V1_HAPPY)
    payload = Payload(report="x" * 1000)
    sent = weakref.ref(payload)
    async with connect(agent, keep_events=None) as client:
        stream = client.stream_message(Message.user(data=payload))
        del payload
        await drain(stream)
        gc.collect()
        assert sent() is None
        assert stream.task is not None
        assert stream.task.status.state is TaskState.COMPLETED
        assert len(stream.events) == len(V1_HAPPY)


def test_keep_events_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="keep_events"):
        A2AClient(endpoint=RPC_URL, keep_events=-1)
