"""The legacy tasks/send dialect, v0.2, REST over MockTransport, detection and extensions."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    AgentPool,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TextPart,
)
from a2a_anyio._bindings import codec_for
from a2a_anyio._bindings.rest import LAYOUTS, rest_error
from a2a_anyio._dialects import Cancel, Op, PushCreate, TaskRef
from a2a_anyio._dialects.legacy import LEGACY
from a2a_anyio._dialects.v1 import V1
from a2a_anyio._errors import (
    A2AClientError,
    A2AHTTPError,
    TaskNotCancelableError,
    TaskNotFoundError,
)

from ._support import BASE, FakeAgent
from .test_stream import StreamingAgent

pytestmark = pytest.mark.anyio

LEGACY_CARD = {
    "name": "Joke Agent",
    "description": "Tells jokes",
    "url": BASE + "/a2a",
    "version": "1.0.0",
    "capabilities": {"streaming": True},
    "authentication": {"schemes": ["Bearer"]},
    "skills": [{"id": "jokes", "name": "Jokes"}],
}


def legacy_task(task_id: str, session: str, state: str = "completed") -> dict[str, Any]:
    return {
        "id": task_id,
        "sessionId": session,
        "status": {"state": state},
        "artifacts": [{"name": "joke", "index": 0, "parts": [{"type": "text", "text": "ha"}]}],
    }


class LegacyAgent(StreamingAgent):
    """Serves the legacy card at agent.json only, and tasks/* methods."""

    def __init__(self) -> None:
        super().__init__()
        self.results["tasks/send"] = lambda p: legacy_task(p["id"], p["sessionId"])

    async def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            self.requests.append(request)
            if request.url.path == "/.well-known/agent.json":
                return httpx.Response(200, json=LEGACY_CARD)
            return httpx.Response(404)
        return await super().handle(request)


def client_for(agent: FakeAgent, **options: Any) -> A2AClient:
    return A2AClient(BASE, http_client=httpx.AsyncClient(transport=agent.transport()), **options)


async def test_legacy_send_chooses_the_task_id_and_maps_the_session() -> None:
    agent = LegacyAgent()
    async with client_for(agent) as client:
        task = await client.send_message(Message.user("joke please", context_id="s-1"))
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.context_id == "s-1"
    assert task.artifacts[0].text == "ha"
    [call] = agent.calls
    assert call["method"] == "tasks/send"
    params = call["params"]
    assert params["sessionId"] == "s-1"
    assert params["id"] == task.id  # the client named the task
    assert params["message"] == {"role": "user", "parts": [{"type": "text", "text": "joke please"}]}
    assert "A2A-Version" not in agent.rpc_requests[0].headers


async def test_legacy_stream_folds_artifacts_by_index() -> None:
    agent = LegacyAgent()

    def events(req_id: Any) -> list[Any]:
        return [
            {"id": "t", "status": {"state": "working"}, "final": False},
            {"id": "t", "artifact": {"index": 0, "parts": [{"type": "text", "text": "why "}]}},
            {"id": "t", "artifact": {"index": 0, "append": True, "lastChunk": True, "parts": [{"type": "text", "text": "not?"}]}},
            {"id": "t", "status": {"state": "completed"}, "final": True},
        ]  # fmt: skip

    agent.stream("tasks/sendSubscribe", events)
    async with client_for(agent) as client, client.stream_message("x") as stream:
        seen = [e async for e in stream]
    assert isinstance(seen[2], TaskArtifactUpdateEvent) and seen[2].last_chunk
    assert stream.task is not None
    assert stream.task.text == "why not?"
    assert stream.task.status.state is TaskState.COMPLETED


async def test_a_versionless_card_guessed_wrong_falls_back_and_is_remembered() -> None:
    agent = LegacyAgent()
    card = {**LEGACY_CARD, "securitySchemes": {"b": {"type": "http", "scheme": "bearer"}}}
    del card["authentication"]  # now it looks like an early v0.2 card

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=card)
        return await agent.handle(request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    async with AgentPool(http_client=http) as pool:
        async with pool.client(BASE) as client:
            task = await client.send_message("hi")
            assert isinstance(task, Task)
            assert [c["method"] for c in agent.calls] == ["message/send", "tasks/send"]
            await client.send_message("hi")  # learned: straight to tasks/send
            assert len(agent.calls) == 3
        async with pool.client(BASE) as again:  # a new client of the pool knows it too
            assert again is not client
            await again.send_message("hi")
        assert [c["method"] for c in agent.calls][-1] == "tasks/send"
        assert len(agent.calls) == 4
    async with A2AClient(BASE, http_client=http) as alone:  # learning is not process-wide
        await alone.send_message("hi")
    assert [c["method"] for c in agent.calls][-2:] == ["message/send", "tasks/send"]


async def test_extensions_headers_per_version() -> None:
    agent = FakeAgent(None)
    agent.results["message/send"] = {"kind": "message", "role": "agent", "messageId": "m", "parts": [{"kind": "text", "text": "ok"}]}  # fmt: skip
    agent.results["SendMessage"] = {"message": {"role": "ROLE_AGENT", "messageId": "m", "parts": [{"text": "ok"}]}}  # fmt: skip
    uris = ["https://x.example/ext/a", "https://x.example/ext/b"]
    for protocol, both in (("1.0", False), ("0.3", True)):
        http = httpx.AsyncClient(transport=agent.transport())
        async with A2AClient(endpoint=BASE + "/rpc", protocol=protocol, extensions=uris, http_client=http) as client:  # fmt: skip
            await client.send_message("x")
        headers = agent.rpc_requests[-1].headers
        assert headers["A2A-Extensions"] == ",".join(uris)
        assert ("X-A2A-Extensions" in headers) is both


async def test_tenant_goes_into_params_and_paths() -> None:
    agent = FakeAgent(None)
    agent.results["GetTask"] = {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}
    http = httpx.AsyncClient(transport=agent.transport())
    async with A2AClient(
        endpoint=BASE + "/rpc", protocol="1.0", tenant="acme", http_client=http
    ) as c:
        await c.get_task("t")
    assert agent.calls[-1]["params"] == {"id": "t", "tenant": "acme"}
    req = codec_for("rest", "1.0", BASE, tenant="acme").encode(Op.GET, TaskRef("t/1"))
    assert (req.method, req.url) == ("GET", BASE + "/acme/tasks/t%2F1")
    cancel = codec_for("rest", "0.3", BASE).encode(Op.CANCEL, Cancel("t"))
    assert (cancel.url, cancel.body) == (BASE + "/v1/tasks/t:cancel", b"{}")


def test_rest_errors_dispatch_on_the_reason_then_the_status() -> None:
    body = b'{"error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "done", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_CANCELABLE"}]}}'

    def error(status: int, body: bytes) -> A2AClientError:
        return rest_error(status, body, layout=LAYOUTS["1.0"], codes=V1.errors)

    assert isinstance(error(400, body), TaskNotCancelableError)
    named = error(404, b'{"type": "TaskNotFoundError", "message": "no"}')
    assert isinstance(named, TaskNotFoundError)
    plain = error(404, b"<html>not found</html>")
    assert isinstance(plain, A2AHTTPError) and plain.status_code == 404


def test_legacy_dialect_round_trip() -> None:
    d = LEGACY
    msg = d.decode_message(d.encode_message(Message.user("hi")))
    assert msg.parts == [TextPart("hi")]
    assert not d.has(Op.LIST)


def test_legacy_push_config_shapes() -> None:
    d = LEGACY
    config = d.decode(
        Op.PUSH_GET,
        {"id": "t-1", "pushNotificationConfig": {"url": "https://hook.example", "token": "k"}},
    )
    assert (config.task_id, config.url, config.token, config.id) == (
        "t-1",
        "https://hook.example",
        "k",
        None,
    )
    params = d.write(Op.PUSH_CREATE, PushCreate(config))
    assert params == {
        "id": "t-1",
        "pushNotificationConfig": {"url": "https://hook.example", "token": "k"},
    }
