"""A stream's memory is bounded in bytes, not only in events.

A hostile server of the suite's own (``_raw_server``) streams without end: large status
updates that never finish the task, or artifact chunks appended forever. The events kept
(``keep_events=None`` keeps all that fit) add up to at most ``max_response_bytes``; the task
folded from appended chunks past it fails the stream with a typed error naming the limit, and
the connection is let go. tracemalloc shows the process holding a few times the limits while
tens of MiB go by.
"""

from __future__ import annotations

import itertools
import json
import tracemalloc
from typing import Any

import pytest

from a2a_anyio import (
    A2AClient,
    A2AProtocolError,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

from ._raw_server import Answer, RawServer, Request, sse

pytestmark = pytest.mark.anyio

EVENTS = {"Content-Type": "text/event-stream"}
TASK = {"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}
TEXT = "x" * (64 * 1024)
EVENT_LIMIT = 128 * 1024
RESPONSE_LIMIT = 512 * 1024


def working(text: str) -> dict[str, Any]:
    message = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": text}]}
    status = {"state": "TASK_STATE_WORKING", "message": message}
    return {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": status}}


def chunk(text: str) -> dict[str, Any]:
    artifact = {"artifactId": "a", "parts": [{"text": text}]}
    return {
        "artifactUpdate": {
            "taskId": "t-1",
            "contextId": "c-1",
            "artifact": artifact,
            "append": True,
        }
    }


def endless(result: dict[str, Any]) -> RawServer:
    """A server whose stream is a working task, then ``result`` over and over (the same bytes,
    so that the server itself allocates nothing as it goes)."""

    def answer(request: Request) -> Answer:
        again = sse(request, result)
        return Answer(itertools.chain([sse(request, TASK)], itertools.repeat(again)), EVENTS)

    return RawServer(answer)


def agent(url: str, **options: Any) -> A2AClient:
    return A2AClient(
        endpoint=url + "/rpc",
        protocol="1.0",
        max_event_bytes=EVENT_LIMIT,
        max_response_bytes=RESPONSE_LIMIT,
        **options,
    )


@pytest.mark.parametrize("keep", [None, 100])
async def test_an_endless_stream_of_large_events_keeps_memory_bounded(keep: int | None) -> None:
    server = endless(working(TEXT))
    async with server.serve() as url, agent(url, keep_events=keep) as client:
        tracemalloc.start()
        try:
            async with client.stream_message("hi") as stream:
                read = 0
                async for event in stream:
                    read += 1
                    if read == 400:  # 25 MiB of events
                        last = event
                        break
                kept = stream.events
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert isinstance(last, TaskStatusUpdateEvent) and last.status.message is not None
        assert last.status.message.text == TEXT
        assert stream.task is not None and stream.task.status.state is TaskState.WORKING
        assert 1 <= len(kept) <= RESPONSE_LIMIT // len(TEXT)  # within max_response_bytes
        assert peak < 6 * RESPONSE_LIMIT  # not the 25 MiB read
        await server.until_no_connection()


async def test_an_endless_artifact_append_is_refused_past_max_response_bytes() -> None:
    server = endless(chunk(TEXT))
    async with server.serve() as url, agent(url) as client:
        seen = 0
        tracemalloc.start()
        try:
            with pytest.raises(A2AProtocolError, match="max_response_bytes") as info:
                async with client.stream_message("hi") as stream:
                    async for event in stream:
                        seen += isinstance(event, TaskArtifactUpdateEvent)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert f"({RESPONSE_LIMIT} bytes of events)" in info.value.message
        assert seen == RESPONSE_LIMIT // len(json.dumps(chunk(TEXT)))  # the chunks that fit
        assert stream.task is not None
        assert len(stream.task.text) == (seen + 1) * len(TEXT)  # with the one past the limit
        assert peak < 6 * RESPONSE_LIMIT
        await server.until_no_connection()
