"""Servers nobody here wrote: each of their odd ways against a scripted server that has it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    InvalidParamsError,
    MethodNotFoundError,
    Task,
    TaskNotFoundError,
    TaskState,
    UnsupportedOperationError,
)

from ._support import BASE, RPC_URL, ScriptedBody, sse_response

pytestmark = pytest.mark.anyio

Handler = Callable[[httpx.Request], httpx.Response]


@asynccontextmanager
async def client_of(handle: Handler, **options: Any) -> AsyncIterator[A2AClient]:
    async def respond(request: httpx.Request) -> httpx.Response:
        return handle(request)

    options.setdefault("endpoint", RPC_URL)
    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(respond)) as http,
        A2AClient(http_client=http, **options) as client,
    ):
        yield client


def rpc_id(request: httpx.Request) -> Any:
    return json.loads(request.content)["id"]


def sse(*data: str) -> httpx.Response:
    """An event stream whose events carry ``data`` as they are (one chunk each)."""
    events = ["".join(f"data: {line}\n" for line in d.split("\n")) + "\n" for d in data]
    return sse_response(ScriptedBody([e.encode() for e in events]))


def v03_event(req_id: Any, result: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": req_id, "result": result})


# -- SSE data behind a record separator ---------------------------------------------------


async def test_a_record_separator_before_the_json_of_an_event_is_skipped() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        rid = rpc_id(request)
        task = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "working"}}
        chunk = {
            "kind": "artifact-update",
            "taskId": "t-1",
            "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "hi"}]},
        }
        done: dict[str, Any] = {"kind": "status-update", "taskId": "t-1", "final": True}
        done["status"] = {"state": "completed"}
        return sse(
            "\x1e" + v03_event(rid, task),
            "\x1e " + v03_event(rid, chunk),
            " \x1e\n" + v03_event(rid, done),
        )

    async with client_of(handle, protocol="0.3") as client, client.stream_message("x") as stream:
        events = [e async for e in stream]
    assert len(events) == 3
    assert stream.task is not None
    assert stream.task.status.state is TaskState.COMPLETED
    assert stream.task.artifacts[0].text == "hi"


# -- streams of whole tasks -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "shape"),
    [("0.3", {"contextId": "c-1"}), ("legacy", {"sessionId": "c-1"})],
)
async def test_a_stream_of_whole_tasks_folds_to_its_final_one(
    protocol: str, shape: dict[str, Any]
) -> None:
    """No kind, no final, no status events: the first interrupted task ends the stream,
    whatever the server does afterwards."""
    bodies: list[ScriptedBody] = []

    def handle(request: httpx.Request) -> httpx.Response:
        rid = rpc_id(request)
        art = [{"parts": [{"type": "text", "text": "so far"}]}]

        def task(state: str, **more: Any) -> str:
            return v03_event(rid, {"id": "t-1", **shape, "status": {"state": state}, **more})

        body = ScriptedBody(
            [
                f"data: {task('submitted')}\n\n".encode(),
                f"data: {task('working')}\n\n".encode(),
                f"data: {task('input-required', artifacts=art)}\n\n".encode(),
            ],
            hang=True,  # the server keeps the connection open
        )
        bodies.append(body)
        return sse_response(body)

    async with client_of(handle, protocol=protocol) as client, client.stream_message("x") as stream:
        events = [e async for e in stream]
    assert [type(e) for e in events] == [Task, Task, Task]
    assert stream.task is not None
    assert stream.task.status.state is TaskState.INPUT_REQUIRED
    assert stream.task.artifacts[0].text == "so far"
    assert bodies[0].closed


# -- JSON-RPC errors whatever the HTTP status --------------------------------------------------


@pytest.mark.parametrize("status", [200, 400, 404, 500])
@pytest.mark.parametrize("with_id", [True, False])
async def test_a_jsonrpc_error_is_typed_whatever_the_status(status: int, with_id: bool) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "error": {"code": -32001, "message": "gone"}}
        if with_id:
            body["id"] = rpc_id(request)
        return httpx.Response(status, json=body)

    async with client_of(handle, protocol="0.3") as client:
        with pytest.raises(TaskNotFoundError) as got:
            await client.get_task("t-9")
        assert got.value.task_id == "t-9"
        with pytest.raises(TaskNotFoundError):  # the plain answer to a stream, too
            async with client.subscribe("t-9") as stream:
                await stream.result()


@pytest.mark.parametrize("status", [400, 500])
async def test_an_error_object_without_envelope_is_typed(status: int) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json={"error": {"code": -32601, "message": "no such"}})

    async with client_of(handle, protocol="0.3") as client:
        with pytest.raises(MethodNotFoundError):
            await client.get_task("t-1")


@pytest.mark.parametrize("status", [200, 400, 500])
async def test_rest_answers_carrying_a_jsonrpc_error_are_typed(status: int) -> None:
    card = {
        "name": "rest",
        "supportedInterfaces": [
            {"url": BASE + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
        ],
    }

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("agent-card.json"):
            return httpx.Response(200, json=card)
        error = {"code": -32602, "message": "bad id"}
        return httpx.Response(status, json={"jsonrpc": "2.0", "id": None, "error": error})

    async with client_of(handle, endpoint=None, url=BASE) as client:
        with pytest.raises(InvalidParamsError, match="bad id"):
            await client.get_task("t-1")
        with pytest.raises(InvalidParamsError):
            async with client.subscribe("t-1") as stream:
                await stream.result()


async def test_a_rest_error_event_carrying_a_jsonrpc_error_is_typed() -> None:
    card = {
        "name": "rest",
        "supportedInterfaces": [
            {"url": BASE + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
        ],
    }

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("agent-card.json"):
            return httpx.Response(200, json=card)
        error = {"code": -32004, "message": "not now"}
        return sse(json.dumps({"jsonrpc": "2.0", "error": error}))

    async with client_of(handle, endpoint=None, url=BASE) as client:
        with pytest.raises(UnsupportedOperationError, match="not now"):
            async with client.stream_message("x") as stream:
                await stream.result()
