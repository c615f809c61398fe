"""Opening a stream is bounded: a server that sends a stream's response head a byte at a time
(each byte pushing the idle limit back) is given the client's ``timeout`` for the whole head,
or ``total_timeout`` when that is shorter; each re-attach is bounded alike. On the virtual clocks,
over a socket of the test's own loop (``_raw_server``)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from a2a_anyio import A2AClient, A2ATimeoutError, TaskState

from ..unit._support import on_mock_clock
from ._raw_server import Answer, RawServer, Request, jsonrpc, sse

pytestmark = [pytest.mark.anyio, on_mock_clock()]

EVENTS = {"Content-Type": "text/event-stream"}
GAP = 0.05  # between two bytes of a trickled head
#: Enough header bytes that the head would take 800 s to come whole (httpx reads 16 KiB at most).
PAD = {"X-Pad": "p" * 16_000}
WORKING = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
DONE = {**WORKING, "status": {"state": "TASK_STATE_COMPLETED"}}


def trickled(request: Request) -> Answer:
    return Answer([sse(request, {"task": WORKING})], {**EVENTS, **PAD}, head_gap=GAP)


def agent(url: str, **options: Any) -> A2AClient:
    return A2AClient(endpoint=url + "/rpc", protocol="1.0", **options)


@pytest.mark.parametrize(
    ("options", "total", "ends_at", "which"),
    [
        pytest.param({"timeout": 1}, None, 1, "stream-open", id="the-clients-timeout"),
        pytest.param({"timeout": 10}, 0.5, 0.5, "deadline", id="a-shorter-total-timeout"),
        pytest.param({"timeout": 1}, 30, 1, "stream-open", id="a-longer-total-timeout"),
    ],
)
async def test_a_trickled_response_head_ends_at_the_open_limit(
    options: dict[str, Any], total: float | None, ends_at: float, which: str
) -> None:
    server = RawServer(trickled)
    async with server.serve() as url, agent(url, **options) as client:
        with pytest.raises(A2ATimeoutError) as info:
            async with client.stream_message("hi", total_timeout=total) as stream:
                async for _ in stream:
                    pass
        assert anyio.current_time() == pytest.approx(ends_at)
        await server.until_no_connection()
    error = info.value
    assert error.timeout == which
    if which == "stream-open":
        assert error.message == f"stream open timeout: no whole answer from {url}/rpc within 1s"


async def test_a_trickled_re_attach_ends_at_the_open_limit_and_the_task_is_polled() -> None:
    def answer(request: Request) -> Answer:
        method = json.loads(request.body)["method"]
        if method == "SendStreamingMessage":
            return Answer([sse(request, {"task": WORKING})], EVENTS)  # then a cut
        if method == "GetTask":
            return Answer([jsonrpc(request, DONE)], {"Content-Type": "application/json"})
        return trickled(request)  # SubscribeToTask

    server = RawServer(answer)
    async with server.serve() as url, agent(url, timeout=1) as client:
        async with client.stream_message("hi") as stream:
            async for _ in stream:
                pass
        assert anyio.current_time() < 2  # not the 800 s the head would take
    assert stream.task is not None and stream.task.status.state is TaskState.COMPLETED
    methods = [json.loads(r.body)["method"] for r in server.requests]
    assert methods == ["SendStreamingMessage", "SubscribeToTask", "GetTask"]
