"""A cut stream re-attached (or polled) into one seamless stream; size limits on bodies."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2AConnectionError,
    A2AProtocolError,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

from ._support import RPC_URL, ScriptedBody, rpc_result, sse_response, sse_text
from .test_stream import StreamingAgent, connect, kinds, v1_chunk, v1_status, v1_task

pytestmark = pytest.mark.anyio


def completed_task() -> dict[str, Any]:
    return {
        "id": "t-1",
        "contextId": "c-1",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a-1", "parts": [{"text": "one two"}]}],
    }


async def test_eof_while_working_is_resumed_without_duplicates() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task(), v1_status("WORKING", "on it")])
    working_again = v1_status("WORKING", "on it")
    agent.stream(
        "SubscribeToTask",
        [v1_task("WORKING"), working_again, v1_chunk("one two", last=True), v1_status("COMPLETED")],
    )
    async with connect(agent) as client, client.stream_message("x") as stream:
        events = [e async for e in stream]
    assert kinds(events) == [
        "Task",
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    assert stream.resumes == 1
    assert stream.finished
    assert stream.task is not None and stream.task.status.state is TaskState.COMPLETED
    assert stream.task.text == "one two"
    assert [c["method"] for c in agent.calls] == ["SendStreamingMessage", "SubscribeToTask"]
    assert agent.calls[1]["params"] == {"id": "t-1"}
    assert all(b.closed for b in agent.bodies)


async def test_a_reset_mid_stream_is_resumed() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task()], fail=httpx.ReadError("reset"))
    agent.stream("SubscribeToTask", [v1_task("WORKING"), v1_status("COMPLETED")])
    async with connect(agent) as client:
        result = await client.stream_message("x").result()
    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED


async def test_an_agent_that_cannot_re_attach_is_polled() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task(), v1_status("WORKING")])
    agent.errors["SubscribeToTask"] = {"code": -32004, "message": "task is terminal"}
    agent.results["GetTask"] = completed_task()
    async with connect(agent) as client, client.stream_message("x") as stream:
        events = [e async for e in stream]
    last = events[-1]
    assert isinstance(last, Task) and last.status.state is TaskState.COMPLETED
    assert stream.finished and stream.task is not None and stream.task.text == "one two"
    assert [c["method"] for c in agent.calls] == [
        "SendStreamingMessage",
        "SubscribeToTask",
        "GetTask",
    ]


async def test_a_v03_resubscribe_refused_inside_its_stream_is_polled() -> None:
    agent = StreamingAgent()
    task = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "working"}}
    agent.stream("message/stream", [task])
    agent.stream(
        "tasks/resubscribe",
        lambda req_id: [
            {"jsonrpc": "2.0", "id": req_id, "error": {"code": -32004, "message": "no"}}
        ],
        raw=True,
    )
    done = {**task, "status": {"state": "completed"}}
    agent.results["tasks/get"] = done
    async with connect(agent, protocol="0.3") as client:
        result = await client.stream_message("x").result()
    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED


async def test_resume_off_reports_the_cut() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task(), v1_status("WORKING")])
    async with connect(agent, resume=False) as client:
        with pytest.raises(A2AConnectionError, match="ended before"):
            await client.stream_message("x").result()
    assert [c["method"] for c in agent.calls] == ["SendStreamingMessage"]


async def test_re_attaching_is_bounded() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task(), v1_status("WORKING")])
    agent.stream("SubscribeToTask", [v1_task("WORKING")])  # and cut again, every time
    async with connect(agent) as client:
        with pytest.raises(A2AConnectionError, match="re-attaching failed 3 times") as info:
            await client.stream_message("x").result()
    assert [c["method"] for c in agent.calls].count("SubscribeToTask") == 3
    assert kinds(info.value.events) == ["Task", "TaskStatusUpdateEvent"]


async def test_a_cut_before_any_task_cannot_be_resumed() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [], fail=httpx.ReadError("reset"))
    async with connect(agent) as client:
        with pytest.raises(A2AConnectionError):
            await client.stream_message("x").result()
    assert [c["method"] for c in agent.calls] == ["SendStreamingMessage"]


async def test_a_subscribe_is_retried_before_its_first_event() -> None:
    agent = StreamingAgent()
    answers = iter([503, 200])

    def subscribe(req_id: Any, params: Any) -> httpx.Response:
        if next(answers) == 503:
            return httpx.Response(503, text="busy")
        events = [
            rpc_result(req_id, v1_task("WORKING")),
            rpc_result(req_id, v1_status("COMPLETED")),
        ]
        return sse_response(ScriptedBody([sse_text(events).encode()]))

    agent.responders["SubscribeToTask"] = subscribe
    async with connect(agent) as client:
        result = await client.subscribe("t-1").result()
    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED


async def test_a_streaming_send_answered_503_is_not_retried() -> None:
    agent = StreamingAgent()
    agent.responders["SendStreamingMessage"] = lambda req_id, params: httpx.Response(503)
    async with connect(agent) as client:
        with pytest.raises(Exception, match="503"):
            await client.stream_message("x").result()
    assert len(agent.calls) == 1


async def test_response_size_limit() -> None:
    big = json.dumps(rpc_result(1, {"task": {**completed_task(), "metadata": {"x": "y" * 5000}}}))

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=big.encode(), headers={"content-type": "application/json"}
        )

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    async with A2AClient(endpoint=RPC_URL, http_client=http, max_response_bytes=1000) as client:
        with pytest.raises(A2AProtocolError, match=r"over 1000|exceeds 1000"):
            await client.get_task("t-1")


async def test_event_size_limit_stops_reading() -> None:
    huge_event = sse_text(
        [rpc_result(1, {"task": {**completed_task(), "metadata": {"x": "y" * 5000}}})]
    )
    chunks = [huge_event.encode()[i : i + 100] for i in range(0, len(huge_event), 100)]
    body = ScriptedBody(chunks)

    async def handler(request: httpx.Request) -> httpx.Response:
        return sse_response(body)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    async with A2AClient(endpoint=RPC_URL, http_client=http, max_event_bytes=1000) as client:
        with pytest.raises(A2AProtocolError, match="larger than 1000"):
            await client.stream_message("x").result()
    assert body.yielded <= 12  # stopped at about 1000 bytes of a 5 kB event
    assert body.closed


async def test_events_under_the_limit_pass() -> None:
    agent = StreamingAgent()
    agent.stream(
        "SendStreamingMessage",
        [v1_task(), v1_chunk("x" * 500, last=True), v1_status("COMPLETED")],
        chunk=64,
    )
    async with connect(agent, max_event_bytes=1000) as client:
        events = [e async for e in client.stream_message("x")]
    assert isinstance(events[1], TaskArtifactUpdateEvent)
    assert isinstance(events[-1], TaskStatusUpdateEvent) and events[-1].final
