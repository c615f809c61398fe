"""Servers nobody here wrote: each of their odd ways against a scripted server that has it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2AClientError,
    A2AHTTPError,
    A2AServerError,
    AgentPool,
    InvalidParamsError,
    Message,
    MethodNotFoundError,
    RetryPolicy,
    Task,
    TaskNotFoundError,
    TaskState,
    UnsupportedOperationError,
)
from a2a_anyio._bindings import codec_for
from a2a_anyio._dialects import Op, Send, TaskRef
from a2a_anyio._dialects.card import parse_card
from a2a_anyio.testing import FakeAgent

from ._support import BASE, RPC_URL, ScriptedBody, on_mock_clock, sse_response

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
async def test_the_v02_extended_card_get_carrying_a_jsonrpc_error_is_typed(status: int) -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/agent/authenticatedExtendedCard"
        error = {"code": -32007, "message": "none here"}
        return httpx.Response(status, json={"jsonrpc": "2.0", "id": None, "error": error})

    async with client_of(handle, protocol="0.2") as client:
        with pytest.raises(A2AServerError, match="none here") as info:  # -32007: not in v0.2
            await client.get_extended_card()
    assert info.value.code == -32007


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


# -- python-a2a: tasks/send routed by path, under a card that says v0.3 JSON-RPC -----------------

PYA2A_CARD = {
    "name": "py",
    "url": BASE,
    "protocolVersion": "0.3.0",
    "preferredTransport": "JSONRPC",
    "capabilities": {"streaming": True, "google_a2a_compatible": True},
}


class PythonA2A:
    """Answers as python-a2a's server does (recorded from python-a2a 0.5.10)."""

    def __init__(self, card: dict[str, Any] | None = PYA2A_CARD) -> None:
        self.card = card
        self.seen: list[str] = []
        self.tasks: dict[str, dict[str, Any]] = {}

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        self.seen.append(f"{request.method} {path}")
        if request.method == "GET":
            if path.endswith("agent-card.json") and self.card is not None:
                return httpx.Response(200, json=self.card)
            return httpx.Response(404)
        body = json.loads(request.content)
        params, rid = body.get("params") or {}, body.get("id")
        if path in ("/a2a/tasks/send", "/a2a/tasks/stream"):
            task = {
                "id": params["id"],
                "sessionId": params.get("sessionId"),
                "status": {"state": "completed"},
                "artifacts": [{"parts": [{"type": "text", "text": "done"}]}],
            }
            self.tasks[task["id"]] = task
            if path.endswith("stream"):
                first = {**task, "status": {"state": "submitted"}, "artifacts": []}
                return sse(json.dumps(first), json.dumps(task))
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": rid, "result": task})
        if path == "/a2a/tasks/get":
            if params.get("id") not in self.tasks:
                error = {"code": -32000, "message": f"Task not found: {params.get('id')}"}
                return httpx.Response(404, json={"jsonrpc": "2.0", "id": rid, "error": error})
            return httpx.Response(
                200, json={"jsonrpc": "2.0", "id": rid, "result": self.tasks[params["id"]]}
            )
        refusal = {"error": "Error processing message: Unknown content type: None"}
        return httpx.Response(
            500, json={"parts": [{"data": refusal, "type": "data"}], "role": "agent"}
        )


@pytest.mark.parametrize(
    ("url", "root"),
    [(BASE, BASE), (BASE + "/", BASE), (BASE + "/a2a", BASE), (BASE + "/x/a2a/", BASE + "/x")],
)
def test_python_a2a_paths_hang_off_the_root_of_the_cards_url(url: str, root: str) -> None:
    card = parse_card({**PYA2A_CARD, "url": url})
    [iface] = card.interfaces
    assert (iface.binding, iface.protocol_version) == ("JSONRPC", "python-a2a")
    codec = codec_for("JSONRPC", "python-a2a", url)
    assert codec.encode(Op.GET, TaskRef("t-1")).url == root + "/a2a/tasks/get"
    assert codec.encode(Op.STREAM, Send(Message.user("x"))).url == root + "/a2a/tasks/stream"


async def test_python_a2a_by_its_card_one_request_each() -> None:
    agent = PythonA2A()
    async with client_of(agent.handle, endpoint=None, url=BASE) as client:
        task = await client.send_message("hi")
        assert isinstance(task, Task) and task.text == "done"
        with pytest.raises(TaskNotFoundError):
            await client.get_task("nope")
        streamed = await client.stream_message("hi").result()
        assert isinstance(streamed, Task) and streamed.status.state is TaskState.COMPLETED
    assert agent.seen == [
        "GET /.well-known/agent-card.json",
        "POST /a2a/tasks/send",
        "POST /a2a/tasks/get",
        "POST /a2a/tasks/stream",
    ]


async def test_python_a2a_by_its_first_answer_learned_for_the_pool() -> None:
    agent = PythonA2A(card=None)

    async def respond(request: httpx.Request) -> httpx.Response:
        return agent.handle(request)

    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(respond)) as http,
        AgentPool(http_client=http, endpoint=RPC_URL) as pool,
    ):
        first = await pool.client(RPC_URL).send_message("hi")
        assert isinstance(first, Task)
        other = pool.client(RPC_URL)
        await other.aclose()  # a new client for the same URL: it knows already
        again = await pool.client(RPC_URL).send_message("hi")
        assert isinstance(again, Task)
    assert agent.seen == ["POST /a2a", "POST /a2a/tasks/send", "POST /a2a/tasks/send"]


async def test_an_answer_from_another_wire_is_followed_only_when_it_says_so() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"role": "agent", "parts": [{"text": "no type"}]})

    async with client_of(handle, protocol="0.3") as client:
        with pytest.raises(A2AHTTPError) as info:
            await client.get_task("t-1")
    assert info.value.status_code == 500 and info.value.speaks is None


# -- a REST interface URL that ends in the version segment ----------------------------------


@pytest.mark.parametrize("first", ["send", "stream"])
async def test_a_rest_url_ending_in_v1_is_tried_once_without_it_then_kept(first: str) -> None:
    """The card names ``.../rest/v1``; the v0.3 paths add ``/v1`` again: that 404s, the
    other form works, and it is what the client (and its pool) uses from then on."""
    agent = FakeAgent(dialect="0.3", binding="rest", card={"url": "http://agent.test/rest/v1"})
    async with (
        httpx.AsyncClient(transport=agent.transport()) as http,
        AgentPool(http_client=http) as pool,
    ):
        client = pool.client(agent.url)
        if first == "send":
            result = await client.send_message("hi")
        else:
            result = await client.stream_message("hi").result()
        assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
        await client.get_task(result.id)
        await client.aclose()
        again = await pool.client(agent.url).get_task(result.id)  # a new client, same pool
        assert again.id == result.id
    paths = [r.path for r in agent.requests if r.op != "card"]
    action = "message:send" if first == "send" else "message:stream"
    assert paths == [
        f"/rest/v1/v1/{action}",  # as the card says: 404
        f"/rest/v1/{action}",
        f"/rest/v1/tasks/{result.id}",
        f"/rest/v1/tasks/{result.id}",
    ]


# -- cards without a version: the rest of the card says which dialect ---------------------------


@asynccontextmanager
async def with_card(
    agent: FakeAgent, card: dict[str, Any], card_path: str, **options: Any
) -> AsyncIterator[A2AClient]:
    """A client of ``agent`` whose card (``card``, at ``card_path``) is served instead of its
    own, the client given the card's URL."""
    inner = agent.transport()

    async def respond(request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path == card_path:
            return httpx.Response(200, json=card)
        return await inner.handle_async_request(request)

    async with (
        agent,
        httpx.AsyncClient(transport=httpx.MockTransport(respond)) as http,
        A2AClient(agent.url + card_path, http_client=http, **options) as client,
    ):
        yield client


async def test_a_versionless_card_with_v02_members_speaks_v02_at_once() -> None:
    """``url`` + ``preferredTransport`` and no ``protocolVersion``; an ``authentication``
    object besides (of the tasks/send era): v0.2 members win, the first call is right."""
    agent = FakeAgent(dialect="0.2")
    card = {
        "name": "early",
        "url": agent.url + agent.rpc_path,
        "preferredTransport": "JSONRPC",
        "authentication": {"schemes": []},
        "capabilities": {"streaming": True},
    }
    async with with_card(agent, card, "/.well-known/agent.json") as client:
        task = await client.send_message("hi")
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert [r.rpc_method for r in agent.requests if r.op != "card"] == ["message/send"]


@pytest.mark.parametrize(
    ("card_path", "expected"),
    [
        ("/agents/joke/agent-card.json", ["agent/getAuthenticatedExtendedCard"]),
        ("/agents/joke/agent.json", [None]),  # v0.2's plain GET of the extended card
    ],
)
async def test_a_versionless_card_given_by_its_path_is_read_by_its_name(
    card_path: str, expected: list[str | None]
) -> None:
    """A card named as v0.3 names it, at a path of its own given as the client's URL, with
    nothing else to tell: v0.3 (its extended card is a JSON-RPC method, not a plain GET)."""
    agent = FakeAgent(dialect="0.3", extended_card={"skills": []})
    card = {
        "name": "bare",
        "url": agent.url + agent.rpc_path,
        "capabilities": {"extendedAgentCard": True},
    }
    async with with_card(agent, card, card_path) as client:
        with contextlib.suppress(A2AHTTPError):
            await client.get_extended_card()
    assert [r.rpc_method for r in agent.requests] == expected


# -- errors name the endpoint they came from, on every path ------------------------------------

ENDPOINT = BASE + "/agents/a2a"  # what the card names: not the card's URL


def _card_then(handle: Handler) -> Handler:
    card = {
        "name": "named",
        "supportedInterfaces": [
            {"url": ENDPOINT, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": True},
    }

    def respond(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=card)
        return handle(request)

    return respond


def _working(request: httpx.Request) -> httpx.Response:
    task = {"id": "t-1", "status": {"state": "TASK_STATE_WORKING"}}
    body = json.loads(request.content)
    if body["method"] == "SendStreamingMessage":
        return sse_response(
            ScriptedBody([f"data: {v03_event(body['id'], {'task': task})}\n\n".encode()], hang=True)
        )
    return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": task})


def _failing(request: httpx.Request) -> httpx.Response:
    return httpx.Response(503, text="down")


async def _stream(client: A2AClient) -> Any:
    return await client.stream_message("x").result()


async def _subscribe(client: A2AClient) -> Any:
    return await client.subscribe("t-1").result()


CASES: dict[str, tuple[Handler, Callable[[A2AClient], Any], dict[str, Any]]] = {
    "send, an HTTP error": (_failing, lambda c: c.send_message("x"), {}),
    "get, a JSON-RPC error": (
        lambda r: httpx.Response(
            404, json={"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "no"}}
        ),
        lambda c: c.get_task("t-1"),
        {},
    ),
    "stream, a plain answer": (_failing, _stream, {}),
    "subscribe, a plain answer": (_failing, _subscribe, {}),
    "stream, an idle limit": (_working, _stream, {"idle_timeout": 5}),
    "get, the deadline": (_working, lambda c: c.get_task("t-1"), {"timeout": 5, "hang": True}),
    "send, the deadline": (_working, lambda c: c.send_message("x"), {"timeout": 5, "hang": True}),
    "wait, its timeout": (_working, lambda c: c.wait("t-1", timeout=5), {}),
}


@on_mock_clock()
@pytest.mark.parametrize("case", sorted(CASES))
async def test_errors_name_the_endpoint_not_the_card(case: str) -> None:
    handle, run, given = CASES[case]
    respond = _card_then(handle)
    options = dict(given)
    hang = options.pop("hang", False)

    async def serve(request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and hang:
            await anyio.sleep_forever()
        return respond(request)

    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(serve)) as http,
        A2AClient(BASE, http_client=http, retry=RetryPolicy(1), **options) as client,
    ):
        with pytest.raises(A2AClientError) as info:
            await run(client)
    err = info.value
    assert err.agent == ENDPOINT, err
    if case.endswith("the deadline"):  # what was in flight: the request, named as sent
        assert (err.method, err.request_id) == (
            ("SendMessage", 1) if case.startswith("send") else ("GetTask", 1)
        )


# -- framework servers' habits -----------------------------------------------------------------


def _rpc(req_id: Any, result: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": req_id, "result": result})


V1_TASK = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}


async def test_a_v1_stream_whose_later_events_come_v03_shaped_folds_as_any_other() -> None:
    # A v1.0 server's first event is v1.0; later ones come as v0.3 shapes them, with v1.0 enums.
    def handle(request: httpx.Request) -> httpx.Response:
        rid = rpc_id(request)
        update = {"kind": "status-update", "taskId": "t-1", "contextId": "c-1"}
        chunk = {
            "kind": "artifact-update",
            "taskId": "t-1",
            "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "hi"}]},
        }
        return sse(
            _rpc(rid, {"task": V1_TASK}),
            _rpc(rid, {**update, "status": {"state": "TASK_STATE_WORKING"}, "final": False}),
            _rpc(rid, chunk),
            _rpc(rid, {**update, "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}),
            _rpc(rid, {**update, "status": {"state": "TASK_STATE_COMPLETED"}}),  # not read
        )

    async with client_of(handle, protocol="1.0") as client, client.stream_message("x") as stream:
        events = [event async for event in stream]
    assert len(events) == 4  # the interrupted state ends it, as a v1.0 event would
    assert stream.task is not None and stream.task.state is TaskState.INPUT_REQUIRED
    assert stream.task.text == "hi"


async def test_a_v1_send_answered_v03_shaped_is_read() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        task = {"kind": "task", "id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}}
        return httpx.Response(200, text=_rpc(rpc_id(request), task))

    async with client_of(handle, protocol="1.0") as client:
        task = await client.send_message("x")
    assert isinstance(task, Task) and task.state is TaskState.COMPLETED


async def test_messages_streamed_inside_a_tasks_stream_do_not_end_it() -> None:
    # Every token a bare Message, between the task's status events, then its final status.
    def handle(request: httpx.Request) -> httpx.Response:
        rid = rpc_id(request)
        tokens = [
            {
                "message": {
                    "messageId": f"m{i}",
                    "role": "ROLE_AGENT",
                    "taskId": "t-1",
                    "parts": [{"text": text}],
                }
            }
            for i, text in enumerate(["to", "ken"])
        ]
        final = {"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}}}
        return sse(*(_rpc(rid, x) for x in [{"task": V1_TASK}, *tokens, final]))

    async with client_of(handle, protocol="1.0") as client, client.stream_message("x") as stream:
        events = [event async for event in stream]
        result = await stream.result()
    assert [type(e).__name__ for e in events] == [
        "Task",
        "Message",
        "Message",
        "TaskStatusUpdateEvent",
    ]
    assert stream.message is None
    assert isinstance(result, Task) and result.state is TaskState.COMPLETED


async def test_a_stream_that_says_it_ends_short_of_a_final_state_is_followed_up() -> None:
    # A v0.3 server flags a working update as final and closes: not the end of the task.
    calls: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        rid, method = rpc_id(request), json.loads(request.content)["method"]
        calls.append(method)
        update = {"kind": "status-update", "taskId": "t-1", "contextId": "c-1"}
        if method == "message/stream":
            task = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "working"}}
            return sse(
                v03_event(rid, task),
                v03_event(rid, {**update, "status": {"state": "working"}, "final": True}),
            )
        done = {**update, "status": {"state": "completed"}, "final": True}
        return sse(v03_event(rid, done))  # tasks/resubscribe

    async with client_of(handle, protocol="0.3") as client:
        result = await client.stream_message("x").result()
    assert calls == ["message/stream", "tasks/resubscribe"]
    assert isinstance(result, Task) and result.state is TaskState.COMPLETED


async def test_a_stream_left_unfinished_without_a_way_to_follow_up_is_an_error() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        rid = rpc_id(request)
        task = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "working"}}
        update = {"kind": "status-update", "taskId": "t-1", "status": {"state": "working"}}
        return sse(v03_event(rid, task), v03_event(rid, {**update, "final": True}))

    async with client_of(handle, protocol="0.3") as client:
        stream = client.stream_message("x", resume=False)
        with pytest.raises(A2AClientError, match="final state"):
            await stream.result()


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a_cancel_answered_with_nothing_reads_the_task(binding: str) -> None:
    seen: list[str] = []
    canceled = {"id": "t-1", "status": {"state": "TASK_STATE_CANCELED"}}
    iface = {"url": RPC_URL, "protocolBinding": binding, "protocolVersion": "1.0"}
    card = {"name": "a", "version": "1", "supportedInterfaces": [iface]}

    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.startswith("/.well-known/"):
            return httpx.Response(200, json=card)
        if binding == "HTTP+JSON":
            seen.append(f"{request.method} {path}")
            # The answer to the cancel has no body at all.
            if path.endswith(":cancel"):
                return httpx.Response(200)
            return httpx.Response(200, json=canceled)
        rid, method = rpc_id(request), json.loads(request.content)["method"]
        seen.append(method)
        return httpx.Response(200, text=_rpc(rid, None if method == "CancelTask" else canceled))

    async with client_of(handle, endpoint=None, url=BASE) as client:
        task = await client.cancel_task("t-1")
    assert task.state is TaskState.CANCELED
    assert seen in (["CancelTask", "GetTask"], ["POST /a2a/tasks/t-1:cancel", "GET /a2a/tasks/t-1"])


@pytest.mark.parametrize(
    ("given", "card_path"),
    [
        ("/.well-known/agent-7/agent-card.json", "/.well-known/agent-7/agent-card.json"),
        ("/a2a/agent-7/.well-known/agent-card.json", "/a2a/agent-7/.well-known/agent-card.json"),
        ("/a2a/agent-7", "/a2a/agent-7/.well-known/agent-card.json"),
    ],
)
async def test_one_of_several_agents_on_a_host_by_its_own_card_path(
    given: str, card_path: str
) -> None:
    seen: list[str] = []
    iface = {"url": BASE + "/a2a/agent-7", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    card = {"name": "agent-7", "version": "1", "supportedInterfaces": [iface]}
    done = {"id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}}

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if request.method == "GET":
            found = request.url.path == card_path
            return httpx.Response(200, json=card) if found else httpx.Response(404)
        return httpx.Response(200, text=_rpc(rpc_id(request), {"task": done}))

    async with client_of(handle, endpoint=None, url=BASE + given) as client:
        task = await client.send_message("x")
    assert isinstance(task, Task) and task.state is TaskState.COMPLETED
    assert seen == [f"GET {card_path}", "POST /a2a/agent-7"]
