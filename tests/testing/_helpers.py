"""Helpers of the testing-kit tests: connecting to a FakeAgent, raw JSON-RPC and SSE calls,
and scrubbing volatile values (ids, timestamps) so that wire shapes compare exactly."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx

from a2a_anyio import A2AClient, Task
from a2a_anyio.testing import FakeAgent, SkillContext, status
from a2a_anyio.testing._skills import Emit

V1 = {"A2A-Version": "1.0"}
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def v1_message(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def v03_message(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": "m1",
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        **extra,
    }


def v03_rest_message(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": text}], **extra}


def legacy_message(text: str = "hi") -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "text": text}]}


def scrub(value: Any) -> Any:
    """``value`` with server-made UUIDs as "<id>" and timestamps as "<ts>"."""
    if isinstance(value, dict):
        return {k: scrub(x) for k, x in value.items()}
    if isinstance(value, list):
        return [scrub(x) for x in value]
    if isinstance(value, str):
        if UUID.match(value):
            return "<id>"
        if STAMP.match(value):
            return "<ts>"
    return value


@asynccontextmanager
async def connect(agent: FakeAgent, mode: str) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client reaching ``agent``: over 127.0.0.1 ("served") or in-process."""
    if mode == "served":
        async with agent.serve(), httpx.AsyncClient(timeout=10) as http:
            yield http
    else:
        async with httpx.AsyncClient(transport=agent.transport(), timeout=10) as http:
            yield http


def rpc_body(method: str, params: Any = None, req_id: Any = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id, "method": method}
    if params is not None:
        body["params"] = params
    return body


async def rpc(
    http: httpx.AsyncClient,
    url: str,
    method: str,
    params: Any = None,
    *,
    headers: dict[str, str] | None = None,
    req_id: Any = 1,
) -> dict[str, Any]:
    """A JSON-RPC call; the whole response object."""
    response = await http.post(url, json=rpc_body(method, params, req_id), headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    value = response.json()
    assert isinstance(value, dict)
    return value


def sse_payloads(text: str) -> list[Any]:
    """The JSON payloads of an event stream."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = [ln[5:].lstrip(" ") for ln in block.split("\n") if ln.startswith("data:")]
        if lines:
            out.append(json.loads("\n".join(lines)))
    return out


async def read_sse(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    json_body: Any = None,
    headers: dict[str, str] | None = None,
) -> list[Any]:
    """Open an event stream and read it to its end; its payloads."""
    request_headers = {"Accept": "text/event-stream", **(headers or {})}
    async with http.stream(method, url, json=json_body, headers=request_headers) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        text = (await response.aread()).decode()
    return sse_payloads(text)


async def rpc_stream(
    http: httpx.AsyncClient,
    url: str,
    method: str,
    params: Any,
    *,
    headers: dict[str, str] | None = None,
) -> list[Any]:
    """A streaming JSON-RPC call read to its end: the ``result`` of each event."""
    events = await read_sse(http, "POST", url, json_body=rpc_body(method, params), headers=headers)
    for event in events:
        assert event["jsonrpc"] == "2.0"
        assert event["id"] == 1
    return [e.get("result", e.get("error")) for e in events]


class Gate:
    """A skill that works until the test opens the gate, then completes with an artifact."""

    def __init__(self) -> None:
        self.opened = anyio.Event()
        self.started = anyio.Event()

    async def skill(self, ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working", "waiting")
        self.started.set()
        await self.opened.wait()
        yield status("completed", "done")

    def open(self) -> None:
        self.opened.set()


async def wait_until(predicate: Any, timeout: float = 5.0) -> None:
    """Poll ``predicate()`` until it is true."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.01)


@asynccontextmanager
async def client_for(agent: FakeAgent, mode: str, **kwargs: Any) -> AsyncIterator[A2AClient]:
    """An A2AClient of ``agent``: over 127.0.0.1 ("served") or through its in-process transport."""
    if mode == "served":
        async with agent.serve(), A2AClient(agent.url, **kwargs) as client:
            yield client
    else:
        async with (
            httpx.AsyncClient(transport=agent.transport()) as http,
            A2AClient(agent.url, http_client=http, **kwargs) as client,
        ):
            yield client


async def send_task(client: A2AClient, message: str, **kwargs: Any) -> Task:
    """``client.send_message`` for a call that must answer a Task."""
    result = await client.send_message(message, **kwargs)
    assert isinstance(result, Task), result
    return result
